/**
 * The model-backed gate beyond text (issue 24 §5): tool-call input streamed as JSON and its final
 * call, data and tool-error chunks, the `channels` option, flagged tool calls, the bound on windows
 * judged at once, and the options' validation.
 */
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { CheckedStream } from '../../src/processors/internal/checked-stream.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { judgedContents, judgeModel, promptText, runOutputStream } from './support/harness.js';
import { expectOptionError } from './support/option-error.js';

const VALUE = 'Ada "the Countess" Lovelace';
/** Reports `VALUE` (as the text reads, decoded) when the judged content holds it, written plainly or JSON-escaped. */
const detector = () =>
  judgeModel(({ prompt }) => {
    const content = judgedContents(prompt).join('\n');
    const found = content.includes(VALUE) || content.includes(JSON.stringify(VALUE).slice(1, -1));
    return JSON.stringify({ detections: found ? [{ type: 'name', value: VALUE, confidence: 0.99 }] : [] });
  });

/** A chunk of `type` (for the tool-input kinds the builders do not cover). */
const make = (type: string, payload: Record<string, unknown>) => ({ type, runId: 'test-run', from: 'AGENT', payload }) as unknown as ChunkType;
const toolCall = (toolCallId: string, toolName: string, args: unknown) => chunk.toolCall({ toolCallId, toolName, args });
const toolError = (toolCallId: string, toolName: string, error: unknown) => chunk.toolError({ toolCallId, toolName, error });

function toolInput(args: unknown, id = 'call-1', size = 5): ChunkType[] {
  const json = JSON.stringify(args);
  const deltas: ChunkType[] = [];
  for (let at = 0; at < json.length; at += size) deltas.push(make('tool-call-delta', { toolCallId: id, toolName: 'lookup', argsTextDelta: json.slice(at, at + size) }));
  return [make('tool-call-input-streaming-start', { toolCallId: id, toolName: 'lookup' }), ...deltas, make('tool-call-input-streaming-end', { toolCallId: id })];
}

const argsText = (chunks: readonly ChunkType[]) => chunks.map((part) => (part.type === 'tool-call-delta' ? part.payload.argsTextDelta : '')).join('');

describe('PIIDetector on tool-call input', () => {
  it('redacts the value in the streamed JSON (escaped, still valid JSON) and in the final call, with one judge call', async () => {
    const model = detector();
    const guard = new PIIDetector({ model, redactionMethod: 'placeholder' });
    const args = { query: `find ${VALUE} please` };
    const output = await runOutputStream([guard], [...toolInput(args), toolCall('call-1', 'lookup', args), chunk.finish()]);
    const streamed = argsText(output);
    expect(JSON.parse(streamed)).toEqual({ query: 'find [NAME] please' });
    const call = output.find((part) => part.type === 'tool-call');
    expect(call?.type === 'tool-call' ? call.payload.args : undefined).toEqual({ query: 'find [NAME] please' });
    expect(JSON.stringify(output)).not.toContain('Countess');
    expect(model.calls).toHaveLength(1);
  });

  it('a final call whose arguments differ from the streamed input is judged on its own', async () => {
    const model = detector();
    const guard = new PIIDetector({ model, redactionMethod: 'placeholder' });
    const output = await runOutputStream([guard], [...toolInput({ query: 'x' }), toolCall('call-1', 'lookup', { query: `ask ${VALUE}` }), chunk.finish()]);
    const call = output.find((part) => part.type === 'tool-call');
    expect(call?.type === 'tool-call' ? call.payload.args : undefined).toEqual({ query: 'ask [NAME]' });
    expect(model.calls).toHaveLength(2);
  });

  it("'filter' cannot cut a value out of a tool call: the run is blocked before any of its input streams", async () => {
    const guard = new PIIDetector({ model: detector(), strategy: 'filter' });
    const error = await runOutputStream([guard], [...toolInput({ query: VALUE }), toolCall('call-1', 'lookup', { query: VALUE }), chunk.finish()]).catch((caught: unknown) => caught);
    expect(TripWire.isInstance(error)).toBe(true);
    expect((error as TripWire).reason).toMatch(/tool call's input was flagged/);
  });
});

describe('PIIDetector on data and tool-error chunks', () => {
  it('redacts every string of a data chunk and of a tool error, each judged once', async () => {
    const model = detector();
    const guard = new PIIDetector({ model, redactionMethod: 'placeholder' });
    const data = { type: 'data-note', data: { notes: [`met ${VALUE}`], ok: true } } as unknown as ChunkType;
    const failed = toolError('call-1', 'lookup', new Error(`no record for ${VALUE}`));
    const output = await runOutputStream([guard], [data, failed, chunk.finish()]);
    expect(JSON.stringify(output)).not.toContain('Countess');
    expect((output[0] as unknown as { data: unknown }).data).toEqual({ notes: ['met [NAME]'], ok: true });
    const error = output[1]?.type === 'tool-error' ? output[1].payload.error : undefined;
    expect(error instanceof Error ? error.message : error).toBe('no record for [NAME]');
    expect(model.calls).toHaveLength(2);
  });
});

describe('channels', () => {
  it('a channel left out passes unjudged, in order behind the held text', async () => {
    const model = judgeModel(() => '{"categories": {}}');
    const guard = new ModerationProcessor({ model, channels: ['text'], streamMode: 'final' });
    const output = await runOutputStream(
      [guard],
      [chunk.textStart('t'), chunk.textDelta('Hello there.', 't'), chunk.reasoningStart('r'), chunk.reasoningDelta('thinking', 'r'), chunk.reasoningEnd('r'), chunk.textEnd('t'), chunk.finish()],
    );
    expect(output.map((part) => part.type)).toEqual(['text-start', 'text-delta', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'text-end', 'finish']);
    expect(model.calls.map((call) => judgedContents(promptText(call)))).toEqual([['Hello there.']]);
  });

  it('Moderation judges what the model writes by default: text, reasoning and tool-call input, not data chunks', async () => {
    const model = judgeModel(() => '{"categories": {}}');
    const guard = new ModerationProcessor({ model, streamMode: 'final' });
    const data = { type: 'data-progress', data: { step: 'loading' } } as unknown as ChunkType;
    await runOutputStream([guard], [chunk.reasoningStart('r'), chunk.reasoningDelta('plan it', 'r'), chunk.reasoningEnd('r'), data, ...toolInput({ q: 'go' }), toolCall('call-1', 'lookup', { q: 'go' }), chunk.finish()]);
    expect(model.calls.map((call) => judgedContents(promptText(call))[0])).toEqual(['plan it', '{"q":"go"}']);
  });
});

describe('the gate itself', () => {
  it('judges at most 4 windows at once; more text waits for the next chunk', async () => {
    const gate = new CheckedStream({ stateKey: 'held', processorId: 'gate', windowSchedule: [10] });
    const state: Record<string, unknown> = {};
    let started = 0;
    const judge = () => {
      started++;
      return new Promise<never>(() => undefined); // never answers
    };
    const abort = (): never => {
      throw new Error('unexpected abort');
    };
    expect(gate.process(chunk.textStart('t'), state, abort, judge)).toEqual(chunk.textStart('t'));
    const outputs = Array.from({ length: 20 }, (_, index) => gate.process(chunk.textDelta(`Sentence ${index}. `, 't'), state, abort, judge));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(4);
    // nothing unjudged goes out, and no delta waited
    expect(outputs.every((output) => output === null)).toBe(true);
  });

  it('an empty or non-finite window schedule is an InvalidProcessorOptionError naming the processor', () => {
    expectOptionError(() => new CheckedStream({ stateKey: 'held', processorId: 'moderation', windowSchedule: [] }), 'moderation', 'windowSchedule');
    expectOptionError(() => new ModerationProcessor({ model: judgeModel(() => '{}'), windowSchedule: [50, Number.POSITIVE_INFINITY] }), 'moderation', 'windowSchedule');
  });
});

describe('attempts', () => {
  it('content held from an attempt that ended without reaching the gate is dropped at the next step-start, never shown', async () => {
    const gate = new CheckedStream({ stateKey: 'held', processorId: 'gate', streamMode: 'final' });
    const state: Record<string, unknown> = {};
    const judge = () => Promise.resolve({ action: 'keep' as const });
    const abort = (): never => {
      throw new Error('unexpected abort');
    };
    const released: string[] = [];
    const feed = async (part: ChunkType) => {
      const first = await gate.process(part, state, abort, judge);
      for (const out of [first, ...((state['rxagent.followUpChunks'] as ChunkType[] | undefined) ?? [])]) if (out?.type === 'text-delta') released.push(out.payload.text);
      state['rxagent.followUpChunks'] = [];
    };
    await feed(chunk.stepStart());
    await feed(chunk.textStart('t'));
    await feed(chunk.textDelta('a rejected draft', 't'));
    // the attempt was rejected downstream: its end never passed this gate; the retry starts
    await feed(chunk.stepStart());
    await feed(chunk.textStart('t'));
    await feed(chunk.textDelta('the accepted answer', 't'));
    await feed(chunk.textEnd('t'));
    await feed(chunk.finish());
    expect(released).toEqual(['the accepted answer']);
  });

  it('a processor after the guard rejecting an attempt: the retried attempt streams only its own text', async () => {
    const { Agent } = await import('../../src/loop/agent.js');
    const { mockModel } = await import('../../src/testing/mock-model.js');
    const { finishPart, textParts } = await import('../../src/testing/model-parts.js');
    const { lastValueFrom, toArray } = await import('rxjs');
    const tripper = {
      id: 'tripper',
      processOutputStream: ({ part, abort, retryCount }: { part: ChunkType; abort: (reason: string, options: { retry: boolean }) => never; retryCount: number }) =>
        part.type === 'text-delta' && part.payload.text.includes('BA') && retryCount === 0 ? abort('again', { retry: true }) : part,
    };
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...textParts('Draft words. Here then BAD more words. And more text after it.', { chunkSize: 4 }), finishPart()] : [...textParts('Clean answer.', { chunkSize: 4 }), finishPart()],
    });
    const guard = new ModerationProcessor({ model: judgeModel(() => '{"categories": {}}'), windowSchedule: [10] });
    const agent = new Agent({ id: 'a', model, maxProcessorRetries: 1, outputProcessors: [guard, tripper] });
    const chunks = await lastValueFrom(agent.stream$('hi').pipe(toArray()));
    const retried = chunks.slice(chunks.findLastIndex((part) => part.type === 'step-start'));
    expect(retried.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('')).toBe('Clean answer.');
    expect(JSON.stringify(retried)).not.toMatch(/Draft|BAD|more text/);
  });
});
