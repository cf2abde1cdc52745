/**
 * useChat's stop on a durable run stops the run itself: DurableChatTransport, when the signal
 * `useChat` passes (to `sendMessages`, and to `reconnectToStream` for a resumed stream) aborts
 * before `[DONE]`, POSTs the stop endpoint with the run's id and signed token; the endpoint (as
 * docs/durable.md shows it, behind the readers' authorization) records the stop for the run's
 * owner. Against a real HTTP server (node:http on 127.0.0.1) and a live journaled run.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { UIMessage } from 'ai';
import { firstValueFrom, take, timeout, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableChatTransport, resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
import { InMemoryRunJournal, RUN_TOKEN_HEADER, RunNotFoundError, createRunToken, runTokenAuthorization } from 'rxagent/durable';
import { authorizedRun } from '../../src/storage/index.js';
import { delta, start } from '../storage/journal-suite.js';

const secret = 'stop-test-secret-of-at-least-32-bytes!!';
const authorize = runTokenAuthorization({ secret });

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
  server = undefined;
});

function webRequest(request: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value);
  return new Request(new URL(request.url ?? '/', 'http://localhost'), { method: request.method ?? 'GET', headers });
}

/** The chat routes over `journal` (run `run-1` of `alice`, still running): stream, resume, stop. */
async function serve(journal: InMemoryRunJournal) {
  const stops: Array<{ status: number; runId: string | undefined; token: boolean }> = [];
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const runId = (request.headers['x-rxagent-run-id'] as string | undefined) ?? 'run-1';
      let web: Response;
      if (request.method === 'POST' && url.pathname === '/api/chat') {
        const headers = { [RUN_TOKEN_HEADER]: createRunToken({ runId: 'run-1', resourceId: 'alice', expiresInSeconds: 60, secret }) };
        web = await resumeUIMessageStreamResponse(journal, 'run-1', { unsafeNoAuthorization: true, headers });
      } else if (request.method === 'GET' && url.pathname.endsWith('/stream')) {
        web = await resumeUIMessageStreamResponse(journal, runId, { request: webRequest(request), authorize, after: (request.headers['last-event-id'] as string | undefined) ?? null });
      } else if (request.method === 'POST' && url.pathname.endsWith('/stop')) {
        // the stop endpoint of docs/durable.md (worker.cancel does exactly this: authorize, then signal)
        try {
          await authorizedRun(journal, runId, { request: webRequest(request), authorize });
          await journal.signal(runId, { kind: 'stop', reason: 'stopped by the user' });
          web = Response.json({ stopped: runId });
        } catch (error) {
          if (!RunNotFoundError.isInstance(error)) throw error;
          web = Response.json({ error: { name: error.name } }, { status: 404 });
        }
        stops.push({ status: web.status, runId: request.headers['x-rxagent-run-id'] as string | undefined, token: typeof request.headers[RUN_TOKEN_HEADER] === 'string' });
      } else {
        web = new Response(null, { status: 404 });
      }
      response.writeHead(web.status, Object.fromEntries([...(web.headers as unknown as Iterable<[string, string]>)]));
      response.flushHeaders();
      if (web.body === null) return void response.end();
      for await (const piece of web.body as unknown as AsyncIterable<Uint8Array>) response.write(piece);
      response.end();
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { api: `http://127.0.0.1:${(server!.address() as { port: number }).port}/api/chat`, stops };
}

async function liveRun() {
  const journal = new InMemoryRunJournal();
  await journal.createRun({ runId: 'run-1', agentId: 'a', threadId: 'c1', resourceId: 'alice', input: null });
  const { lease } = await journal.claim('run-1', 'w');
  await journal.append(lease, [start('run-1'), { type: 'text-start', runId: 'run-1', from: 'AGENT', payload: { id: 't1' } }, delta('run-1', 'Hello')]);
  return Object.assign(journal, { more: () => journal.append(lease, [delta('run-1', ' again')]) });
}

const messages: UIMessage[] = [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }];
const stopSignals = (journal: InMemoryRunJournal, ms = 3000) => firstValueFrom(journal.signals$('run-1').pipe(take(1), toArray(), timeout(ms)));
const waitFor = async (check: () => boolean): Promise<void> => {
  for (const started = Date.now(); !check(); ) {
    if (Date.now() - started > 3000) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('DurableChatTransport: stop', () => {
  it("stop pressed while the first response streams: POSTs ${api}/${chatId}/stop with the run's id and token, and the run gets its stop", async () => {
    const journal = await liveRun();
    const { api, stops } = await serve(journal);
    const transport = new DurableChatTransport<UIMessage>({ api });
    const abort = new AbortController();
    const stream = await transport.sendMessages({ chatId: 'c1', messages, abortSignal: abort.signal, trigger: 'submit-message', messageId: undefined });
    const reader = stream.getReader();
    expect((await reader.read()).value).toMatchObject({ type: 'start' });
    abort.abort();
    await reader.cancel();
    await waitFor(() => stops.length > 0);
    expect(stops).toEqual([{ status: 200, runId: 'run-1', token: true }]);
    expect(await stopSignals(journal)).toMatchObject([{ kind: 'stop', reason: 'stopped by the user' }]);
  });

  it('stop pressed on a resumed stream (reconnectToStream, as useChat({ resume: true }) calls it): the run itself is stopped', async () => {
    const journal = await liveRun();
    const { api, stops } = await serve(journal);
    const transport = new DurableChatTransport<UIMessage>({ api });
    // the first response (which gave the transport the run and its token) goes away…
    const first = (await transport.sendMessages({ chatId: 'c1', messages, abortSignal: undefined, trigger: 'submit-message', messageId: undefined })).getReader();
    await first.read();
    await first.cancel();
    // …and the chat resumes
    const abort = new AbortController();
    const resumed = await transport.reconnectToStream({ chatId: 'c1', abortSignal: abort.signal } as Parameters<typeof transport.reconnectToStream>[0]);
    const reader = resumed!.getReader();
    await journal.more();
    expect((await reader.read()).value).toMatchObject({ type: 'text-delta', delta: ' again' });
    expect(stops).toEqual([]);
    abort.abort();
    await reader.cancel();
    await waitFor(() => stops.length > 0);
    expect(stops).toEqual([{ status: 200, runId: 'run-1', token: true }]);
    expect(await stopSignals(journal)).toMatchObject([{ kind: 'stop' }]);
  });

  it('the stop endpoint refuses a stop without the run token (404) and records nothing; stopApi: false sends no stop', async () => {
    const journal = await liveRun();
    const { api, stops } = await serve(journal);
    const refused = await fetch(`${api}/c1/stop`, { method: 'POST', headers: { 'x-rxagent-run-id': 'run-1' } });
    expect(refused.status).toBe(404);
    const transport = new DurableChatTransport<UIMessage>({ api, stopApi: false });
    const abort = new AbortController();
    const reader = (await transport.sendMessages({ chatId: 'c1', messages, abortSignal: abort.signal, trigger: 'submit-message', messageId: undefined })).getReader();
    await reader.read();
    abort.abort();
    await reader.cancel();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stops).toEqual([{ status: 404, runId: 'run-1', token: false }]);
    await expect(stopSignals(journal, 200)).rejects.toThrow();
    expect(() => new DurableChatTransport<UIMessage>({ api, stopApi: 42 as never })).toThrow(/stopApi/);
  });
});
