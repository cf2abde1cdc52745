/**
 * `DurableChatTransport` against a server that never ends: an SSE event that never ends (its
 * buffer grew without limit), and a stream whose every reconnect delivers an event but never
 * `[DONE]` (it reconnected without limit: progress gave each drop its full count of tries
 * again). Faults found are marked "was:".
 */
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { DurableChatTransport, TransportLimitError } from '../../src/ai-sdk/index.js';
import { RxAgentError } from '../../src/errors/rxagent-error.js';

/** The stream's error is a `TransportLimitError` naming `limit` and its value (was: a plain `Error`). */
function expectLimit(error: unknown, limit: 'maxEventBytes' | 'maxTotalReconnects', value: number): void {
  expect(TransportLimitError.isInstance(error)).toBe(true);
  expect(RxAgentError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ name: 'TransportLimitError', limit, value, chatId: 'c1' });
}

const sendOptions = (): Parameters<DurableChatTransport<UIMessage>['sendMessages']>[0] => ({
  chatId: 'c1',
  messages: [],
  trigger: 'submit-message',
  messageId: undefined,
  abortSignal: undefined,
});

const headers = { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1', 'x-rxagent-run-id': 'run-1' };

/** Reads the transport's stream to its end: the chunks, and the error it ended with. */
async function drain(stream: ReadableStream<unknown>): Promise<{ chunks: unknown[]; error: unknown }> {
  const chunks: unknown[] = [];
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { chunks, error: undefined };
      chunks.push(value);
    }
  } catch (error) {
    return { chunks, error };
  }
}

describe('DurableChatTransport: a server that never ends', () => {
  it('an SSE event that never ends: the stream errors naming maxEventBytes once that many bytes came without an event end, and the body is cancelled (was: buffered without limit)', { timeout: 60_000 }, async () => {
    const piece = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    let cancelled = false;
    let requests = 0;
    const fetch = async (): Promise<Response> => {
      requests += 1;
      if (requests > 1) return new Response(null, { status: 404 });
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('id: 1:0\ndata: {"type":"start","messageId":"m1"}\n\ndata: {"type":"text-delta","id":"t","delta":"'));
          },
          pull(controller) {
            // 32 MiB at most, then the body ends (so the unfixed transport ends too)
            if (sent >= 32 * 2 ** 20) {
              controller.close();
              return;
            }
            sent += piece.byteLength;
            controller.enqueue(piece);
          },
          cancel() {
            cancelled = true;
          },
        }),
        { headers },
      );
    };
    const transport = new DurableChatTransport({ api: 'http://app/api/chat', fetch, initialDelayMs: 0, stopApi: false, maxEventBytes: 2 ** 20 });
    const { chunks, error } = await drain(await transport.sendMessages(sendOptions()));
    expect(chunks).toEqual([{ type: 'start', messageId: 'm1' }]);
    expect(String((error as Error | undefined)?.message)).toMatch(/maxEventBytes \(1048576 bytes\)/);
    expectLimit(error, 'maxEventBytes', 2 ** 20);
    expect(sent).toBeLessThanOrEqual(2 ** 20 + 2 * piece.byteLength);
    expect(cancelled).toBe(true);
    expect(requests).toBe(1);
  });

  it('the default maxEventBytes is 16 MiB: a longer event errors before the body ends', { timeout: 60_000 }, async () => {
    const piece = new TextEncoder().encode('y'.repeat(256 * 1024));
    let sent = 0;
    const fetch = async (): Promise<Response> =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= 32 * 2 ** 20) {
              controller.close();
              return;
            }
            sent += piece.byteLength;
            controller.enqueue(piece);
          },
        }),
        { headers },
      );
    const transport = new DurableChatTransport({ api: 'http://app/api/chat', fetch, initialDelayMs: 0, maxReconnects: 0, stopApi: false });
    const { error } = await drain(await transport.sendMessages(sendOptions()));
    expect(String((error as Error | undefined)?.message)).toMatch(/maxEventBytes \(16777216 bytes\)/);
    expectLimit(error, 'maxEventBytes', 16 * 2 ** 20);
    expect(sent).toBeLessThan(32 * 2 ** 20);
  });

  it('events ending normally, however many bytes in all, are never counted as one event', { timeout: 60_000 }, async () => {
    const event = (index: number) => `id: ${index}:0\ndata: {"type":"text-delta","id":"t","delta":"${'z'.repeat(1000)}"}\n\n`;
    const fetch = async (): Promise<Response> => {
      let index = 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            index += 1;
            if (index > 3000) {
              controller.enqueue(new TextEncoder().encode('data: [DONE]\n\n'));
              controller.close();
              return;
            }
            // events cut anywhere: half of one in this piece, the rest in the next
            controller.enqueue(new TextEncoder().encode(event(index).slice(0, 500)));
            controller.enqueue(new TextEncoder().encode(event(index).slice(500)));
          },
        }),
        { headers },
      );
    };
    const transport = new DurableChatTransport({ api: 'http://app/api/chat', fetch, stopApi: false, maxEventBytes: 4096 });
    const { chunks, error } = await drain(await transport.sendMessages(sendOptions()));
    expect(error).toBeUndefined();
    expect(chunks.length).toBeGreaterThan(0);
  });

  it('every reconnect delivers an event, none [DONE]: the stream errors naming maxTotalReconnects after that many reconnects (was: it reconnected for ever)', { timeout: 60_000 }, async () => {
    let requests = 0;
    const fetch = async (): Promise<Response> => {
      requests += 1;
      // a server that would go on for ever: the test stops it at 2,000 requests
      if (requests > 2000) return new Response(null, { status: 404 });
      const body = requests === 1 ? 'id: 1:0\ndata: {"type":"start","messageId":"m1"}\n\n' : `id: ${requests}:0\ndata: {"type":"text-delta","id":"t","delta":"a"}\n\n`;
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(body));
            controller.close();
          },
        }),
        { headers },
      );
    };
    const transport = new DurableChatTransport({ api: 'http://app/api/chat', fetch, initialDelayMs: 0, maxDelayMs: 0, stopApi: false, maxTotalReconnects: 20 });
    const { error } = await drain(await transport.sendMessages(sendOptions()));
    expect(String((error as Error | undefined)?.message)).toMatch(/maxTotalReconnects \(20\)/);
    expectLimit(error, 'maxTotalReconnects', 20);
    expect(requests).toBe(21);
  });

  it('the default maxTotalReconnects is 100', { timeout: 60_000 }, async () => {
    let requests = 0;
    const fetch = async (): Promise<Response> => {
      requests += 1;
      if (requests > 2000) return new Response(null, { status: 404 });
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(`id: ${requests}:0\ndata: {"type":"start","messageId":"m1"}\n\n`));
            controller.close();
          },
        }),
        { headers },
      );
    };
    const transport = new DurableChatTransport({ api: 'http://app/api/chat', fetch, initialDelayMs: 0, maxDelayMs: 0, stopApi: false });
    const { error } = await drain(await transport.sendMessages(sendOptions()));
    expect(String((error as Error | undefined)?.message)).toMatch(/maxTotalReconnects \(100\)/);
    expectLimit(error, 'maxTotalReconnects', 100);
    expect(requests).toBe(101);
  });

  it.each([
    ['maxEventBytes', 0],
    ['maxEventBytes', 1.5],
    ['maxTotalReconnects', -1],
    ['maxTotalReconnects', Number.POSITIVE_INFINITY],
  ])('%s %s is a RangeError naming it', (name, value) => {
    expect(() => new DurableChatTransport({ api: '/api/chat', [name]: value })).toThrow(new RegExp(`DurableChatTransport: ${name} must be`));
  });
});
