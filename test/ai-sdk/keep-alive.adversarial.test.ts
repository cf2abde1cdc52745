/**
 * Keep-alives of the two UI message stream responses, on a fake clock (`setInterval` faked: no
 * timed assertion). A proxy closes an SSE connection that stays quiet (a long tool): both
 * `toUIMessageStreamResponse` and `resumeUIMessageStreamResponse` send `: keep-alive` after
 * `keepAliveMs` (15 s by default) without a byte, `keepAliveMs: false` sends none, and the timer is
 * cleared when the body ends or is cancelled.
 *
 * Found here (failed before its fix): `resumeUIMessageStreamResponse` sent no keep-alive at all, so
 * a resumed chat behind a proxy was cut during a long tool; `toUIMessageStreamResponse` sent one
 * only when asked.
 */
import { Subject } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { resumeUIMessageStreamResponse } from '../../src/ai-sdk/resume-ui-message-stream-response.js';
import { toUIMessageStreamResponse } from '../../src/ai-sdk/to-ui-message-stream-response.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import { runChunks } from './durable-run-fixture.js';

const runId = 'run-1';
const KEEP_ALIVE = ': keep-alive\n\n';
const settle = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
};

/** Reads the body into `text` as it comes (a reader that keeps reading); `done` once it ended. */
function follow(response: Response) {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const state = { text: '', done: false };
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) {
        state.done = true;
        return;
      }
      state.text += decoder.decode(value, { stream: true });
    }
  })();
  return { state, cancel: () => reader.cancel() };
}

const keepAlives = (text: string): number => text.split(KEEP_ALIVE).length - 1;

/** A journal holding the first chunks of a run still running (its tool takes long: nothing more comes). */
async function runningJournal() {
  const journal = new InMemoryRunJournal({ pageSize: 5 });
  await journal.createRun({ runId, agentId: 'a', input: null });
  const { lease } = await journal.claim(runId, 'w');
  await journal.append(lease, runChunks.slice(0, 3));
  return journal;
}

const responses = {
  toUIMessageStreamResponse: async (options: { keepAliveMs?: number | false }) => {
    const chunks$ = new Subject<ChunkType>();
    const response = toUIMessageStreamResponse(chunks$, options);
    chunks$.next(runChunks[0] as ChunkType);
    return { response, end: () => chunks$.complete() };
  },
  resumeUIMessageStreamResponse: async (options: { keepAliveMs?: number | false }) => {
    const journal = await runningJournal();
    const response = await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true, ...options });
    return { response, end: () => undefined };
  },
};

describe.each(Object.entries(responses))('%s keep-alive', (_name, open) => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends ": keep-alive" each 15 s without a byte by default, none before; cancelling clears the timer', { timeout: 30_000 }, async () => {
    const { response } = await open({});
    const body = follow(response);
    await settle();
    expect(body.state.text).toContain('data: ');
    vi.advanceTimersByTime(14_999);
    await settle();
    expect(keepAlives(body.state.text)).toBe(0);
    vi.advanceTimersByTime(1);
    await settle();
    expect(keepAlives(body.state.text)).toBe(1);
    vi.advanceTimersByTime(15_000);
    await settle();
    vi.advanceTimersByTime(15_000);
    await settle();
    expect(keepAlives(body.state.text)).toBe(3);
    await body.cancel();
    await settle();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keepAliveMs sets the interval', { timeout: 30_000 }, async () => {
    const { response } = await open({ keepAliveMs: 1_000 });
    const body = follow(response);
    await settle();
    for (let second = 0; second < 5; second++) {
      vi.advanceTimersByTime(1_000);
      await settle();
    }
    expect(keepAlives(body.state.text)).toBe(5);
    await body.cancel();
    await settle();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a reader that is behind gets no comment queued: ticks while it does not read add none', { timeout: 30_000 }, async () => {
    const { response } = await open({ keepAliveMs: 1_000 });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await settle();
    // nobody reads: at most one piece waits in the body's queue, and no comment joins it
    vi.advanceTimersByTime(100_000);
    await settle();
    let text = '';
    const decoder = new TextDecoder();
    for (let read = 0; read < 2; read++) {
      const next = await Promise.race([reader.read(), settle().then(() => undefined)]);
      if (next === undefined || next.done === true) break;
      text += decoder.decode(next.value, { stream: true });
    }
    expect(keepAlives(text)).toBeLessThanOrEqual(1);
    await reader.cancel();
  });

  it('keepAliveMs: false sends none and sets no timer', { timeout: 30_000 }, async () => {
    const { response } = await open({ keepAliveMs: false });
    const body = follow(response);
    await settle();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    await settle();
    expect(keepAlives(body.state.text)).toBe(0);
    await body.cancel();
  });

  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, '15000', true])('keepAliveMs %s is a TypeError naming it', async (value) => {
    await expect(open({ keepAliveMs: value as never })).rejects.toThrow(/keepAliveMs must be/);
  });
});

describe('keep-alive timers end with the body', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('toUIMessageStreamResponse: the run ends, the timer is cleared', { timeout: 30_000 }, async () => {
    const { response, end } = await responses.toUIMessageStreamResponse({});
    const body = follow(response);
    await settle();
    end();
    await settle();
    expect(body.state.done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resumeUIMessageStreamResponse: an ended run replayed, the timer is cleared', { timeout: 30_000 }, async () => {
    const journal = new InMemoryRunJournal({ pageSize: 5 });
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, runChunks.slice(0, -1));
    const { commit } = await import('../storage/journal-suite.js');
    await journal.append(lease, runChunks.slice(-1), commit('final'));
    const body = follow(await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true }));
    await settle();
    expect(body.state.done).toBe(true);
    expect(body.state.text).toContain('data: [DONE]');
    expect(vi.getTimerCount()).toBe(0);
  });
});
