/**
 * Options are checked strictly (src/loop/run/validate-options.ts): an unknown key in `new Agent({...})`,
 * in `defaultOptions`, in call options or in the `memory` call option is a `TypeError` naming the
 * key and the closest known one; a `memory` call option on an agent without memory is a
 * `TypeError`; `[]` as input is an `InvalidMessageError` like `''`. None of them reaches the model
 * or the store.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { Agent } from '../../src/loop/agent.js';
import type { AgentCallOptions, AgentConfig } from '../../src/loop/agent-types.js';
import { closestKey, editDistance } from '../../src/contract/closest-key.js';
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';
import { Memory } from '../../src/memory/memory.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { makeChunk } from '../../src/contract/make-chunk.js';

const answer = () => mockModel({ parts: [...textParts('ok'), finishPart()] });
const types = (chunks: readonly ChunkType[]) => chunks.map((chunk) => chunk.type);
const errorOf = (chunks: readonly ChunkType[]): unknown => {
  const last = chunks[chunks.length - 1];
  return last?.type === 'error' ? last.payload.error : undefined;
};
const thrownBy = (make: () => unknown): unknown => {
  try {
    make();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('editDistance / closestKey', () => {
  it.each([
    ['instrutions', 'instructions', 1],
    ['maxsteps', 'maxSteps', 0],
    ['mxaSteps', 'maxSteps', 1],
    ['', 'id', 2],
    ['model', 'model', 0],
    ['tools', 'memory', 5],
  ])('%s ↔ %s: %i edits', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });

  it('picks the nearest key, and none when nothing is a plausible typo', () => {
    expect(closestKey('instrutions', ['id', 'instructions', 'inputProcessors'])).toBe('instructions');
    expect(closestKey('outputProcesors', ['inputProcessors', 'outputProcessors'])).toBe('outputProcessors');
    expect(closestKey('temperature', ['id', 'model', 'tools'])).toBeUndefined();
  });
});

describe('unknown keys in new Agent({...})', () => {
  it.each([
    ['instrutions', /config\.instrutions is not an option \(did you mean config\.instructions\?\)/],
    ['outputProcesors', /config\.outputProcesors is not an option \(did you mean config\.outputProcessors\?\)/],
    ['maxsteps', /did you mean config\.maxSteps\?/],
    ['memmory', /did you mean config\.memory\?/],
  ])('%s: a TypeError naming the key and the closest known one', (key, message) => {
    const config = { id: 'a', model: answer(), [key]: 'x' } as unknown as AgentConfig;
    const error = thrownBy(() => new Agent(config));
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(message);
  });

  it('a key with an undefined value is still a typo', () => {
    expect(() => new Agent({ id: 'a', model: answer(), instrutions: undefined } as unknown as AgentConfig)).toThrow(/did you mean config\.instructions/);
  });

  it('a key nothing resembles lists the known options', () => {
    const error = thrownBy(() => new Agent({ id: 'a', model: answer(), temperature: 0.2 } as unknown as AgentConfig)) as Error;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toMatch(/config\.temperature is not an option \(known options: id, name, .*instructions.*defaultOptions/);
  });

  it('unknown keys of defaultOptions are named with their path', () => {
    const config = { id: 'a', model: answer(), defaultOptions: { maxStep: 3 } } as unknown as AgentConfig;
    expect(() => new Agent(config)).toThrow(/config\.defaultOptions\.maxStep is not an option \(did you mean config\.defaultOptions\.maxSteps\?\)/);
  });

  it('processorTimeoutMs is a known key (agent and call)', async () => {
    const config = { id: 'a', model: answer(), processorTimeoutMs: 1000 } as unknown as AgentConfig;
    const agent = new Agent(config);
    const result = await agent.generate('hi', { processorTimeoutMs: 500 } as unknown as AgentCallOptions);
    expect(result.text).toBe('ok');
  });

  it('defaultOptions.memory on an agent without memory is a TypeError', () => {
    const config: AgentConfig = { id: 'a', model: answer(), defaultOptions: { memory: { thread: 't', resource: 'r' } } };
    expect(() => new Agent(config)).toThrow(/config\.defaultOptions\.memory is set but the agent has no memory/);
  });
});

describe('unknown keys in call options', () => {
  it.each([
    ['instrutions', { instrutions: 'Be brief.' }, /options\.instrutions is not an option \(did you mean options\.instructions\?\)/],
    ['abortSignl', { abortSignl: new AbortController().signal }, /did you mean options\.abortSignal\?/],
    ['memory.threadId', { memory: { threadId: 't', thread: 't', resource: 'r' } }, /options\.memory\.threadId is not an option \(did you mean options\.memory\.thread\?\)/],
    ['tools (an agent option, not a call option)', { tools: {} }, /options\.tools is not an option/],
  ])('%s: start, error(TypeError); generate() rejects with it; the model is never called', async (_name, options, message) => {
    const model = answer();
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage: new InMemoryStorage() }) });
    const chunks = await lastValueFrom(agent.stream$('hi', options as unknown as AgentCallOptions).pipe(toArray()));
    expect(types(chunks)).toEqual(['start', 'error']);
    expect(errorOf(chunks)).toBeInstanceOf(TypeError);
    expect((errorOf(chunks) as Error).message).toMatch(message);
    const rejected = await agent.generate('hi', options as unknown as AgentCallOptions).catch((thrown: unknown) => thrown);
    expect(rejected).toBeInstanceOf(TypeError);
    expect((rejected as Error).message).toMatch(message);
    const output = await agent.stream('hi', options as unknown as AgentCallOptions);
    await expect(output.text).rejects.toThrow(message);
    expect(model.calls).toHaveLength(0);
  });
});

describe('a memory call option on an agent without memory', () => {
  it('is a TypeError saying so; the model is never called', async () => {
    const model = answer();
    const agent = new Agent({ id: 'support', model });
    const rejected = await agent.generate('hi', { memory: { thread: 't', resource: 'r' } }).catch((thrown: unknown) => thrown);
    expect(rejected).toBeInstanceOf(TypeError);
    expect((rejected as Error).message).toMatch(/options\.memory is set but agent "support" has no memory/);
    const chunks = await lastValueFrom(agent.stream$('hi', { memory: { thread: 't', resource: 'r' } }).pipe(toArray()));
    expect(types(chunks)).toEqual(['start', 'error']);
    expect(model.calls).toHaveLength(0);
  });

  it('the same option on an agent with memory runs and stores the exchange', async () => {
    const storage = new InMemoryStorage();
    const agent = new Agent({ id: 'support', model: answer(), memory: new Memory({ storage }) });
    const result = await agent.generate('hi', { memory: { thread: 't', resource: 'r' } });
    expect(result.text).toBe('ok');
    expect((await storage.getMessages({ threadId: 't' })).map((message) => message.role)).toEqual(['user', 'assistant']);
  });
});

describe('generate([]) is an error like generate("")', () => {
  it.each([
    ['[]', []],
    ["''", ''],
  ])('%s: InvalidMessageError at the root, from generate(), stream$() and stream(); nothing stored; no model call', async (_name, input) => {
    const storage = new InMemoryStorage();
    const model = answer();
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }) });
    await agent.generate('first', { memory: { thread: 't', resource: 'r' } });
    const before = await storage.getMessages({ threadId: 't' });

    const rejected = await agent.generate(input, { memory: { thread: 't', resource: 'r' } }).catch((thrown: unknown) => thrown);
    expect(InvalidMessageError.isInstance(rejected)).toBe(true);
    expect((rejected as InvalidMessageError).message).toMatch(/Invalid message at \(root\): must not be empty/);
    const chunks = await lastValueFrom(agent.stream$(input).pipe(toArray()));
    expect(types(chunks)).toEqual(['start', 'error']);
    expect(InvalidMessageError.isInstance(errorOf(chunks))).toBe(true);
    expect(model.calls).toHaveLength(1);
    expect(await storage.getMessages({ threadId: 't' })).toEqual(before);
  });
});

describe('bad call options end the run inside the stream', () => {
  it('at subscription, synchronously: one start, one error chunk with the TypeError, then complete (marble)', () => {
    const agent = new Agent({ id: 'a', model: answer() });
    createTestScheduler(expect).run(({ expectObservable }) => {
      const run$ = agent.stream$('Hi', { maxSteps: -1 } as AgentCallOptions);
      expectObservable(run$).toBe('(se|)', {
        s: makeChunk('run', 'start', {}),
        e: makeChunk('run', 'error', { error: new TypeError('options.maxSteps must be a whole number ≥ 1 (got number -1).') }),
      });
    });
  });

  it("the error chunk carries the caller's runId when it is a valid one, and 'run' when the runId itself is bad", async () => {
    const agent = new Agent({ id: 'a', model: answer() });
    const named = await lastValueFrom(agent.stream$('', { runId: 'run-42' }).pipe(toArray()));
    expect(named.map((chunk) => [chunk.type, chunk.runId])).toEqual([['start', 'run-42'], ['error', 'run-42']]);
    const badId = await lastValueFrom(agent.stream$('Hi', { runId: 42 } as unknown as AgentCallOptions).pipe(toArray()));
    expect(badId.map((chunk) => [chunk.type, chunk.runId])).toEqual([['start', 'run'], ['error', 'run']]);
    expect(errorOf(badId)).toBeInstanceOf(TypeError);
  });

  it('options that are not an object (null) are the TypeError of the run, not a crash before it', async () => {
    const chunks = await lastValueFrom(new Agent({ id: 'a', model: answer() }).stream$('Hi', null as unknown as AgentCallOptions).pipe(toArray()));
    expect(chunks.map((chunk) => [chunk.type, chunk.runId])).toEqual([['start', 'run'], ['error', 'run']]);
    expect((errorOf(chunks) as Error).message).toMatch(/options must be an object/);
  });

  it('a second subscription checks again (the check runs per subscription, not when stream$ is called)', async () => {
    const agent = new Agent({ id: 'a', model: answer() });
    const run$ = agent.stream$('', {});
    for (let subscription = 0; subscription < 2; subscription++) {
      expect(InvalidMessageError.isInstance(errorOf(await lastValueFrom(run$.pipe(toArray()))))).toBe(true);
    }
  });
});
