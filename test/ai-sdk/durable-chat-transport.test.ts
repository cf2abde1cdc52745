/**
 * DurableChatTransport against a real HTTP server (node:http on 127.0.0.1) serving a journaled run
 * with resumeUIMessageStreamResponse: the POST response is cut mid-stream (the socket destroyed,
 * mid-event), the transport reconnects to GET /api/chat/:id/stream with Last-Event-ID and
 * x-rxagent-run-id, and the client reads one uninterrupted stream equal to the run's.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { UIMessage, UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableChatTransport } from '../../src/ai-sdk/durable-chat-transport.js';
import { resumeUIMessageStream } from '../../src/ai-sdk/resume-ui-message-stream.js';
import { resumeUIMessageStreamResponse } from '../../src/ai-sdk/resume-ui-message-stream-response.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import type { RunLease } from '../../src/storage/journal/types.js';
import { commit } from '../storage/journal-suite.js';
import { runChunks } from './durable-run-fixture.js';

interface Served {
  url: string;
  requests: Array<{ method: string; url: string; lastEventId?: string; runId?: string }>;
  server: Server;
}

let served: Served | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => served?.server.close(() => resolve()) ?? resolve());
  served = undefined;
});

/**
 * POST /api/chat streams the run and destroys the socket after `cutAfterBytes` bytes (the first
 * `cuts` responses); GET /api/chat/:id/stream resumes after Last-Event-ID (also cut while `cuts` lasts).
 */
async function serve(journal: InMemoryRunJournal, runId: string, options: { cutAfterBytes: number; cuts: number; failGets?: number }): Promise<Served> {
  let cuts = options.cuts;
  let failGets = options.failGets ?? 0;
  const requests: Served['requests'] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const header = (name: string) => (typeof request.headers[name] === 'string' ? (request.headers[name] as string) : undefined);
    requests.push({ method: request.method ?? '', url: request.url ?? '', ...(header('last-event-id') ? { lastEventId: header('last-event-id') } : {}), ...(header('x-rxagent-run-id') ? { runId: header('x-rxagent-run-id') } : {}) });
    void (async () => {
      if (request.method === 'GET' && failGets > 0) {
        failGets -= 1;
        response.writeHead(503).end();
        return;
      }
      const after = request.method === 'GET' ? header('last-event-id') ?? null : null;
      const webResponse = await resumeUIMessageStreamResponse(journal, header('x-rxagent-run-id') ?? runId, { unsafeNoAuthorization: true, after });
      response.writeHead(webResponse.status, Object.fromEntries([...(webResponse.headers as unknown as Iterable<[string, string]>)]));
      const cut = cuts > 0 ? (cuts--, options.cutAfterBytes) : Number.POSITIVE_INFINITY;
      let sent = 0;
      for await (const piece of webResponse.body as unknown as AsyncIterable<Uint8Array>) {
        if (sent + piece.length > cut) {
          response.write(piece.subarray(0, cut - sent));
          await new Promise((resolve) => setTimeout(resolve, 5));
          response.socket?.destroy();
          return;
        }
        sent += piece.length;
        response.write(piece);
      }
      response.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  served = { url: `http://127.0.0.1:${address.port}`, requests, server };
  return served;
}

async function setUpRun(liveChunks = runChunks.length) {
  const journal = new InMemoryRunJournal({ pageSize: 4 });
  await journal.createRun({ runId: 'run-1', agentId: 'a', input: null });
  const { lease } = await journal.claim('run-1', 'w');
  await journal.append(lease, runChunks.slice(0, liveChunks === runChunks.length ? -1 : liveChunks));
  if (liveChunks === runChunks.length) await journal.append(lease, runChunks.slice(-1), commit('final'));
  return { journal, lease };
}

async function readAll(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const out: UIMessageChunk[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<UIMessageChunk>) out.push(chunk);
  return out;
}

const send = (transport: DurableChatTransport<UIMessage>) =>
  transport.sendMessages({
    chatId: 'chat-1',
    messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Where is order 123?' }] }],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });

describe('DurableChatTransport', () => {
  it('a response cut mid-event is spliced with the rest from GET /api/chat/:id/stream (Last-Event-ID, x-rxagent-run-id)', async () => {
    const { journal } = await setUpRun();
    const expected = await readAll(resumeUIMessageStream(journal, 'run-1', { unsafeNoAuthorization: true }));
    const { url, requests } = await serve(journal, 'run-1', { cutAfterBytes: 700, cuts: 1 });
    const transport = new DurableChatTransport<UIMessage>({ api: `${url}/api/chat`, initialDelayMs: 1 });
    const received = await readAll(await send(transport));
    expect(received).toEqual(expected);
    expect(requests.map((request) => request.method)).toEqual(['POST', 'GET']);
    expect(requests[1]).toMatchObject({ url: '/api/chat/chat-1/stream', runId: 'run-1' });
    expect(requests[1]?.lastEventId).toMatch(/^\d+:\d+$/);
  });

  it('several drops, a failing reconnect (503) in between, and a run still being written: one complete stream', async () => {
    const { journal, lease } = await setUpRun(10);
    const { url, requests } = await serve(journal, 'run-1', { cutAfterBytes: 300, cuts: 3, failGets: 1 });
    const transport = new DurableChatTransport<UIMessage>({ api: `${url}/api/chat`, initialDelayMs: 1, maxDelayMs: 5 });
    const reading = send(transport).then(readAll);
    await writeRest(journal, lease, 10);
    const received = await reading;
    expect(received).toEqual(await readAll(resumeUIMessageStream(journal, 'run-1', { unsafeNoAuthorization: true })));
    expect(requests.filter((request) => request.method === 'GET').length).toBeGreaterThanOrEqual(3);
  });

  it('gives up after maxReconnects failed tries with an error naming the chat', async () => {
    const { journal } = await setUpRun();
    const { url } = await serve(journal, 'run-1', { cutAfterBytes: 200, cuts: 1, failGets: 10 });
    const transport = new DurableChatTransport<UIMessage>({ api: `${url}/api/chat`, initialDelayMs: 1, maxDelayMs: 2, maxReconnects: 3 });
    await expect(readAll(await send(transport))).rejects.toThrow(/chat-1 dropped and 3 reconnects failed/);
  });

  it('reconnectToStream (useChat resume) continues after what it delivered, and a server that says 204 ends it', async () => {
    const { journal } = await setUpRun();
    const { url, requests } = await serve(journal, 'run-1', { cutAfterBytes: 0, cuts: 0 });
    const transport = new DurableChatTransport<UIMessage>({ api: `${url}/api/chat` });
    const full = await readAll(await send(transport));
    const resumed = await transport.reconnectToStream({ chatId: 'chat-1' });
    expect(await readAll(resumed!)).toEqual([]);
    expect(requests[1]).toMatchObject({ method: 'GET', runId: 'run-1', lastEventId: expect.stringMatching(/^27:\d+$/) });
    expect(full.at(-1)).toMatchObject({ type: 'finish' });
    expect(transport.resumeStreamIsReplay).toBe(false);
  });
});

async function writeRest(journal: InMemoryRunJournal, lease: RunLease, from: number): Promise<void> {
  for (let index = from; index < runChunks.length - 1; index += 2) {
    await new Promise((resolve) => setTimeout(resolve, 3));
    await journal.append(lease, runChunks.slice(index, Math.min(index + 2, runChunks.length - 1)));
  }
  await journal.append(lease, runChunks.slice(-1), commit('final'));
}
