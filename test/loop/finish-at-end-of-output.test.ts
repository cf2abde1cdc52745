/**
 * `finish` reaches the output processors once, at the end of the last step's output, before that
 * step's message is built (the reference's order): what a processor does there is part of the step.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { checkBracketing, checkLifecycle } from '../reliability/support/invariants.js';

describe('finish at the end of the output', () => {
  it('text a processor holds until finish is in the stream, the stored reply, processOutputStep and generate()', async () => {
    const storage = new InMemoryStorage();
    let seenByOutputStep = '';
    // holds every delta; at finish it returns the held text, upper-cased, as one delta in place of
    // finish (a hook returns one chunk; the runtime keeps its own finish for the run's end)
    const holdAll: Processor = {
      id: 'hold-all',
      processOutputStream: ({ part, state }) => {
        if (part.type === 'text-delta') {
          state.text = `${(state.text as string | undefined) ?? ''}${part.payload.text}`;
          return null;
        }
        if (part.type === 'finish' && typeof state.text === 'string') {
          return { type: 'text-delta', runId: part.runId, from: part.from, payload: { id: 'late', text: state.text.toUpperCase() } };
        }
        return part;
      },
      processOutputStep: ({ text }) => {
        seenByOutputStep = text;
      },
    };
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('quiet words', { id: 't' }), finishPart()] }), outputProcessors: [holdAll], memory: new Memory({ storage }) });
    const chunks = await lastValueFrom(agent.stream$('x', { memory: { thread: 't1', resource: 'u' } }).pipe(toArray()));
    const text = chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join('');
    expect(text).toBe('QUIET WORDS');
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(chunks.filter((chunk) => chunk.type === 'finish')).toHaveLength(1);
    // the delta invented at finish is bracketed by the runtime (a text-start before it, a text-end after)
    expect(checkLifecycle(chunks, true)).toEqual([]);
    expect(checkBracketing(chunks, true)).toEqual([]);
    expect(seenByOutputStep).toBe('QUIET WORDS');
    const stored = JSON.stringify(await storage.getMessages({ threadId: 't1' }));
    expect(stored).toContain('QUIET WORDS');
    expect(stored).not.toContain('quiet words');
    const result = await new Agent({ id: 'b', model: mockModel({ parts: [...textParts('quiet words', { id: 't' }), finishPart()] }), outputProcessors: [holdAll] }).generate('x');
    expect(result.text).toBe('QUIET WORDS');
  });

  it('an abort with retry at finish rejects the attempt like one from processOutputStep: the step runs again', async () => {
    let attempts = 0;
    const strict: Processor = {
      id: 'strict',
      processOutputStream: ({ part, abort, retryCount }) => {
        if (part.type === 'finish') {
          attempts++;
          if (retryCount === 0) abort('say it again', { retry: true });
        }
        return part;
      },
    };
    const model = mockModel({ parts: ({ callIndex }) => [...textParts(callIndex === 0 ? 'first' : 'second'), finishPart()] });
    const result = await new Agent({ id: 'a', model, outputProcessors: [strict], maxProcessorRetries: 1 }).generate('x');
    expect(result.text).toBe('second');
    expect(attempts).toBe(2);
    expect(result.steps.map((step) => [step.text, step.tripwire?.reason])).toEqual([
      ['', 'say it again'],
      ['second', undefined],
    ]);
  });

  it('a tool step sends no finish; only the last step does', async () => {
    const seen: string[] = [];
    const recorder: Processor = {
      id: 'recorder',
      processOutputStream: ({ part }) => {
        if (part.type === 'step-finish') seen.push(`step-finish ${part.payload.stepNumber}`);
        if (part.type === 'finish' || part.type === 'tool-result') seen.push(part.type);
        return part;
      },
    };
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...toolCallParts('noop', {}), finishPart('tool-calls')] : [...textParts('done'), finishPart()],
    });
    await new Agent({ id: 'a', model, outputProcessors: [recorder], tools: { noop: { description: 'n', execute: () => 'ok' } } }).generate('x');
    expect(seen).toEqual(['tool-result', 'step-finish 0', 'finish', 'step-finish 1']);
  });
});
