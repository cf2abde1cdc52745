/**
 * The shrunk counterexamples the reliability properties found, kept as named regression tests
 * (each was a failing property before the fix it names).
 */
import { describe, expect, it } from 'vitest';
import { NEVER, concat, from, lastValueFrom, take, throwError, toArray, type Observable } from 'rxjs';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { checkBracketing, checkLifecycle } from './support/invariants.js';

const types = (chunks: readonly ChunkType[]) => chunks.map((chunk) => chunk.type);
const collect = (agent: Agent, input = 'hello') => lastValueFrom(agent.stream$(input).pipe(toArray()));

describe('regressions found by the properties', () => {
  it('bracketing: a provider stream that ends early leaves no text part open (text-end before step-finish)', async () => {
    // shrunk: { segments: [text ['a']], end: early-end (cut) } — no text-end, no finish part
    const model = mockModel({ parts: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'a' }] });
    const chunks = await collect(new Agent({ id: 'a', model }));
    expect(types(chunks)).toEqual(['start', 'step-start', 'text-start', 'text-delta', 'text-end', 'step-finish', 'finish']);
    expect(checkBracketing(chunks, true)).toEqual([]);
  });

  it('bracketing: a text-delta without text-start (malformed provider stream) gets its start', async () => {
    const model = mockModel({ parts: [{ type: 'text-delta', id: 't', delta: 'hi' }, { type: 'text-end', id: 'other' }, finishPart()] });
    const chunks = await collect(new Agent({ id: 'a', model }));
    expect(types(chunks)).toEqual(['start', 'step-start', 'text-start', 'text-delta', 'text-end', 'step-finish', 'finish']);
    expect(chunks[4]).toMatchObject({ payload: { id: 't' } });
  });

  it('bracketing: a processor that drops text-start does not leave an unbracketed delta', async () => {
    // shrunk: processors [{ stream: drop text-start nth 0 }], one text segment
    const dropStart: Processor = { id: 'p0', processOutputStream: ({ part }) => (part.type === 'text-start' ? null : part) };
    const model = mockModel({ parts: [...textParts('a'), finishPart()] });
    const chunks = await collect(new Agent({ id: 'a', model, outputProcessors: [dropStart] }));
    expect(checkBracketing(chunks, true)).toEqual([]);
    expect(types(chunks)).toEqual(['start', 'step-start', 'text-start', 'text-delta', 'text-end', 'step-finish', 'finish']);
  });

  it('lifecycle: a processor returning null for finish, step-start or step-finish does not remove them', async () => {
    // shrunk: processors [{ stream: drop finish nth 0 }] → the stream had no terminal chunk
    for (const target of ['finish', 'step-start', 'step-finish'] as const) {
      const drop: Processor = { id: 'p0', processOutputStream: ({ part }) => (part.type === target ? null : part) };
      const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('ok'), finishPart()] }), outputProcessors: [drop] });
      const chunks = await collect(agent);
      expect(types(chunks), target).toEqual(['start', 'step-start', 'text-start', 'text-delta', 'text-end', 'step-finish', 'finish']);
      const result = await agent.generate('hello');
      expect(result.text).toBe('ok');
      expect(result.finishReason).toBe('stop');
    }
  });

  it('bracketing: a processor that aborts the rejected attempt’s step-finish for a retry still closes that attempt', async () => {
    // shrunk: preThrow on call 0; p3 { stream: abortRetry step-finish nth 0, apiError: retry nth 0 }; maxProcessorRetries 1
    let calls = 0;
    const model = mockModel({
      error: () => (calls++ === 0 ? new Error('provider refused') : undefined),
      parts: [...textParts('fine'), finishPart()],
    });
    const processor: Processor = {
      id: 'p3',
      processOutputStream: ({ part, state, abort }) => {
        if (part.type === 'step-finish' && state.seen !== true) {
          state.seen = true;
          abort('again', { retry: true });
        }
        return part;
      },
      processAPIError: () => ({ retry: true }),
    };
    const chunks = await collect(new Agent({ id: 'a', model, outputProcessors: [processor], maxProcessorRetries: 1 }));
    expect(checkBracketing(chunks, true)).toEqual([]);
    expect(types(chunks)).toEqual(['start', 'step-start', 'step-finish', 'step-start', 'text-start', 'text-delta', 'text-end', 'step-finish', 'finish']);
    expect(chunks[2]).toMatchObject({ payload: { stepResult: { reason: 'retry' } } });
  });

  it('fail closed: a processOutputStream hook returning a non-chunk is a ProcessorError naming it', async () => {
    // shrunk: p1 { stream: wrongShape text-delta nth 0 } → a TypeError from deep inside the loop
    const wrong: Processor = { id: 'p1', processOutputStream: ({ part }) => (part.type === 'text-delta' ? (42 as unknown as ChunkType) : part) };
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('a'), finishPart()] }), outputProcessors: [wrong] });
    const chunks = await collect(agent);
    const last = chunks.at(-1);
    expect(last?.type).toBe('error');
    const error = last?.type === 'error' ? last.payload.error : undefined;
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ processorId: 'p1', hook: 'processOutputStream' });
    expect(types(chunks)).not.toContain('text-delta');
    await expect(agent.generate('hello')).rejects.toSatisfy((thrown: unknown) => ProcessorError.isInstance(thrown));
  });

  it('fail closed: an async hook’s throw is not lost to a provider error that arrives while it runs', async () => {
    // shrunk: preThrow (doStream rejects) + p0 { timing: promise, stream: throw step-start nth 0 }
    const model = mockModel({ error: new Error('provider refused') });
    const slowCrash: Processor = {
      id: 'p0',
      processOutputStream: async ({ part }) => {
        if (part.type === 'step-start') throw new Error('p0 crashed');
        return part;
      },
    };
    const chunks = await collect(new Agent({ id: 'a', model, outputProcessors: [slowCrash] }));
    const last = chunks.at(-1);
    expect(last?.type).toBe('error');
    expect(last?.type === 'error' && ProcessorError.isInstance(last.payload.error)).toBe(true);
    expect(last).toMatchObject({ payload: { error: { processorId: 'p0' } } });
  });

  it('fail closed: an async abort is not lost to a provider error either (no silent API-error retry past it)', async () => {
    const stream$ = (): Observable<LanguageModelV4StreamPart> => concat(from(textParts('bad')), throwError(() => new Error('connection reset')));
    let modelCalls = 0;
    const model = mockModel({ stream: () => (modelCalls++ === 0 ? stream$() : from([...textParts('good'), finishPart()])) });
    const guard: Processor = {
      id: 'guard',
      processOutputStream: async ({ part, abort }) => (part.type === 'text-delta' && part.payload.text === 'bad' ? abort('blocked') : part),
      processAPIError: () => ({ retry: true }),
    };
    const chunks = await collect(new Agent({ id: 'a', model, outputProcessors: [guard], errorProcessors: [guard] }));
    expect(chunks.at(-1)).toMatchObject({ type: 'tripwire', payload: { reason: 'blocked', processorId: 'guard' } });
    expect(modelCalls).toBe(1);
  });

  it('teardown: no hook runs after the consumer left while an async hook was pending', async () => {
    // shrunk: p0 { role: input, timing: timer }, p1 { role: input }; unsubscribe at the next macrotask
    const calls: string[] = [];
    const slow: Processor = { id: 'p0', processInput: () => new Promise((resolve) => setTimeout(() => resolve(undefined), 5)) };
    const next: Processor = {
      id: 'p1',
      processInput: () => {
        calls.push('p1.processInput');
        return undefined;
      },
    };
    const model = mockModel({ stream: NEVER });
    const agent = new Agent({ id: 'a', model, inputProcessors: [slow, next] });
    const chunks = await lastValueFrom(agent.stream$('hello').pipe(take(1), toArray()));
    expect(types(chunks)).toEqual(['start']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toEqual([]);
  });

  it('lifecycle holds on a tool step whose call a processor hid (the hidden call is not executed)', async () => {
    let executed = 0;
    const hide: Processor = { id: 'hide', processOutputStream: ({ part }) => (part.type === 'tool-call' ? null : part) };
    const model = mockModel({ parts: ({ callIndex }) => (callIndex === 0 ? [...toolCallParts('ok', { n: 1 }), finishPart('tool-calls')] : [...textParts('done'), finishPart()]) });
    const agent = new Agent({
      id: 'a',
      model,
      tools: { ok: { execute: () => ++executed } },
      outputProcessors: [hide],
    });
    const chunks = await collect(agent);
    expect(checkLifecycle(chunks, true)).toEqual([]);
    expect(executed).toBe(0);
    expect(types(chunks)).not.toContain('tool-result');
  });
});
