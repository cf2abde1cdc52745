import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRunContext } from '../../src/operators/run-context.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { BatchPartsProcessor } from '../../src/processors/batch-parts.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { outputStream, runOutputStream, textBlock } from './support/harness.js';

const describeChunk = (part: ChunkType): string => (part.type === 'text-delta' ? `${part.payload.id}:${part.payload.text}` : part.type);

describe('BatchPartsProcessor', () => {
  it('has the reference id', () => {
    expect(new BatchPartsProcessor().id).toBe('batch-parts');
  });

  it('merges every batchSize deltas into one and releases the partial batch before text-end', async () => {
    const output = await runOutputStream([new BatchPartsProcessor({ batchSize: 3 })], [...textBlock(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']), chunk.finish()]);
    expect(output.map(describeChunk)).toEqual(['text-start', 'text-1:abc', 'text-1:def', 'text-1:gh', 'text-end', 'finish']);
  });

  it('defaults to batches of 5', async () => {
    const output = await runOutputStream([new BatchPartsProcessor()], textBlock(['1', '2', '3', '4', '5', '6']));
    expect(output.map(describeChunk)).toEqual(['text-start', 'text-1:12345', 'text-1:6', 'text-end']);
  });

  it('releases the batch before a non-text chunk (emitOnNonText) and before a delta of another block', async () => {
    const call = chunk.toolCall({ toolCallId: 'c1', toolName: 'lookup', args: {} });
    const output = await runOutputStream(
      [new BatchPartsProcessor({ batchSize: 10 })],
      [chunk.textStart('t1'), chunk.textDelta('a', 't1'), chunk.textDelta('b', 't1'), call, chunk.textDelta('c', 't1'), chunk.textStart('t2'), chunk.textDelta('x', 't2'), chunk.textDelta('d', 't1'), chunk.finish()],
    );
    expect(output.map(describeChunk)).toEqual(['text-start', 't1:ab', 'tool-call', 't1:c', 'text-start', 't2:x', 't1:d', 'finish']);
  });

  it('with emitOnNonText: false other chunks pass ahead of the batch, which still ends before its text-end', async () => {
    const output = await runOutputStream(
      [new BatchPartsProcessor({ batchSize: 10, emitOnNonText: false })],
      [chunk.textStart(), chunk.textDelta('a'), chunk.reasoningDelta('think'), chunk.textDelta('b'), chunk.textEnd(), chunk.finish()],
    );
    expect(output.map(describeChunk)).toEqual(['text-start', 'reasoning-delta', 'text-1:ab', 'text-end', 'finish']);
  });

  it('maxWaitTime (marble): an overdue batch is released when the next chunk arrives', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const batcher = new BatchPartsProcessor({ batchSize: 10, maxWaitTime: 10 });
      const parts = { a: chunk.textDelta('a'), b: chunk.textDelta('b'), c: chunk.textDelta('c'), d: chunk.textDelta('d'), e: chunk.textEnd() };
      //                    0    3         15   18  20
      const source = cold('a 2ms b 11ms c 2ms d 1ms (e|)', parts);
      const expected = '   15ms x 4ms (yz|)';
      expectObservable(source.pipe(outputStream([batcher], createRunContext()))).toBe(expected, {
        x: chunk.textDelta('ab'),
        y: chunk.textDelta('cd'),
        z: chunk.textEnd(),
      });
    });
  });

  it('maxWaitTime (marble): a batch that fills up in time is released on its last delta', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const batcher = new BatchPartsProcessor({ batchSize: 3, maxWaitTime: 100 });
      const source = cold('a 1ms b 1ms c 5ms (e|)', { a: chunk.textDelta('a'), b: chunk.textDelta('b'), c: chunk.textDelta('c'), e: chunk.textEnd() });
      expectObservable(source.pipe(outputStream([batcher], createRunContext()))).toBe('4ms x 5ms (z|)', {
        x: chunk.textDelta('abc'),
        z: chunk.textEnd(),
      });
    });
  });

  it('never loses or reorders a part (property)', async () => {
    const kinds = fc.constantFrom<'delta' | 'reasoning' | 'call' | 'end' | 'data'>('delta', 'delta', 'delta', 'reasoning', 'call', 'end', 'data');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(kinds, fc.constantFrom('t1', 't2'), fc.string({ maxLength: 4 })), { maxLength: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        async (steps, batchSize, emitOnNonText) => {
          const input: ChunkType[] = steps.map(([kind, id, text], index) => {
            switch (kind) {
              case 'delta':
                return chunk.textDelta(text, id);
              case 'reasoning':
                return chunk.reasoningDelta(text);
              case 'call':
                return chunk.toolCall({ toolCallId: `c${index}`, toolName: 'x', args: {} });
              case 'end':
                return chunk.textEnd(id);
              default:
                return chunk.data('data-progress', { index });
            }
          });
          input.push(chunk.finish());
          const output = await runOutputStream([new BatchPartsProcessor({ batchSize, emitOnNonText })], input);
          // Text of each block is intact and in order; with emitOnNonText every part keeps its place.
          for (const id of ['t1', 't2']) {
            const textOf = (parts: ChunkType[]) =>
              parts.map((part) => (part.type === 'text-delta' && part.payload.id === id ? part.payload.text : '')).join('');
            expect(textOf(output)).toBe(textOf(input));
          }
          const nonText = (parts: ChunkType[]) => parts.filter((part) => part.type !== 'text-delta');
          expect(nonText(output)).toEqual(nonText(input));
          expect(output.at(-1)?.type).toBe('finish');
          if (emitOnNonText) {
            const flattened = (parts: ChunkType[]) =>
              parts.flatMap((part) => (part.type === 'text-delta' ? [...part.payload.text].map((char) => `${part.payload.id}:${char}`) : [part.type]));
            expect(flattened(output)).toEqual(flattened(input));
          }
          // A text-end never comes before text of its own block that arrived earlier.
          input.forEach((part, index) => {
            if (part.type !== 'text-end') return;
            const before = input.slice(0, index).filter((earlier) => earlier.type === 'text-delta' && earlier.payload.id === part.payload.id);
            const textBefore = before.map((earlier) => (earlier.type === 'text-delta' ? earlier.payload.text : '')).join('');
            const endAt = output.indexOf(part);
            const emittedBefore = output
              .slice(0, endAt)
              .map((earlier) => (earlier.type === 'text-delta' && earlier.payload.id === part.payload.id ? earlier.payload.text : ''))
              .join('');
            expect(emittedBefore.startsWith(textBefore)).toBe(true);
          });
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('BatchPartsProcessor: the reference state and flush()', () => {
  it('state.batch holds the deltas not released yet; flush(state) releases them as one delta and empties it', async () => {
    const batcher = new BatchPartsProcessor({ batchSize: 10 });
    const ctx = createRunContext();
    const output = await runOutputStream([batcher], [chunk.textStart('t'), chunk.textDelta('Hel', 't'), chunk.textDelta('lo', 't')], ctx);
    expect(output.map(describeChunk)).toEqual(['text-start']);
    const state = ctx.stateFor('batch-parts') as { batch?: ChunkType[] };
    expect(state.batch?.map(describeChunk)).toEqual(['t:Hel', 't:lo']);
    const flushed = batcher.flush(state);
    expect(flushed === null ? null : describeChunk(flushed)).toBe('t:Hello');
    expect(state.batch).toEqual([]);
    expect(batcher.flush(state)).toBeNull();
  });

  it('flush() without a state, or of one delta, returns null or that delta unchanged', () => {
    const batcher = new BatchPartsProcessor();
    expect(batcher.flush()).toBeNull();
    const only = chunk.textDelta('x', 't');
    expect(batcher.flush({ batch: [only] })).toBe(only);
  });
});
