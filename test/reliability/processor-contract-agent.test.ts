/**
 * The hook contract through the public Agent (issues 13 and 15): processorTimeoutMs (agent option
 * and per-call override), frozen and shared processors, tripwires from another package, the first
 * abort winning, sendSignal reaching the next model request, llmRequestStage, and `[]` from
 * processInput removing the new input.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';

function textModel(text = 'Hello there') {
  return mockModel({ parts: [...textParts(text), finishPart('stop')] });
}

/** The texts of a prompt's user turns. */
function userTexts(prompt: ReadonlyArray<{ role: string; content: unknown }> | undefined): string[] {
  return (prompt ?? [])
    .filter((message) => message.role === 'user')
    .map((message) => (message.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join(''));
}

/** An output processor that records the run's messages at the end (what memory would store). */
function listRecorder(): { processor: Processor; texts: string[] } {
  const texts: string[] = [];
  return {
    texts,
    processor: {
      id: 'list-recorder',
      processOutputResult: ({ messageList }) => {
        for (const message of messageList.get.all.db()) texts.push(`${message.role}:${JSON.stringify(message.content.parts)}`);
      },
    },
  };
}

class ReferenceTripWire extends Error {
  constructor(
    reason: string,
    readonly options: { retry?: boolean; metadata?: unknown } = {},
    readonly processorId?: string,
  ) {
    super(reason);
  }
}
Object.defineProperty(ReferenceTripWire, 'name', { value: 'TripWire' });

describe('processorTimeoutMs', () => {
  const hanging: Processor = { id: 'hanging-judge', processInput: () => new Promise<undefined>(() => undefined) };

  it('ends a run whose hook never settles with a ProcessorError naming processor, hook and timeout', async () => {
    const agent = new Agent({ id: 'a', model: textModel(), inputProcessors: [hanging], processorTimeoutMs: 20 });
    const chunks = await lastValueFrom(agent.stream$('Hi').pipe(toArray()));
    const terminal = chunks.at(-1);
    expect(terminal?.type).toBe('error');
    const error = (terminal as { payload: { error: unknown } }).payload.error;
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ processorId: 'hanging-judge', hook: 'processInput' });
    expect((error as Error).message).toContain('processorTimeoutMs (20 ms)');
    await expect(agent.generate('Hi')).rejects.toMatchObject({ processorId: 'hanging-judge' });
  });

  it('a per-call value overrides the agent option', async () => {
    const agent = new Agent({ id: 'a', model: textModel(), inputProcessors: [hanging], processorTimeoutMs: 60_000 });
    await expect(agent.generate('Hi', { processorTimeoutMs: 15 })).rejects.toThrow(/processorTimeoutMs \(15 ms\)/);
  });

  it('is validated: a whole number ≥ 1', async () => {
    expect(() => new Agent({ id: 'a', model: textModel(), processorTimeoutMs: 0 })).toThrow(/config\.processorTimeoutMs/);
    const agent = new Agent({ id: 'a', model: textModel() });
    await expect(agent.generate('Hi', { processorTimeoutMs: 1.5 })).rejects.toThrow(/processorTimeoutMs/);
  });
});

describe('processorIndex', () => {
  it('a frozen processor runs, and its hooks get their index', async () => {
    const seen: number[] = [];
    const spec: Processor = {
      id: 'frozen',
      processOutputStream: ({ part, processorIndex }) => {
        if (part.type === 'finish') seen.push(processorIndex);
        return part;
      },
    };
    const frozen = Object.freeze(spec);
    const agent = new Agent({ id: 'a', model: textModel(), outputProcessors: [{ id: 'first', processOutputStream: ({ part }) => part }, frozen] });
    const result = await agent.generate('Hi');
    expect(result.text).toBe('Hello there');
    expect(seen).toEqual([1]);
  });

  it('one instance shared by two agents at different positions gets each run’s own index', async () => {
    const seen: Array<[string, number]> = [];
    const shared: Processor = {
      id: 'shared',
      processInputStep: async ({ processorIndex, runId }) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push([runId, processorIndex]);
      },
    };
    const filler: Processor = { id: 'filler', processInput: () => undefined };
    const first = new Agent({ id: 'first', model: textModel(), inputProcessors: [shared] });
    const second = new Agent({ id: 'second', model: textModel(), inputProcessors: [filler, filler, shared] });
    await Promise.all([first.generate('Hi', { runId: 'r1' }), second.generate('Hi', { runId: 'r2' })]);
    expect(seen.sort()).toEqual([
      ['r1', 0],
      ['r2', 2],
    ]);
  });
});

describe('tripwires from the reference implementation, and the first abort winning', () => {
  it('a reference TripWire thrown by a processor is a tripwire with its reason, options and processor id', async () => {
    const regex: Processor = {
      id: 'regex-filter',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta') throw new ReferenceTripWire('Blocked: secret', { metadata: { rule: 'secret' } }, 'regex-filter');
        return part;
      },
    };
    const agent = new Agent({ id: 'a', model: textModel(), outputProcessors: [regex] });
    const result = await agent.generate('Hi');
    expect(result.tripwire).toMatchObject({ reason: 'Blocked: secret', metadata: { rule: 'secret' }, processorId: 'regex-filter' });
    expect(result.finishReason).toBe('other');
    expect(result.text).toBe('');
  });

  it('an abort the processor re-wraps in its own catch keeps its reason (the reference pattern)', async () => {
    const moderation: Processor = {
      id: 'moderation',
      processInput: async ({ abort }) => {
        try {
          abort('Content flagged for: hate', { metadata: { categories: ['hate'] } });
        } catch (error) {
          if (error instanceof ReferenceTripWire) throw error;
          throw new Error(`Moderation failed: ${String(error)}`);
        }
      },
    };
    const model = textModel();
    const agent = new Agent({ id: 'a', model, inputProcessors: [moderation] });
    const result = await agent.generate('something hateful');
    expect(result.tripwire).toMatchObject({ reason: 'Content flagged for: hate', metadata: { categories: ['hate'] }, processorId: 'moderation' });
    expect(model.calls).toHaveLength(0);
  });
});

describe('sendSignal', () => {
  it('reaches the next model request (the retried one) after the history, once, and is never stored', async () => {
    const model = mockModel({
      error: ({ callIndex }: { callIndex: number }) => (callIndex === 0 ? new Error('does not support assistant message prefill') : undefined),
      parts: [...textParts('Continued.'), finishPart('stop')],
    });
    const prefill: Processor = {
      id: 'prefill-error-handler',
      processAPIError: async ({ error, retryCount, sendSignal }) => {
        if (retryCount > 0 || !String((error as Error).message).includes('prefill')) return undefined;
        await sendSignal({
          type: 'reactive',
          tagName: 'system-reminder',
          contents: 'continue',
          attributes: { type: 'anthropic-prefill-processor-retry' },
          metadata: { message: 'Continuing after prefill error' },
        });
        return { retry: true };
      },
    };
    const recorder = listRecorder();
    const agent = new Agent({ id: 'a', model, errorProcessors: [prefill], outputProcessors: [recorder.processor] });
    const result = await agent.generate('Hi');
    expect(result.text).toBe('Continued.');
    expect(model.calls).toHaveLength(2);
    expect(userTexts(model.calls[0]?.prompt)).toEqual(['Hi']);
    expect(userTexts(model.calls[1]?.prompt)).toEqual(['Hi', '<system-reminder type="anthropic-prefill-processor-retry">continue</system-reminder>']);
    expect(recorder.texts.length).toBeGreaterThan(0);
    expect(recorder.texts.join('\n')).not.toContain('system-reminder');
  });
});

describe('llmRequestStage', () => {
  it('a processor with processInputStep and processLLMRequest trims only the outgoing prompt', async () => {
    const model = textModel('ok');
    const stages: unknown[] = [];
    const limiter: Processor = {
      id: 'token-limiter',
      processInputStep: ({ llmRequestStage, messageList, messages }) => {
        stages.push(llmRequestStage);
        if (llmRequestStage) return undefined; // trims at the prompt stage instead
        messageList.removeByIds(messages.slice(0, -1).map((message) => message.id));
        return undefined;
      },
      processLLMRequest: ({ prompt }) => ({ prompt: [...prompt.filter((message) => message.role === 'system'), ...prompt.slice(-1)] }),
    };
    const recorder = listRecorder();
    const agent = new Agent({ id: 'a', model, inputProcessors: [limiter], outputProcessors: [recorder.processor] });
    const result = await agent.generate(['first question', 'second question', 'third question']);
    expect(stages).toEqual([true]);
    expect(userTexts(model.calls[0]?.prompt)).toEqual(['third question']);
    expect(result.text).toBe('ok');
    // The run's own messages (what memory would store) keep all three.
    const stored = recorder.texts.join('\n');
    for (const question of ['first question', 'second question', 'third question']) expect(stored).toContain(question);
  });
});

describe('[] from processInput', () => {
  it('a filtered array removes the flagged input message: it never reaches the model or the run\'s messages', async () => {
    const model = textModel('Answer from history');
    const filter: Processor = {
      id: 'moderation',
      processInput: ({ messages }) => messages.filter((message) => !JSON.stringify(message.content).includes('flagged')),
    };
    const recorder = listRecorder();
    const agent = new Agent({ id: 'a', model, inputProcessors: [filter], outputProcessors: [recorder.processor] });
    const result = await agent.generate([
      { role: 'user', content: 'an earlier, fine question' },
      { role: 'user', content: 'this is flagged content' },
    ]);
    expect(model.calls).toHaveLength(1);
    expect(JSON.stringify(model.calls[0]?.prompt)).not.toContain('flagged');
    expect(userTexts(model.calls[0]?.prompt)).toEqual(['an earlier, fine question']);
    expect(result.text).toBe('Answer from history');
    expect(recorder.texts.join('\n')).not.toContain('flagged');
  });

  it('[] (all of the new input flagged): the model gets the stored history only, and memory stores none of it', async () => {
    const storage = new InMemoryStorage();
    const memory = new Memory({ storage });
    const model = textModel('Answer from history');
    const filterAll: Processor = {
      id: 'moderation',
      processInput: ({ messages }) => (messages.some((message) => JSON.stringify(message.content).includes('flagged')) ? [] : messages),
    };
    const agent = new Agent({ id: 'a', model, memory, inputProcessors: [filterAll] });
    const call = { memory: { thread: 'thread-1', resource: 'user-1' } };
    await agent.generate('a fine first question', call);
    const result = await agent.generate('this is flagged content', call);
    expect(model.calls).toHaveLength(2);
    expect(JSON.stringify(model.calls[1]?.prompt)).not.toContain('flagged');
    expect(userTexts(model.calls[1]?.prompt)).toEqual(['a fine first question']);
    expect(result.text).toBe('Answer from history');
    const stored = await storage.getMessages({ threadId: 'thread-1' });
    expect(JSON.stringify(stored)).not.toContain('flagged');
  });

  it('while [] from processOutputStep still changes nothing (the specification’s QualityGuardrail passes with [])', async () => {
    const guardrail: Processor = { id: 'quality', processOutputStep: () => [] };
    const recorder = listRecorder();
    const agent = new Agent({ id: 'a', model: textModel('Fine answer'), outputProcessors: [guardrail, recorder.processor] });
    const result = await agent.generate('Hi');
    expect(result.text).toBe('Fine answer');
    const stored = recorder.texts.join('\n');
    expect(stored).toContain('Fine answer');
    expect(stored).toContain('Hi');
  });
});

describe('a text-delta without text never adds "undefined" to the reply', () => {
  it('from the provider: a delta-less part counts as empty text', async () => {
    const model = mockModel({
      parts: [
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hello' },
        { type: 'text-delta', id: 't' } as unknown as { type: 'text-delta'; id: string; delta: string },
        { type: 'text-delta', id: 't', delta: ' world' },
        { type: 'text-end', id: 't' },
        finishPart('stop'),
      ],
    });
    const agent = new Agent({ id: 'a', model });
    const result = await agent.generate('Hi');
    expect(result.text).toBe('Hello world');
    const output = await agent.stream('Hi');
    let streamed = '';
    for await (const text of output.textStream) streamed += text;
    expect(streamed).toBe('Hello world');
  });

  it('from a processor: a text-delta it makes without text ends the run with a ProcessorError naming payload.text', async () => {
    const mangler: Processor = {
      id: 'mangler',
      processOutputStream: ({ part }) => (part.type === 'text-delta' ? ({ ...part, payload: { id: part.payload.id } } as unknown as typeof part) : part),
    };
    const agent = new Agent({ id: 'a', model: textModel(), outputProcessors: [mangler] });
    const chunks = await lastValueFrom(agent.stream$('Hi').pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('error');
    const error = (chunks.at(-1) as { payload: { error: Error } }).payload.error;
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect(error.message).toContain('payload.text');
    expect(JSON.stringify(chunks)).not.toContain('undefined');
  });
});
