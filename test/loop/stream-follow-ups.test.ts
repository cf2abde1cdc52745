import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { FOLLOW_UP_CHUNKS_KEY, REPROCESS_PART_KEY } from '../../src/contract/stream-follow-up.js';
import { chunk } from '../../src/testing/chunk-builders.js';

const texts = (chunks: ChunkType[]) => chunks.map((item) => (item.type === 'text-delta' ? item.payload.text : item.type));

describe('more than one chunk from one processOutputStream call', () => {
  it('follow-up chunks go out right after the returned one, through the later processors only', async () => {
    const holder: Processor = {
      id: 'holder',
      processOutputStream: ({ part, state }) => {
        if (part.type === 'text-delta' && part.payload.text === 'b') {
          state[FOLLOW_UP_CHUNKS_KEY] = [chunk.textDelta('b2'), chunk.textDelta('b3')];
        }
        return part;
      },
    };
    const seenByHolder: string[] = [];
    const spyBefore: Processor = { id: 'before', processOutputStream: ({ part }) => (seenByHolder.push(texts([part])[0] as string), part) };
    const upper: Processor = {
      id: 'upper',
      processOutputStream: ({ part }) => (part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part),
    };
    const out = await lastValueFrom(
      from([chunk.textDelta('a'), chunk.textDelta('b'), chunk.textDelta('c')]).pipe(processOutputStream([spyBefore, holder, upper]), toArray()),
    );
    expect(texts(out)).toEqual(['A', 'B', 'B2', 'B3', 'C']);
    expect(seenByHolder).toEqual(['a', 'b', 'c']);
  });

  it("the reference's reprocess key re-drives a chunk through the whole chain", async () => {
    const seen: string[] = [];
    const splitter: Processor = {
      id: 'split',
      processOutputStream: ({ part, state }) => {
        seen.push(texts([part])[0] as string);
        if (part.type === 'text-delta' && part.payload.text === 'xy') {
          state[REPROCESS_PART_KEY] = chunk.textDelta('y');
          return { ...part, payload: { ...part.payload, text: 'x' } };
        }
        return part;
      },
    };
    const out = await lastValueFrom(from([chunk.textDelta('xy'), chunk.textDelta('z')]).pipe(processOutputStream([splitter]), toArray()));
    expect(texts(out)).toEqual(['x', 'y', 'z']);
    expect(seen).toEqual(['xy', 'y', 'z']);
  });
});
