/**
 * Agents on the real `@ai-sdk/openai` provider replaying a recorded Chat Completions stream
 * (test/fixtures/providers), with a delay per event, and what became of each HTTP request.
 */
import { fileURLToPath } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent } from '../../../src/index.js';
import { loadFixture, replayFetch } from '../../../src/testing/index.js';

export const recording = loadFixture(fileURLToPath(new URL('../../fixtures/providers/openai/openai-text.chunks.txt', import.meta.url)));
/** A short reply: the first ten events and the two closing ones (finish reason, usage). */
export const shortRecording = [...recording.slice(0, 10), ...recording.slice(-2)];
export const textOf = (lines: readonly string[]) =>
  lines
    .map((line) => (JSON.parse(line) as { choices: Array<{ delta?: { content?: string } }> }).choices[0]?.delta?.content ?? '')
    .join('');

/** What became of one provider HTTP request. */
export interface RequestFate {
  /** The whole recorded body was read. */
  bodyRead: boolean;
  /** Its abort signal fired while the body was still being read (a cancelled request). */
  abortedEarly: boolean;
}

/**
 * An agent on the real OpenAI provider whose HTTP responses replay `lines`, `delayMs` per event.
 * `fates` follows each request; `open`/`maxOpen` count requests whose body is still being read.
 */
export function replayAgent(lines: readonly string[], delayMs: number) {
  const replay = replayFetch(lines, { delayMs });
  const fates: RequestFate[] = [];
  const counts = { open: 0, maxOpen: 0 };
  const tracked = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const fate: RequestFate = { bodyRead: false, abortedEarly: false };
    fates.push(fate);
    counts.maxOpen = Math.max(counts.maxOpen, ++counts.open);
    let closed = false;
    const close = () => {
      if (!closed) counts.open--;
      closed = true;
    };
    init?.signal?.addEventListener('abort', () => {
      if (!fate.bodyRead) fate.abortedEarly = true;
      close();
    });
    const response = await replay(input, init);
    const body = response.body?.pipeThrough(
      new TransformStream({
        flush: () => {
          fate.bodyRead = true;
          close();
        },
      }),
    );
    return new Response(body, { status: response.status, headers: response.headers });
  }) as typeof globalThis.fetch;
  const model = createOpenAI({ apiKey: 'test-key', fetch: tracked }).chat('gpt-4.1-nano');
  return { agent: new Agent({ id: 'rx-example', model }), replay, fates, counts };
}

