/**
 * `inspect(agent)` over HTTP (node:http, loopback only): bad input gets a clear `InspectorError`,
 * the page's files are served, the chat answers with a UI message stream of a traced run, the runs
 * and their marble exports are readable, the live feed streams a run's events, and requests that
 * a hostile page could make (another Host, a non-JSON POST) are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { Agent } from 'rxagent';
import { inspect, InspectorError, type InspectorRunRecord, type InspectorServer } from 'rxagent/devtools';
import { scriptedModel } from 'rxagent/testing';
import { createDemoAgent } from '../../examples/inspector/demo-agent.js';

async function rejection(promise: Promise<unknown>): Promise<InspectorError> {
  try {
    await promise;
  } catch (error) {
    if (InspectorError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

const userMessage = (text: string) => ({ id: `u-${text.length}`, role: 'user', parts: [{ type: 'text', text }] });

function chat(server: InspectorServer, text: string): Promise<Response> {
  return fetch(new URL('/api/chat', server.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [userMessage(text)] }),
  });
}

/** The `data:` payloads of a server-sent event stream, parsed, until `until` says stop. */
async function readEvents(response: Response, until: (event: { type: string; data?: unknown }) => boolean): Promise<Array<{ type: string; data?: unknown }>> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: Array<{ type: string; data?: unknown }> = [];
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return events;
      buffer += value;
      let boundary: number;
      while ((boundary = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const data = block.split('\n').find((line) => line.startsWith('data: '))?.slice(6);
        if (data === undefined || data === '[DONE]') continue;
        const event = JSON.parse(data) as { type: string; data?: unknown };
        events.push(event);
        if (until(event)) return events;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

describe('inspect() refuses bad input', () => {
  const agent = new Agent({ id: 'a', model: scriptedModel({ rules: [] }) });

  it('names what it got instead of an agent', async () => {
    for (const [bad, named] of [
      [null, 'null'],
      ['support-agent', 'string support-agent'],
      [{ id: 'guard', processOutputStream: () => null }, 'an object with id "guard" (no stream$ method)'],
      [scriptedModel({ rules: [] }), 'an object (no stream$ method)'],
      [new Map(), 'a Map (no stream$ method)'],
    ] as const) {
      const error = await rejection(inspect(bad, { port: 0 }));
      expect(error.reason).toBe('not-an-agent');
      expect(error.message).toContain(named);
    }
  });

  it('names a bad port or cap', async () => {
    for (const port of [-1, 65_536, 1.5]) expect((await rejection(inspect(agent, { port }))).reason).toBe('invalid-option');
    expect((await rejection(inspect(agent, { port: 0, maxRuns: 0 }))).message).toContain('maxRuns');
  });

  it('says the port is in use, and how to pick another', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const error = await rejection(inspect(agent, { port }));
      expect(error.reason).toBe('port-in-use');
      expect(error.message).toBe(`inspect(): port ${port} on 127.0.0.1 is in use. Pass another port, or port: 0 for any free one.`);
    } finally {
      blocker.close();
    }
  });
});

describe('the inspector server', () => {
  let server: InspectorServer;

  beforeAll(async () => {
    server = await inspect(createDemoAgent({ wordDelayMs: 1 }), { port: 0, suggestions: ['Hello!'] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('serves the page and its files', async () => {
    const page = await fetch(server.url);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/inspector.js"></script>');
    for (const [path, type] of [
      ['/inspector.js', 'text/javascript'],
      ['/timeline.js', 'text/javascript'],
      ['/chat.js', 'text/javascript'],
      ['/inspector.css', 'text/css'],
    ]) {
      const response = await fetch(new URL(path!, server.url));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain(type);
    }
    expect(await (await fetch(new URL('/api/info', server.url))).json()).toEqual({ agentId: 'support-desk', agentName: 'Support desk (offline)', suggestions: ['Hello!'], journal: false });
    expect((await fetch(new URL('/nope', server.url))).status).toBe(404);
  });

  it('answers a chat with the UI message stream of a recorded run', async () => {
    const response = await chat(server, 'Where is order 123?');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const chunks = await readEvents(response, () => false);
    const types = chunks.map((chunk) => chunk.type);
    expect(types).toContain('tool-output-available');
    expect(types).toContain('text-delta');
    expect(types.at(-1)).toBe('finish');
    const runs = (await (await fetch(new URL('/api/runs', server.url))).json()) as Array<{ runId: string; title: string; status: string }>;
    const run = runs.find((candidate) => candidate.title === 'Where is order 123?')!;
    expect(run.status).toBe('finish');
    const record = (await (await fetch(new URL(`/api/runs/${run.runId}`, server.url))).json()) as InspectorRunRecord;
    expect(record.events.some((event) => event.type === 'judge')).toBe(true);
    const toolHook = record.events.find((event) => event.type === 'hook' && event.hook === 'processToolResult');
    expect(toolHook).toMatchObject({ processorId: 'regex-filter', outcome: 'rewrite', output: { id: '123', contact: '[EMAIL]' } });
    const marbles = (await (await fetch(new URL(`/api/runs/${run.runId}/marbles`, server.url))).json()) as { diagram: string; code: string };
    expect(marbles.code).toContain(`createChunkBuilders('${run.runId}')`);
    expect(marbles.diagram.endsWith('|)')).toBe(true);
  });

  it('streams a run live on /api/events, from run-start to run-end', async () => {
    const feed = await fetch(new URL('/api/events', server.url));
    expect(feed.headers.get('content-type')).toContain('text/event-stream');
    const reading = readEvents(feed, (event) => (event.data as { type?: string } | undefined)?.type === 'run-end');
    const answer = await chat(server, 'Can I get a refund?');
    await answer.text();
    const events = (await reading).map((event) => event.data as { type: string; runId?: string; attempt?: number });
    expect(events[0]?.type).toBe('hello');
    const live = events.slice(1);
    expect(live[0]?.type).toBe('run-start');
    expect(live.at(-1)?.type).toBe('run-end');
    expect(new Set(live.map((event) => event.runId)).size).toBe(1);
    expect(live.some((event) => event.attempt === 2)).toBe(true); // the curt draft was sent back
    const record = (await (await fetch(new URL(`/api/runs/${live[0]!.runId}`, server.url))).json()) as InspectorRunRecord;
    expect(record.events.length).toBe(live.length);
  });

  it('refuses other host names, non-JSON posts and bad bodies; unknown runs are 404', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL('/api/runs', server.url);
      request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: 'attacker.example' } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(403);
    const plain = await fetch(new URL('/api/chat', server.url), { method: 'POST', body: JSON.stringify({ messages: [userMessage('hi')] }) });
    expect(plain.status).toBe(415);
    const broken = await fetch(new URL('/api/chat', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"messages": 3}' });
    expect(broken.status).toBe(400);
    expect(await broken.text()).toContain('messages');
    const unknown = await fetch(new URL('/api/runs/run-nope/marbles', server.url));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'unknown-run' });
  });

  it('closes while a live feed is open', async () => {
    const other = await inspect(createDemoAgent(), { port: 0 });
    const feed = await fetch(new URL('/api/events', other.url));
    const seen: string[] = [];
    const reading = readEvents(feed, (event) => {
      seen.push((event.data as { type: string }).type);
      return false;
    }).catch(() => undefined);
    await expect.poll(() => seen).toEqual(['hello']);
    await other.close();
    await reading; // the stream ends (or errors) instead of hanging
  });
});
