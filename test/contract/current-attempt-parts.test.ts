/**
 * `currentAttemptParts(streamParts)`, and the facts docs/writing-a-processor.md tells a processor
 * author about a retried step: `state` and `streamParts` live for the whole run (the rejected
 * attempt included), `textStream` holds an attempt's text while a retry is possible.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { Agent, currentAttemptParts, isTextDeltaChunk, type ChunkType, type Processor } from '../../src/index.js';
import { chunk, scriptedModel } from '../../src/testing/index.js';

const textOf = (parts: readonly ChunkType[]): string => parts.filter(isTextDeltaChunk).map((part) => part.payload.text).join('');

describe('currentAttemptParts', () => {
  it('keeps the chunks from the last step-start on: not earlier steps, not a rejected attempt', () => {
    const parts: ChunkType[] = [
      chunk.stepStart(), chunk.textDelta('step one'), chunk.stepFinish(),
      chunk.stepStart(), chunk.textDelta('rejected'), chunk.stepFinish(),
      chunk.stepStart(), chunk.textDelta('current'),
    ];
    const current = currentAttemptParts(parts);
    expect(current).toEqual([chunk.stepStart(), chunk.textDelta('current')]);
    expect(parts).toHaveLength(8); // not modified
  });

  it('is a copy of streamParts when there is no step-start (a bare operator)', () => {
    const parts = [chunk.textDelta('a'), chunk.textDelta('b')];
    const current = currentAttemptParts(parts);
    expect(current).toEqual(parts);
    expect(current).not.toBe(parts);
    expect(currentAttemptParts([])).toEqual([]);
  });
});

describe('a retried step, as a processor sees it', () => {
  const model = () => scriptedModel({ rules: [{ match: /Be polite/, reply: { text: 'Dear user, hello.' } }], fallback: { text: 'Hey you, rude.' } });

  function politeGuard(seen: Array<{ retryCount: number; all: string; current: string; calls: number }>): Processor {
    return {
      id: 'polite',
      processOutputStream: ({ part, streamParts, retryCount, state, abort }) => {
        state['calls'] = ((state['calls'] as number | undefined) ?? 0) + 1;
        if (part.type !== 'text-delta') return part;
        seen.push({ retryCount, all: textOf(streamParts), current: textOf(currentAttemptParts(streamParts)), calls: state['calls'] as number });
        if (/rude/.test(textOf(currentAttemptParts(streamParts)))) abort('Be polite.', { retry: true });
        return part;
      },
    };
  }

  it('streamParts and state keep the rejected attempt; currentAttemptParts gives the retried one alone', async () => {
    const seen: Array<{ retryCount: number; all: string; current: string; calls: number }> = [];
    const agent = new Agent({ id: 'a', instructions: 'x', model: model(), outputProcessors: [politeGuard(seen)], maxProcessorRetries: 1 });
    const result = await agent.generate('Hi');
    expect(result.text).toBe('Dear user, hello.');
    const last = seen.at(-1)!;
    expect(last.retryCount).toBe(1);
    expect(last.current).toBe('Dear user, hello.');
    expect(last.all).toContain('rude'); // the rejected attempt's text is still in streamParts
    expect(last.all.endsWith('Dear user, hello.')).toBe(true);
    const firstOfRetry = seen.find((entry) => entry.retryCount === 1)!;
    const lastOfRejected = seen.filter((entry) => entry.retryCount === 0).at(-1)!;
    expect(firstOfRetry.calls).toBeGreaterThan(lastOfRejected.calls); // state was not reset for the retry
  });

  it("the rejected attempt's closing chunks reach the hook with retryCount already counting the retry (as the docs warn)", async () => {
    const closing: string[] = [];
    const guard: Processor = {
      id: 'polite',
      processOutputStream: ({ part, streamParts, retryCount, abort }) => {
        if (part.type === 'text-end' || part.type === 'step-finish') closing.push(`${retryCount}:${part.type}:${textOf(currentAttemptParts(streamParts))}`);
        if (part.type === 'text-delta' && /rude/.test(textOf(currentAttemptParts(streamParts)))) abort('Be polite.', { retry: true });
        return part;
      },
    };
    const agent = new Agent({ id: 'a', instructions: 'x', model: model(), outputProcessors: [guard], maxProcessorRetries: 1 });
    expect((await agent.generate('Hi')).text).toBe('Dear user, hello.');
    expect(closing.slice(0, 2)).toEqual(['1:text-end:Hey you, rude.', '1:step-finish:Hey you, rude.']);
  });

  it('textStream holds an attempt while a retry is possible; stream$() shows the rejected attempt live, closed by step-finish reason retry', async () => {
    const agent = new Agent({ id: 'a', instructions: 'x', model: model(), outputProcessors: [politeGuard([])], maxProcessorRetries: 1 });
    const output = await agent.stream('Hi');
    let streamed = '';
    for await (const text of output.textStream) streamed += text;
    expect(streamed).toBe('Dear user, hello.'); // nothing of 'Hey you,'
    const chunks = await lastValueFrom(agent.stream$('Hi').pipe(toArray()));
    const rejectedFinish = chunks.findIndex((item) => item.type === 'step-finish' && item.payload.stepResult.reason === 'retry');
    expect(rejectedFinish).toBeGreaterThan(0);
    expect(textOf(chunks.slice(0, rejectedFinish))).toContain('Hey you'); // streamed live, up to the delta the guard aborted on
    expect(textOf(chunks.slice(rejectedFinish))).toBe('Dear user, hello.');
  });
});
