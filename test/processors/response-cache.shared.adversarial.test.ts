/**
 * `ResponseCache`: an accepted answer is shared by every identical request, so what one reader of it
 * does must not take it from the others. A run served the answer whose consumer leaves (it
 * unsubscribes, or the caller aborts) says nothing about the answer: it stays servable to the runs
 * reading it at the same time and to every later one. It is withdrawn only when a replay of it
 * fails — a processor rejects it (a tripwire, a run blanked) —; an answer written by a run that
 * nobody held to its end (its consumer left before the step was accepted) was never servable.
 *
 * Found here (failed before its fix): a consumer that left a served replay — mid-stream, or while a
 * guard judged it — withdrew the shared answer, so anyone could make every later identical request
 * ask the model again by asking and hanging up.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, takeWhile, toArray } from 'rxjs';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { CachedLLMStepResponse, Processor } from '../../src/contract/processor-types.js';
import { ResponseCache, type ResponseCacheStore } from '../../src/processors/response-cache.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';

const textOf = (chunks: readonly ChunkType[]) => chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : [])).join('');
const collect = (agent: Agent, prompt: string, options: Parameters<Agent['stream$']>[1] = {}) => lastValueFrom(agent.stream$(prompt, options).pipe(toArray()));
const settle = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
};

function answering(...answers: string[]): MockModel {
  return mockModel({ parts: ({ callIndex }) => [...textParts(answers[Math.min(callIndex, answers.length - 1)] ?? ''), finishPart()] });
}

/** A store that records each write: whether it was accepted, and an empty (withdrawn) one. */
class RecordingStore implements ResponseCacheStore {
  readonly entries = new Map<string, CachedLLMStepResponse>();
  readonly writes: Array<{ accepted: boolean; chunks: number }> = [];
  get(key: string) {
    return this.entries.get(key);
  }
  set(key: string, value: CachedLLMStepResponse) {
    this.writes.push({ accepted: (value as { accepted?: unknown }).accepted === true, chunks: value.chunks.length });
    this.entries.set(key, value);
  }
}

/**
 * A guard whose judgement of a step the test holds: `hold()` makes the next judgements wait until
 * `release()`; `entered` resolves when one waits.
 */
function heldGuard() {
  let gate: Promise<void> | undefined;
  let open: () => void = () => undefined;
  let entered: () => void = () => undefined;
  const guard = {
    processor: {
      id: 'held-guard',
      processOutputStep: async () => {
        if (gate === undefined) return;
        entered();
        await gate;
      },
    } satisfies Processor,
    hold(): Promise<void> {
      gate = new Promise<void>((resolve) => (open = resolve));
      return new Promise<void>((resolve) => (entered = resolve));
    },
    release(): void {
      gate = undefined;
      open();
    },
  };
  return guard;
}

/**
 * An agent with a ResponseCache and a held guard whose model answers "shared answer" once (then
 * "asked again"), after its first run stored and accepted that answer.
 */
async function servedOnce() {
  const store = new RecordingStore();
  const model = answering('shared answer', 'asked again');
  const guard = heldGuard();
  const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [guard.processor] });
  expect(textOf(await collect(agent, 'q'))).toBe('shared answer');
  await settle();
  return { store, model, guard, agent };
}

describe('ResponseCache: one reader leaving does not withdraw a shared answer', () => {
  it('a consumer that leaves a served replay while a guard judges it: the next identical run is still served (was: withdrawn, the model asked again)', { timeout: 30_000 }, async () => {
    const { store, model, guard, agent } = await servedOnce();
    const judging = guard.hold();
    const seen: ChunkType[] = [];
    const subscription = agent.stream$('q').subscribe((chunk) => seen.push(chunk));
    await judging;
    subscription.unsubscribe();
    guard.release();
    await settle();
    expect(seen.some((chunk) => chunk.type === 'finish')).toBe(false);
    expect(textOf(await collect(agent, 'q'))).toBe('shared answer');
    expect(model.calls).toHaveLength(1);
    expect(store.writes.filter((write) => write.chunks === 0)).toEqual([]);
  });

  it('a consumer that leaves at its first chunk, a hundred times: the answer is still served, the model asked once', { timeout: 60_000 }, async () => {
    const store = new RecordingStore();
    const model = answering('shared answer', 'asked again');
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })] });
    expect(textOf(await collect(agent, 'q'))).toBe('shared answer');
    await settle();
    for (let round = 0; round < 100; round++) {
      // the replay may come in the subscribe frame: leave through the pipeline, at the first delta
      const subscription = agent.stream$('q').pipe(takeWhile((chunk) => chunk.type !== 'text-delta', true)).subscribe();
      await settle();
      subscription.unsubscribe();
    }
    await settle();
    expect(textOf(await collect(agent, 'q'))).toBe('shared answer');
    expect(model.calls).toHaveLength(1);
  });

  it('the caller aborts a served replay while a guard judges it: the answer stays servable', { timeout: 30_000 }, async () => {
    const { model, guard, agent } = await servedOnce();
    const judging = guard.hold();
    const controller = new AbortController();
    const aborted = collect(agent, 'q', { abortSignal: controller.signal }).catch(() => undefined);
    await judging;
    controller.abort();
    guard.release();
    await aborted;
    await settle();
    expect(textOf(await collect(agent, 'q'))).toBe('shared answer');
    expect(model.calls).toHaveLength(1);
  });

  it('two runs served at once, one leaves: the other reads the whole answer, and a third is served', { timeout: 30_000 }, async () => {
    const { model, guard, agent } = await servedOnce();
    const judging = guard.hold();
    const leaving = agent.stream$('q').subscribe();
    const staying = collect(agent, 'q');
    await judging;
    await settle();
    leaving.unsubscribe();
    guard.release();
    expect(textOf(await staying)).toBe('shared answer');
    await settle();
    expect(textOf(await collect(agent, 'q'))).toBe('shared answer');
    expect(model.calls).toHaveLength(1);
  });

  it('a replay a processor rejects is still withdrawn (the rule keeps its strict side)', { timeout: 30_000 }, async () => {
    const store = new RecordingStore();
    const model = answering('plain answer', 'careful answer');
    const lenient = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })] });
    expect(textOf(await collect(lenient, 'q'))).toBe('plain answer');
    const strict: Processor = { id: 'strict', processOutputStep: ({ text, abort }) => (text.includes('plain') ? abort('too plain') : undefined) };
    const guarded = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [strict] });
    expect((await collect(guarded, 'q')).some((chunk) => chunk.type === 'tripwire')).toBe(true);
    await settle();
    expect(textOf(await collect(lenient, 'q'))).toBe('careful answer');
    expect(model.calls).toHaveLength(2);
  });

  it('an answer whose writer left before its step was accepted is never served (nobody held it to its end)', { timeout: 30_000 }, async () => {
    const store = new RecordingStore();
    const model = answering('unheld answer', 'held answer');
    const guard = heldGuard();
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [guard.processor] });
    const judging = guard.hold();
    const subscription = agent.stream$('q').subscribe();
    await judging;
    subscription.unsubscribe();
    guard.release();
    await settle();
    expect(store.writes.some((write) => write.accepted)).toBe(false);
    expect(textOf(await collect(agent, 'q'))).toBe('held answer');
    expect(model.calls).toHaveLength(2);
  });
});
