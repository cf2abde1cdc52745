/**
 * Whole Agent runs on virtual time (issue 14 point 3): with a marble model and synchronous
 * processors nothing in the loop makes a promise hop, so `agent.stream$()` is a marble-testable
 * Observable end to end.
 */
import { describe, expect, it } from 'vitest';
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { Processor } from '../../src/processor/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const [textStart, textDelta, textEnd] = textParts('Hi', { id: 't' }) as [LanguageModelV4StreamPart, LanguageModelV4StreamPart, LanguageModelV4StreamPart];
const parts: Record<string, LanguageModelV4StreamPart> = { s: textStart, d: textDelta, e: textEnd, f: finishPart('stop') };
/** Each chunk as one letter: S start, B step-start, O text-start, t delta, C text-end, E step-finish, F finish, W tripwire. */
const letter: Record<string, string> = {
  start: 'S',
  'step-start': 'B',
  'text-start': 'O',
  'text-delta': 't',
  'text-end': 'C',
  'step-finish': 'E',
  finish: 'F',
  tripwire: 'W',
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
});
