/**
 * examples/nestjs: the real Nest app (Express platform) on an ephemeral 127.0.0.1 port, its
 * `@Sse()` endpoint read over HTTP. The agent runs on the real `@ai-sdk/openai` provider replaying
 * a recorded stream, so a client disconnect can be checked against the provider request itself.
 */
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { startNestApp } from '../../examples/nestjs/main.js';
import { recording, replayAgent, shortRecording, textOf } from './support/replay-agent.js';

/** Parses an SSE body into `{ event, id, data }` records. */
function parseSse(text: string): Array<{ event: string; id: string; data: unknown }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const field = (name: string) => block.split('\n').find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2) ?? '';
      return { event: field('event'), id: field('id'), data: JSON.parse(field('data') || 'null') as unknown };
    });
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('NestJS @Sse() endpoint returning agent.stream$()', () => {
  it('streams the whole run as server-sent events, one MessageEvent per chunk', async () => {
    const { agent, replay, fates } = replayAgent(shortRecording, 0);
    app = await startNestApp(agent, { port: 0, host: '127.0.0.1' });
    const url = await app.getUrl();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const response = await fetch(`${url}/agent/stream?q=${encodeURIComponent('Name a holiday')}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await response.text());

    expect(events[0]?.event).toBe('start');
    expect(events.at(-1)?.event).toBe('finish');
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => String(index)));
    const text = events
      .filter((event) => event.event === 'text-delta')
      .map((event) => (event.data as { text: string }).text)
      .join('');
    expect(text).toBe(textOf(shortRecording));
    // the question reached the provider
    expect(JSON.stringify(replay.requests[0]?.body)).toContain('Name a holiday');
    expect(fates).toEqual([{ bodyRead: true, abortedEarly: false }]);
  });

  it('a client that disconnects aborts the provider request', async () => {
    const { agent, replay, fates } = replayAgent(recording, 5); // ~300 events at 5 ms: still streaming when we leave
    app = await startNestApp(agent, { port: 0, host: '127.0.0.1' });
    const client = new AbortController();
    const response = await fetch(`${await app.getUrl()}/agent/stream?q=hi`, { signal: client.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let received = '';
    while ((received.match(/event: text-delta/g) ?? []).length < 3) received += decoder.decode((await reader.read()).value, { stream: true });
    client.abort();

    const started = Date.now();
    while (replay.requests[0]?.signal?.aborted !== true && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(replay.requests[0]?.signal?.aborted).toBe(true);
    expect(fates).toEqual([{ bodyRead: false, abortedEarly: true }]); // cut off mid-reply, not after it
    expect(received).not.toContain('event: finish');
  });

  it('runs the same controller from a CommonJS project (require(esm) of Nest 12 and rxagent)', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'examples/nestjs/cjs/main.ts'],
      { env: { ...process.env, ONE_REQUEST: '1', PORT: '0', WORD_DELAY_MS: '0', TSX_TSCONFIG_PATH: 'examples/nestjs/cjs/tsconfig.json' }, timeout: 60_000 },
    );
    expect(stdout).toContain('module system: commonjs');
    const events = parseSse(stdout.slice(stdout.indexOf('event: start')));
    expect(events[0]?.event).toBe('start');
    expect(events.at(-1)?.event).toBe('finish');
    const text = events
      .filter((event) => event.event === 'text-delta')
      .map((event) => (event.data as { text: string }).text)
      .join('');
    expect(text).toBe('You asked: hello. Here is a streamed answer.');
  }, 90_000); // a child process that compiles the sources first
});
