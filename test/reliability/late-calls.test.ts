/**
 * Issue 13 §1: nothing a processor or tool does after its call is over takes the process down.
 * A late `abort()` (from a timer the processor started, after the hook returned) is ignored and
 * reported to `onViolation` (whose throws are swallowed); a late `writer.custom()` (after the run
 * ended) is dropped. Uncaught exceptions and unhandled rejections are collected while each test runs
 * and fail it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import type { ProcessorStreamWriter } from '../../src/contract/stream-writer.js';
import type { AbortFunction, Processor, ProcessorViolation } from '../../src/contract/processor-types.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';

const escaped: unknown[] = [];
const onUncaught = (error: unknown): void => void escaped.push(error);

beforeEach(() => {
  escaped.length = 0;
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
});
afterEach(() => {
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
});

const later = (ms = 5): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function textModel(text = 'Hello there') {
  return mockModel({ parts: [...textParts(text), finishPart('stop')] });
}

describe('a late abort() is ignored and reported, never thrown into nowhere', () => {
  it.each([
    'processInput',
    'processInputStep',
    'processLLMRequest',
    'processOutputStream',
    'processOutputStep',
    'processOutputResult',
  ] as const)('abort() from a timer %s started, after the run ended', async (hook) => {
    const violations: ProcessorViolation[] = [];
    let fired: (() => void) | undefined;
    const timerDone = new Promise<void>((resolve) => (fired = resolve));
    let started = false;
    const processor = {
      id: 'late-guard',
      onViolation: (violation: ProcessorViolation) => {
        violations.push(violation);
      },
      [hook]: ({ abort, part }: { abort: AbortFunction; part?: { type: string } }) => {
        if (!started) {
          started = true;
          setTimeout(() => {
            abort('too late', { metadata: { hook } });
            fired?.();
          }, 1);
        }
        return hook === 'processOutputStream' ? part : undefined;
      },
    } as unknown as Processor;
    const isInput = ['processInput', 'processInputStep', 'processLLMRequest'].includes(hook);
    const agent = new Agent({ id: 'a', model: textModel(), [isInput ? 'inputProcessors' : 'outputProcessors']: [processor] });
    const result = await agent.generate('Hi');
    expect(result.text).toBe('Hello there');
    expect(result.tripwire).toBeUndefined();
    await timerDone;
    await later();
    expect(escaped).toEqual([]);
    expect(violations).toHaveLength(1);
    expect(violations[0]?.message).toBe(`abort() called after ${hook} returned (ignored): too late`);
    expect(violations[0]?.detail).toMatchObject({ late: true, hook, reason: 'too late', options: { metadata: { hook } } });
  });

  it('swallows what onViolation throws (and rejects with) for a late abort', async () => {
    let abortLater: AbortFunction | undefined;
    const throwing: Processor = {
      id: 'throwing-reporter',
      onViolation: () => {
        throw new Error('reporter broke');
      },
      processInput: ({ abort }) => {
        abortLater = abort;
      },
    };
    const rejecting: Processor = {
      id: 'rejecting-reporter',
      onViolation: () => Promise.reject(new Error('reporter rejected')),
      processInput: ({ abort }) => {
        if (abortLater !== undefined) (rejecting as { keep?: AbortFunction }).keep = abort;
      },
    };
    const agent = new Agent({ id: 'a', model: textModel(), inputProcessors: [throwing, rejecting] });
    await agent.generate('Hi');
    expect(abortLater).toBeDefined();
    expect(() => abortLater?.('late')).not.toThrow();
    expect(() => (rejecting as { keep?: AbortFunction }).keep?.('late')).not.toThrow();
    await later();
    expect(escaped).toEqual([]);
  });

  it('an abort() a hook makes while it runs still aborts (the guard is not weakened)', async () => {
    const processor: Processor = {
      id: 'guard',
      processOutputStream: async ({ part, abort }) => {
        await later(1);
        if (part.type === 'text-delta') abort('blocked');
        return part;
      },
    };
    const agent = new Agent({ id: 'a', model: textModel(), outputProcessors: [processor] });
    const result = await agent.generate('Hi');
    expect(result.tripwire).toMatchObject({ reason: 'blocked', processorId: 'guard' });
    expect(escaped).toEqual([]);
  });
});

describe('a late writer.custom() is dropped', () => {
  it('from a processor hook and from a tool, after the run ended', async () => {
    let hookWriter: ProcessorStreamWriter | undefined;
    let streamWriter: ProcessorStreamWriter | undefined;
    let toolWriter: { custom(chunk: { type: `data-${string}`; data: unknown }): Promise<void> } | undefined;
    const processor: Processor = {
      id: 'keeps-writers',
      processInputStep: ({ writer }) => {
        hookWriter = writer;
      },
      processOutputStream: ({ part, writer }) => {
        streamWriter = writer;
        return part;
      },
    };
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...toolCallParts('note', { text: 'x' }), finishPart('tool-calls')] : [...textParts('Done.'), finishPart('stop')],
    });
    const agent = new Agent({
      id: 'a',
      model,
      inputProcessors: [processor],
      outputProcessors: [processor],
      tools: {
        note: {
          inputSchema: z.object({ text: z.string() }),
          execute: async (_input: { text: string }, options: { writer?: typeof toolWriter }) => {
            toolWriter = options.writer;
            return 'ok';
          },
        },
      },
    });
    const chunks: string[] = [];
    const output = await agent.stream('Hi');
    for await (const chunk of output.fullStream) chunks.push(chunk.type);
    expect(chunks.at(-1)).toBe('finish');
    expect(hookWriter && streamWriter && toolWriter).toBeTruthy();
    for (const writer of [hookWriter, streamWriter, toolWriter]) {
      await expect(writer?.custom({ type: 'data-late', data: 1 })).resolves.toBeUndefined();
    }
    await later();
    expect(escaped).toEqual([]);
  });
});
