/**
 * The `OBSERVABLE_STREAM` seam behind a held demand gate: an Observable cannot be paused, so what it
 * emits while the consumer does not read waits at the seam — now up to a bound. Past
 * `OBSERVABLE_STREAM_MAX_HELD` parts (10,000 by default, or the model's own value under that key)
 * the call fails with an `InvalidModelResponseError` naming the limit, the source is unsubscribed
 * and the call's signal is cut.
 *
 * Found here (failed before its fix): an asynchronous Observable emitting for ever while the
 * consumer never read was buffered without limit (the heap grew until the process died).
 */
import { describe, expect, it } from 'vitest';
import { finalize, Observable, Subject } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent, DemandGate, InvalidModelResponseError, type ChunkType } from '../../src/index.js';
import { OBSERVABLE_STREAM_MAX_HELD } from '../../src/model/observable-stream.js';
import { DEFAULT_OBSERVABLE_MAX_HELD } from '../../src/model/stream-model.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { mockModelV3 } from '../../src/testing/mock-model-legacy.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { failOnProcessLevelErrors } from './process-guard.js';

failOnProcessLevelErrors();

const PROVIDER = 'acme.endless';
const MODEL_ID = 'endless-1';
const settle = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
};
const agentOf = (model: LanguageModelV4): Agent => new Agent({ id: 'a', model, maxSteps: 1 });
const delta = (index: number): LanguageModelV4StreamPart => ({ type: 'text-delta', id: 't', delta: `w${index} ` });

/** A source the test pushes into, and whether it was unsubscribed. */
function endlessSource() {
  const subject = new Subject<LanguageModelV4StreamPart>();
  const state = { unsubscribed: false, signal: undefined as AbortSignal | undefined };
  const source = (): Observable<LanguageModelV4StreamPart> => subject.pipe(finalize(() => (state.unsubscribed = true)));
  return { subject, state, source };
}

/** Pushes `count` deltas after a text start, in batches of 500 with a turn of the loop between (an asynchronous source). */
async function push(subject: Subject<LanguageModelV4StreamPart>, count: number): Promise<void> {
  subject.next({ type: 'text-start', id: 't' });
  for (let index = 0; index < count; index++) {
    if (subject.observed === false) return;
    subject.next(delta(index));
    if (index % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Runs `model` with a gate held from the start (a reader that never reads): the chunks the run emitted. */
function heldRun(model: LanguageModelV4): { seen: ChunkType[]; gate: DemandGate; reader: object } {
  const gate = new DemandGate();
  const reader = {};
  gate.hold(reader);
  const seen: ChunkType[] = [];
  agentOf(model).stream$('Hello', { demand: gate }).subscribe({ next: (chunk) => seen.push(chunk), error: () => undefined });
  return { seen, gate, reader };
}

function expectHeldLimit(chunks: readonly ChunkType[], limit: number): void {
  const last = chunks.at(-1);
  expect(last?.type).toBe('error');
  const error = last?.type === 'error' ? last.payload.error : undefined;
  expect(InvalidModelResponseError.isInstance(error), String((error as Error | undefined)?.message)).toBe(true);
  expect((error as InvalidModelResponseError).provider).toBe(PROVIDER);
  expect((error as InvalidModelResponseError).problem).toContain(`OBSERVABLE_STREAM_MAX_HELD (${limit} parts)`);
}

describe('OBSERVABLE_STREAM parts behind a held demand gate are bounded', () => {
  it('an asynchronous source emitting while the consumer never reads: the call fails naming the limit once 10,000 wait, the source is unsubscribed and the call signal cut (was: buffered without limit)', { timeout: 60_000 }, async () => {
    const { subject, state, source } = endlessSource();
    const model = mockModel({ provider: PROVIDER, modelId: MODEL_ID, stream: source });
    const { seen } = heldRun(model);
    await settle();
    await push(subject, DEFAULT_OBSERVABLE_MAX_HELD + 2_000);
    await settle();
    expect(DEFAULT_OBSERVABLE_MAX_HELD).toBe(10_000);
    expectHeldLimit(seen, DEFAULT_OBSERVABLE_MAX_HELD);
    expect(state.unsubscribed).toBe(true);
    expect(subject.observed).toBe(false);
    expect(model.abortSignals.at(-1)?.aborted).toBe(true);
  });

  it('the model sets its own limit under OBSERVABLE_STREAM_MAX_HELD (a V4 model, and a V3 one lifted to V4)', { timeout: 60_000 }, async () => {
    for (const made of [() => mockModel({ provider: PROVIDER, modelId: MODEL_ID, stream: endless.source }), () => mockModelV3({ provider: PROVIDER, modelId: MODEL_ID, stream: endless.source })]) {
      var endless = endlessSource();
      const model = Object.assign(made(), { [OBSERVABLE_STREAM_MAX_HELD]: 100 });
      const { seen } = heldRun(model as unknown as LanguageModelV4);
      await settle();
      await push(endless.subject, 1_000);
      await settle();
      expectHeldLimit(seen, 100);
      expect(endless.state.unsubscribed).toBe(true);
    }
  });

  it('up to the limit nothing changes: parts wait, and all of them come in order once the gate opens', { timeout: 60_000 }, async () => {
    const { subject, source } = endlessSource();
    const model = Object.assign(mockModel({ provider: PROVIDER, modelId: MODEL_ID, stream: source }), { [OBSERVABLE_STREAM_MAX_HELD]: 100 });
    const { seen, gate, reader } = heldRun(model);
    await settle();
    // 99 parts wait: the text start and 98 deltas
    await push(subject, 98);
    await settle();
    expect(seen.some((chunk) => chunk.type === 'text-delta' || chunk.type === 'error')).toBe(false);
    gate.release(reader);
    await settle();
    for (const part of [{ type: 'text-end', id: 't' } as const, finishPart()]) subject.next(part);
    subject.complete();
    await settle();
    expect(seen.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(98);
    expect(seen.at(-1)?.type).toBe('finish');
  });

  it('a source that emits synchronously past the limit in its subscribe frame fails the same way', { timeout: 60_000 }, async () => {
    const parts = [...textParts(Array.from({ length: 300 }, (_, index) => `w${index}`).join(' ')), finishPart()];
    const model = Object.assign(mockModel({ provider: PROVIDER, modelId: MODEL_ID, parts }), { [OBSERVABLE_STREAM_MAX_HELD]: 50 });
    const { seen } = heldRun(model);
    await settle();
    expectHeldLimit(seen, 50);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '100', null])('OBSERVABLE_STREAM_MAX_HELD %s fails the call naming it', async (value) => {
    const model = Object.assign(mockModel({ provider: PROVIDER, modelId: MODEL_ID, parts: [...textParts('hi'), finishPart()] }), { [OBSERVABLE_STREAM_MAX_HELD]: value });
    const { seen, gate, reader } = heldRun(model);
    gate.release(reader);
    await settle();
    const last = seen.at(-1);
    expect(last?.type).toBe('error');
    const error = last?.type === 'error' ? last.payload.error : undefined;
    expect(InvalidModelResponseError.isInstance(error)).toBe(true);
    expect((error as InvalidModelResponseError).problem).toMatch(/OBSERVABLE_STREAM_MAX_HELD must be a whole number of parts/);
  });

  it('an OBSERVABLE_STREAM_MAX_HELD getter that throws fails the call naming it', async () => {
    const model = mockModel({ provider: PROVIDER, modelId: MODEL_ID, parts: [...textParts('hi'), finishPart()] });
    Object.defineProperty(model, OBSERVABLE_STREAM_MAX_HELD, {
      get() {
        throw new Error('no limit here');
      },
    });
    const { seen, gate, reader } = heldRun(model);
    gate.release(reader);
    await settle();
    const last = seen.at(-1);
    const error = last?.type === 'error' ? last.payload.error : undefined;
    expect(InvalidModelResponseError.isInstance(error)).toBe(true);
    expect((error as InvalidModelResponseError).problem).toMatch(/OBSERVABLE_STREAM_MAX_HELD property throws/);
  });
});
