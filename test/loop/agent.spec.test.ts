/**
 * Whole Agent runs on virtual time (issue 14 point 3): with a marble model and synchronous
 * processors nothing in the loop makes a promise hop, so `agent.stream$()` is a marble-testable
 * Observable end to end.
 */
import { describe, expect, it } from 'vitest';
import { delay, map, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { z } from 'zod';
import { APICallError, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { Processor } from '../../src/contract/processor-types.js';
import type { AgentTool } from '../../src/contract/tool-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const [textStart, textDelta, textEnd] = textParts('Hi', { id: 't' }) as [LanguageModelV4StreamPart, LanguageModelV4StreamPart, LanguageModelV4StreamPart];
const parts: Record<string, LanguageModelV4StreamPart> = { s: textStart, d: textDelta, e: textEnd, f: finishPart('stop') };
/**
 * Each chunk as one letter: S start, B step-start, O text-start, t delta, C text-end, K tool-call,
 * R tool-result, T tool-error, E step-finish, F finish, W tripwire, X error.
 */
const letter: Record<string, string> = {
  start: 'S',
  'step-start': 'B',
  'text-start': 'O',
  'text-delta': 't',
  'text-end': 'C',
  'tool-call': 'K',
  'tool-result': 'R',
  'tool-error': 'T',
  'step-finish': 'E',
  finish: 'F',
  tripwire: 'W',
  error: 'X',
  abort: 'A',
  object: 'J',
  'object-result': 'Q',
};
const letters = map((chunk: { type: string }) => letter[chunk.type] ?? '?');

describe('agent.stream$() on virtual time', () => {
  it('a text answer: every chunk at the frame its provider part arrives', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const stream = cold<LanguageModelV4StreamPart>('    ----s-d-e-(f|)', parts);
      const expected = '      (SB)O-t-C-(EF|)';
      const agent = new Agent({ id: 'a', model: mockModel({ stream }) });
      expectObservable(agent.stream$('hello').pipe(letters)).toBe(expected.trim());
      expectSubscriptions(stream.subscriptions).toBe('^---------!');
    });
  });

  it('hooks returning scheduler-timed Observables: every hook of the run waits on virtual time', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const stream = cold<LanguageModelV4StreamPart>('  --s-d-e-(f|)', parts);
      const slow: Processor = {
        id: 'slow',
        processInput: () => of(undefined).pipe(delay(2)),
        processInputStep: () => of(undefined).pipe(delay(3)),
        processOutputResult: () => of(undefined).pipe(delay(2)),
      };
      const agent = new Agent({ id: 'a', model: mockModel({ stream }), inputProcessors: [slow], outputProcessors: [slow] });
      // start at once; processInput 2 frames, processInputStep 3 more, then the model; after the
      // step, processOutputResult 2 frames before finish
      expectObservable(agent.stream$('hello').pipe(letters)).toBe('S----B-O-t-C-E-(F|)');
      expectSubscriptions(stream.subscriptions).toBe('-----^-------!');
    });
  });

  it('structured output: the partial object after its delta, the validated object before step-finish, all on virtual time', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const json: Record<string, LanguageModelV4StreamPart> = {
        s: { type: 'text-start', id: 'j' },
        d: { type: 'text-delta', id: 'j', delta: '{"city":"Oslo"}' },
        e: { type: 'text-end', id: 'j' },
        f: finishPart('stop'),
      };
      const stream = cold<LanguageModelV4StreamPart>('----s-d---e-(f|)', json);
      const agent = new Agent({ id: 'a', model: mockModel({ stream }) });
      const run$ = agent.stream$('Where?', { structuredOutput: { schema: z.object({ city: z.string() }) } });
      expectObservable(run$.pipe(letters)).toBe('(SB)O-(tJ)C-(QEF|)');
    });
  });

  it('unsubscribing mid-answer unsubscribes the provider stream at the same frame', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const stream = cold<LanguageModelV4StreamPart>('----s-d-e-(f|)', parts);
      const agent = new Agent({ id: 'a', model: mockModel({ stream }) });
      expectObservable(agent.stream$('hello').pipe(letters), '^------!').toBe('(SB)O-t');
      expectSubscriptions(stream.subscriptions).toBe('^------!');
    });
  });

  it('a tripwire from a synchronous processOutputStream: text closed, step closed, tripwire, at the frame of the blocked delta', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const stream = cold<LanguageModelV4StreamPart>('----s-d-e-(f|)', parts);
      const guard: Processor = {
        id: 'guard',
        processOutputStream: ({ part, abort }) => (part.type === 'text-delta' ? abort('no') : part),
      };
      const agent = new Agent({ id: 'a', model: mockModel({ stream }), outputProcessors: [guard] });
      expectObservable(agent.stream$('hello').pipe(letters)).toBe('(SB)O-(CEW|)');
      expectSubscriptions(stream.subscriptions).toBe('^-----!');
    });
  });

  it('a processor retry: the rejected attempt is closed with step-finish, the model is resubscribed at once', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold<LanguageModelV4StreamPart>(' ----s-e-(f|)', { s: textStart, e: textEnd, f: finishPart('stop') });
      const second = cold<LanguageModelV4StreamPart>('        ----s-d-e-(f|)', parts);
      const quality: Processor = {
        id: 'quality',
        processOutputStep: ({ text, abort }) => (text === '' ? abort('say something', { retry: true }) : undefined),
      };
      let calls = 0;
      const model = mockModel({ stream: () => (calls++ === 0 ? first : second) });
      const agent = new Agent({ id: 'a', model, maxProcessorRetries: 1, outputProcessors: [quality] });
      expectObservable(agent.stream$('hello').pipe(letters)).toBe('(SB)O-C-(EB)O-t-C-(EF|)');
      expectSubscriptions(first.subscriptions).toBe(' ^-------!');
      expectSubscriptions(second.subscriptions).toBe('--------^---------!');
    });
  });

  it('the caller aborts mid-step: the provider stream is unsubscribed in that frame, the text and step closed, one abort chunk; the commit never runs', () => {
    let committed = false;
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const stream = cold<LanguageModelV4StreamPart>('----s-d-e-(f|)', parts);
      const controller = new AbortController();
      const audit: Processor = { id: 'audit', processOutputResult: () => void (committed = true) };
      const agent = new Agent({ id: 'a', model: mockModel({ stream }), outputProcessors: [audit] });
      expectObservable(agent.stream$('hello', { abortSignal: controller.signal }).pipe(letters)).toBe('(SB)O-t(CEA|)');
      expectSubscriptions(stream.subscriptions).toBe('^------!');
      cold('-------x').subscribe(() => controller.abort('user left'));
    });
    expect(committed).toBe(false);
  });

  describe('a tool step', () => {
    const [addCall] = toolCallParts('add', { a: 1, b: 2 }, { streamInput: false }) as [LanguageModelV4StreamPart];
    const [badCall] = toolCallParts('add', { a: 'one', b: 2 }, { streamInput: false }) as [LanguageModelV4StreamPart];
    /** A synchronous tool with a zod schema: validation and `execute` cost no promise hop. */
    const add = (inputs: unknown[]): AgentTool => ({
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: (input: { a: number; b: number }) => (inputs.push(input), input.a + input.b),
    });
    /** The output of the tool message the second model call was given. */
    const toolOutputIn = (prompt: unknown): unknown =>
      (prompt as Array<{ role: string; content: Array<{ type: string; output?: unknown }> }>)
        .filter((message) => message.role === 'tool')
        .flatMap((message) => message.content)
        .find((part) => part.type === 'tool-result')?.output;

    it('call 1 asks for the tool; the tool runs in the frame call 1 ends, where call 2 is subscribed', () => {
      const inputs: unknown[] = [];
      let model = mockModel({});
      scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const call1 = cold<LanguageModelV4StreamPart>(' ----k-(f|)', { k: addCall, f: finishPart('tool-calls') });
        const call2 = cold<LanguageModelV4StreamPart>('       ------s-d-e-(f|)', parts);
        const expected = '                              (SB)K-(REB)-O-t-C-(EF|)';
        model = mockModel({ stream: ({ callIndex }) => (callIndex === 0 ? call1 : call2) });
        const agent = new Agent({ id: 'a', model, tools: { add: add(inputs) } });
        expectObservable(agent.stream$('1 + 2?').pipe(letters)).toBe(expected.trim());
        expectSubscriptions(call1.subscriptions).toBe('^-----!');
        expectSubscriptions(call2.subscriptions).toBe('------^-----------!');
      });
      expect(inputs).toEqual([{ a: 1, b: 2 }]);
      expect(toolOutputIn(model.calls[1]?.prompt)).toEqual({ type: 'json', value: 3 });
    });

    it('stopWhen met after the tool ran: the step ends as a last step (finish in the same frame), call 2 never subscribed', () => {
      const inputs: unknown[] = [];
      scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const call1 = cold<LanguageModelV4StreamPart>(' ----k-(f|)', { k: addCall, f: finishPart('tool-calls') });
        const call2 = cold<LanguageModelV4StreamPart>('       ------s-d-e-(f|)', parts);
        const expected = '                              (SB)K-(REF|)';
        const model = mockModel({ stream: ({ callIndex }) => (callIndex === 0 ? call1 : call2) });
        const agent = new Agent({ id: 'a', model, tools: { add: add(inputs) }, stopWhen: ({ steps }) => steps.length >= 1 });
        expectObservable(agent.stream$('1 + 2?').pipe(letters)).toBe(expected.trim());
        expectSubscriptions(call1.subscriptions).toBe('^-----!');
        expectSubscriptions(call2.subscriptions).toBe([]);
      });
      expect(inputs).toEqual([{ a: 1, b: 2 }]);
    });

    it('input the schema rejects: a tool-error in the same frame, execute never runs, call 2 sees the error', () => {
      const inputs: unknown[] = [];
      let model = mockModel({});
      scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const call1 = cold<LanguageModelV4StreamPart>(' ----k-(f|)', { k: badCall, f: finishPart('tool-calls') });
        const call2 = cold<LanguageModelV4StreamPart>('       ------s-d-e-(f|)', parts);
        const expected = '                              (SB)K-(TEB)-O-t-C-(EF|)';
        model = mockModel({ stream: ({ callIndex }) => (callIndex === 0 ? call1 : call2) });
        const agent = new Agent({ id: 'a', model, tools: { add: add(inputs) } });
        expectObservable(agent.stream$('one + 2?').pipe(letters)).toBe(expected.trim());
        expectSubscriptions(call1.subscriptions).toBe('^-----!');
        expectSubscriptions(call2.subscriptions).toBe('------^-----------!');
      });
      expect(inputs).toEqual([]);
      expect(JSON.stringify(toolOutputIn(model.calls[1]?.prompt))).toContain('Invalid input for tool');
    });
  });

  it('a retry after a tool step: the rejected attempt is closed, the model asked again with the tool result and the feedback; the tool does not run again', () => {
    const [addCall] = toolCallParts('add', { a: 1, b: 2 }, { streamInput: false }) as [LanguageModelV4StreamPart];
    const inputs: unknown[] = [];
    const add: AgentTool = {
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: (input: { a: number; b: number }) => (inputs.push(input), input.a + input.b),
    };
    const quality: Processor = {
      id: 'quality',
      processOutputStep: ({ text, toolCalls, retryCount, abort }) =>
        toolCalls.length === 0 && retryCount === 0 && text === 'Hi' ? abort('Say the sum.', { retry: true }) : undefined,
    };
    let model = mockModel({});
    scheduler().run(({ cold, expectObservable }) => {
      const call1 = cold<LanguageModelV4StreamPart>(' ----k-(f|)', { k: addCall, f: finishPart('tool-calls') });
      const call2 = cold<LanguageModelV4StreamPart>('       ------s-d-e-(f|)', parts);
      const call3 = cold<LanguageModelV4StreamPart>('                         ----s-d-e-(f|)', parts);
      const expected = '                              (SB)K-(REB)-O-t-C-(EB)O-t-C-(EF|)';
      model = mockModel({ stream: ({ callIndex }) => [call1, call2, call3][callIndex] as typeof call1 });
      const agent = new Agent({ id: 'a', model, tools: { add }, outputProcessors: [quality], maxProcessorRetries: 1 });
      expectObservable(agent.stream$('1 + 2?').pipe(letters)).toBe(expected.trim());
    });
    expect(inputs).toEqual([{ a: 1, b: 2 }]);
    expect(model.calls).toHaveLength(3);
    const third = JSON.stringify(model.calls[2]?.prompt);
    expect(third).toContain('tool-result');
    expect(third).toContain('Say the sum.');
    expect(JSON.stringify(model.calls[1]?.prompt)).not.toContain('Say the sum.');
  });

  describe('an API-error retry', () => {
    const overloaded = new APICallError({ message: 'overloaded', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 529 });
    const answer = (retry: boolean, seen: unknown[]): Processor => ({
      id: 'recovery',
      processAPIError: ({ error, retryCount }) => (seen.push([retryCount, APICallError.isInstance(error)]), retry ? { retry: true } : undefined),
    });

    it('the failed call is unsubscribed at its error frame; its step is closed and the call is resubscribed in that frame', () => {
      const seen: unknown[] = [];
      scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const call1 = cold<LanguageModelV4StreamPart>(' ----s-#', { s: textStart }, overloaded);
        const call2 = cold<LanguageModelV4StreamPart>('       ------s-d-e-(f|)', parts);
        const expected = '                              (SB)O-(CEB)-O-t-C-(EF|)';
        const model = mockModel({ stream: ({ callIndex }) => (callIndex === 0 ? call1 : call2) });
        const agent = new Agent({ id: 'a', model, errorProcessors: [answer(true, seen)] });
        expectObservable(agent.stream$('hello').pipe(letters)).toBe(expected.trim());
        expectSubscriptions(call1.subscriptions).toBe('^-----!');
        expectSubscriptions(call2.subscriptions).toBe('------^-----------!');
      });
      expect(seen).toEqual([[0, true]]);
    });

    it('not recovered: the step is closed and the run ends with one error chunk at the error frame', () => {
      const seen: unknown[] = [];
      scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const call1 = cold<LanguageModelV4StreamPart>('----s-#', { s: textStart }, overloaded);
        const model = mockModel({ stream: call1 });
        const agent = new Agent({ id: 'a', model, errorProcessors: [answer(false, seen)] });
        expectObservable(agent.stream$('hello').pipe(letters)).toBe('(SB)O-(CEX|)');
        expectSubscriptions(call1.subscriptions).toBe('^-----!');
      });
      expect(seen).toEqual([[0, true]]);
    });
  });
});
