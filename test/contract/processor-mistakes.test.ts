/**
 * Mistakes get the same care as options (issue 23 §8): a misspelt hook, a processor in a list that
 * runs none of its hooks, an operator given a processor instead of an array, runProcessor with
 * arguments missing, a hook returning an AI SDK-shaped part, a processOutputStream that drops every
 * text chunk of a run. Each is a clear error, or one console.warn per processor (src/contract/warn-once.ts).
 */
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { firstValueFrom, from, lastValueFrom, of, toArray } from 'rxjs';
import { Agent } from '../../src/loop/agent.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { processInput } from '../../src/operators/process-input.js';
import { chunk, createTestScheduler, runProcessor, scriptedModel } from '../../src/testing/index.js';
import { BatchPartsProcessor } from '../../src/processors/index.js';
import { listWith, testContext, user } from '../operators/helpers.js';

const model = () => scriptedModel({ rules: [], fallback: { text: 'Hello there, how can I help?' } });
let warn: MockInstance<typeof console.warn>;
beforeEach(() => {
  warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
});
afterEach(() => warn.mockRestore());
const warnings = () => warn.mock.calls.map((call) => String(call[0]));

describe('a misspelt hook', () => {
  it('new Agent: a TypeError naming the list, the processor, the misspelt method and the hook it resembles', () => {
    const processor = { id: 'shouty', processOutputStreem: ({ part }: { part: ChunkType }) => part };
    expect(() => new Agent({ id: 'a', instructions: 'x', model: model(), outputProcessors: [processor as Processor] })).toThrow(
      /config\.outputProcessors\[0\] \(processor "shouty"\) has a method processOutputStreem, which is not a hook.*did you mean processOutputStream\?/,
    );
  });

  it('a class method with the wrong case (processinput) and a call option list: generate() rejects with the TypeError', async () => {
    class Trim {
      readonly id = 'trim';
      processinput() {
        return undefined;
      }
    }
    const agent = new Agent({ id: 'a', instructions: 'x', model: model() });
    await expect(agent.generate('hi', { inputProcessors: [new Trim() as Processor] })).rejects.toThrow(
      /options\.inputProcessors\[0\] \(processor "trim"\) has a method processinput.*did you mean processInput\?/,
    );
  });

  it('helper methods that merely start with "process" are not hooks and are fine (processText, processPart)', async () => {
    const processor = {
      id: 'helpers',
      processText: (text: string) => text.trim(),
      processPart: (part: ChunkType) => part,
      processOutputStream: ({ part }: { part: ChunkType }) => part,
    };
    const { text } = await new Agent({ id: 'a', instructions: 'x', model: model(), outputProcessors: [processor] }).generate('hi');
    expect(text).toBe('Hello there, how can I help?');
  });

  it('an operator used on its own: the misspelt processor is an error notification naming the hook', async () => {
    const processor = { id: 'typo', processOutputStrem: ({ part }: { part: ChunkType }) => part } as unknown as Processor;
    const error = await lastValueFrom(of(chunk.textDelta('hi')).pipe(processOutputStream([processor]), toArray())).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect(String((error as Error).message)).toMatch(/processOutputStream\(processors\) \(processor "typo"\) has a method processOutputStrem.*did you mean processOutputStream\?/);
  });
});

describe('a processor in a list that runs none of its hooks', () => {
  it('an output-only processor in inputProcessors: one warning naming it, the list and where it belongs', async () => {
    const outputOnly: Processor = { id: 'redactor', processOutputStream: ({ part }) => part };
    const agent = new Agent({ id: 'a', instructions: 'x', model: model(), inputProcessors: [outputOnly] });
    await agent.generate('hi');
    new Agent({ id: 'b', instructions: 'x', model: model(), inputProcessors: [outputOnly] });
    expect(warnings()).toEqual([
      '[rxagent] processor "redactor" is in inputProcessors, which runs none of its hooks (processOutputStream): it does nothing there. ' +
        'Put it in outputProcessors (inputProcessors runs processInput, processInputStep, processLLMRequest, processLLMResponse, processAPIError).',
    ]);
  });

  it('no warning for a processor with a hook of the list, nor for one with both sides in both lists', () => {
    const both: Processor = { id: 'both', processInput: () => undefined, processOutputStream: ({ part }) => part };
    const errorOnly: Processor = { id: 'retry', processAPIError: () => ({ retry: false }) };
    new Agent({ id: 'a', instructions: 'x', model: model(), inputProcessors: [both, errorOnly], outputProcessors: [both, errorOnly], errorProcessors: [errorOnly] });
    expect(warnings()).toEqual([]);
  });

  it('an input-only processor in errorProcessors is warned about (errorProcessors runs processAPIError only)', () => {
    const inputOnly: Processor = { id: 'normalize', processInput: () => undefined };
    new Agent({ id: 'a', instructions: 'x', model: model(), errorProcessors: [inputOnly] });
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toContain('processor "normalize" is in errorProcessors');
    expect(warnings()[0]).toContain('Put it in inputProcessors');
  });
});

describe('an operator given a processor instead of an array', () => {
  it('processOutputStream(processor): a TypeError saying to pass [processor]', async () => {
    const noSecrets: Processor = { id: 'no-secrets', processOutputStream: ({ part }) => part };
    const error = await firstValueFrom(of(chunk.textDelta('hi')).pipe(processOutputStream(noSecrets as unknown as Processor[]))).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('processOutputStream(processors) expects an array of processors, got processor "no-secrets" itself: pass [processor] (a one-element array).');
  });

  it('processInput(processor), as a marble: the error notification at once', () => {
    const processor: Processor = { id: 'trim', processInput: () => undefined };
    const context = testContext({ messageList: listWith([user('u1', 'hello')]) });
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const source = cold('a|', { a: context.messageList });
      expectObservable(source.pipe(processInput(processor as unknown as Processor[], context))).toBe(
        '#',
        undefined,
        new TypeError('processInput(processors) expects an array of processors, got processor "trim" itself: pass [processor] (a one-element array).'),
      );
    });
  });
});

describe('runProcessor with arguments missing or swapped', () => {
  const guard: Processor = { id: 'guard', processOutputStream: ({ part }) => part, processToolResult: () => undefined };

  it('processOutputStream without part: says what to pass', async () => {
    await expect(runProcessor(guard, 'processOutputStream', {} as never)).rejects.toThrow(
      `runProcessor(processor "guard", 'processOutputStream', args): processOutputStream needs args.part (the chunk to process, e.g. chunk.textDelta('hi') from rxagent/testing).`,
    );
  });

  it('processToolResult without toolName/result: names each', async () => {
    await expect(runProcessor(guard, 'processToolResult', { toolCallId: 'c1' } as never)).rejects.toThrow(/needs args\.toolName \(the tool's name\), args\.result \(the tool's result\)/);
  });

  it('a misspelt hook name, the hook first, a processor without the hook', async () => {
    await expect(runProcessor(guard, 'processOutputStreem' as never, { part: chunk.textDelta('x') } as never)).rejects.toThrow(
      /"processOutputStreem" is not a hook \(did you mean processOutputStream\?\)/,
    );
    await expect(runProcessor('processOutputStream' as never, guard as never)).rejects.toThrow(/the hook name comes second/);
    await expect(runProcessor(guard, 'processInput')).rejects.toThrow('runProcessor: processor "guard" has no processInput hook.');
  });

  it('still runs a correct call', async () => {
    const outcome = await runProcessor(guard, 'processOutputStream', { part: chunk.textDelta('hi') });
    expect(outcome.result).toEqual(chunk.textDelta('hi'));
  });
});

describe('a hook returning an AI SDK-shaped stream part', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['text-delta with delta (AI SDK 5+)', { type: 'text-delta', id: 't1', delta: 'HI' }, /AI SDK stream part \(\{ type: 'text-delta', id, delta \}\).*payload: \{ \.\.\.part\.payload, text \}/],
    ['text-delta with textDelta (AI SDK 4)', { type: 'text-delta', textDelta: 'HI' }, /AI SDK stream part \(\{ type: 'text-delta', textDelta \}\)/],
    ['tool-call with input', { type: 'tool-call', toolCallId: 'c', toolName: 'x', input: '{}' }, /AI SDK stream part \(\{ type: 'tool-call', toolCallId, toolName, input \}\)/],
  ];
  for (const [name, returned, message] of cases) {
    it(`${name}: the run ends with a ProcessorError that says what an rxagent chunk looks like`, async () => {
      const processor: Processor = {
        id: 'rewriter',
        processOutputStream: ({ part }) => (part.type === returned['type'] ? (returned as unknown as ChunkType) : part),
      };
      const scripted =
        returned['type'] === 'tool-call'
          ? scriptedModel({ rules: [{ match: () => true, reply: { toolCalls: [{ toolName: 'x', args: {} }] } }] })
          : model();
      const chunks = await lastValueFrom(
        new Agent({ id: 'a', instructions: 'x', model: scripted, outputProcessors: [processor], tools: { x: { execute: () => 1 } } }).stream$('hi').pipe(toArray()),
      );
      const last = chunks.at(-1)!;
      expect(last.type).toBe('error');
      const error = (last as Extract<ChunkType, { type: 'error' }>).payload.error;
      expect(ProcessorError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(message);
      expect((error as ProcessorError).processorId).toBe('rewriter');
    });
  }
});

describe('a processOutputStream that drops every text chunk of a run', () => {
  it('warns once, naming the processor and the fix; the run itself still finishes', async () => {
    const dropAll: Processor = { id: 'drop-all', processOutputStream: ({ part }) => (part.type === 'text-delta' ? null : part) };
    const agent = new Agent({ id: 'a', instructions: 'x', model: model(), outputProcessors: [dropAll] });
    const first = await agent.generate('hi');
    await agent.generate('again');
    expect(first.text).toBe('');
    expect(first.finishReason).toBe('stop');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatch(/^\[rxagent\] processor "drop-all": processOutputStream dropped every text chunk of a run \(returned null\/undefined for \d+ text-delta chunks?\)/);
    expect(warnings()[0]).toContain('return { ...part, payload: { ...part.payload, text } }, to end the run call abort(reason)');
  });

  it('no warning when some text gets through, when text is held and released (BatchPartsProcessor), or when the run aborts', async () => {
    const dropFirst: Processor = {
      id: 'drop-first',
      processOutputStream: ({ part, state }) => {
        if (part.type !== 'text-delta') return part;
        state['seen'] = ((state['seen'] as number | undefined) ?? 0) + 1;
        return state['seen'] === 1 ? null : part;
      },
    };
    const blocker: Processor = { id: 'blocker', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' ? abort('no') : part) };
    const words = scriptedModel({ rules: [], fallback: { text: 'one two three four five six seven' } });
    await new Agent({ id: 'a', instructions: 'x', model: words, outputProcessors: [dropFirst] }).generate('hi');
    const batched = await new Agent({ id: 'b', instructions: 'x', model: words, outputProcessors: [new BatchPartsProcessor({ batchSize: 100 })] }).generate('hi');
    expect(batched.text).toBe('one two three four five six seven');
    await new Agent({ id: 'c', instructions: 'x', model: words, outputProcessors: [blocker] }).generate('hi');
    expect(warnings()).toEqual([]);
  });

  it('the operator on its own, over a stream of chunks ending with finish, warns the same way', async () => {
    const dropAll: Processor = { id: 'op-drop-all', processOutputStream: ({ part }) => (part.type === 'text-delta' ? undefined : part) };
    const out = await lastValueFrom(from([chunk.textDelta('a'), chunk.textDelta('b'), chunk.finish()]).pipe(processOutputStream([dropAll]), toArray()));
    expect(out.map((part) => part.type)).toEqual(['finish']);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toContain('processor "op-drop-all"');
    expect(warnings()[0]).toContain('2 text-delta chunks');
  });
});
