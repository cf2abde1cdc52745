import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { BatchPartsProcessor } from '../../src/processors/batch-parts.js';
import { emitInOrder, FOLLOW_UP_CHUNKS_KEY, takeFollowUpChunks } from '../../src/processors/internal/emit-in-order.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { FOLLOW_UP_CHUNKS_KEY as RUNTIME_KEY } from '../../src/contract/stream-follow-up.js';
import { textBlock } from './support/harness.js';

const label = (part: ChunkType): string => (part.type === 'text-delta' ? part.payload.text : part.type);

describe('emitInOrder (more than one chunk out of one processOutputStream call)', () => {
  it('returns the first output and queues the rest for the runtime to drain', () => {
    const state = {};
    const [a, b, c] = [chunk.textDelta('a'), chunk.textEnd(), chunk.finish()];
    expect(emitInOrder(state, [a, b, c])).toBe(a);
    expect(takeFollowUpChunks(state)).toEqual([b, c]);
    expect(takeFollowUpChunks(state)).toEqual([]);
    expect(emitInOrder(state, [])).toBeNull();
  });

  it('emits leftovers nobody drained first, queueing the new outputs behind them', () => {
    const state: Record<string, unknown> = { [FOLLOW_UP_CHUNKS_KEY]: [chunk.textEnd()] };
    const next = chunk.stepFinish();
    expect(emitInOrder(state, [next])?.type).toBe('text-end');
    expect(takeFollowUpChunks(state)).toEqual([next]);
  });

  it('uses the key processOutputStream drains', () => {
    expect(FOLLOW_UP_CHUNKS_KEY).toBe(RUNTIME_KEY);
  });

  it('processOutputStream emits the follow-ups right after the returned chunk, through the later processors only', async () => {
    const ctx = createRunContext();
    const seenByLater: string[] = [];
    const later = { id: 'later', processOutputStream: ({ part }: { part: ChunkType }) => (seenByLater.push(label(part)), part) };
    const output = await lastValueFrom(
      from([...textBlock(['a', 'b']), chunk.stepFinish(), chunk.finish()]).pipe(
        processOutputStream([new BatchPartsProcessor({ batchSize: 10 }), later], ctx),
        toArray(),
      ),
    );
    expect(output.map(label)).toEqual(['text-start', 'ab', 'text-end', 'step-finish', 'finish']);
    expect(seenByLater).toEqual(['text-start', 'ab', 'text-end', 'step-finish', 'finish']);
  });
});
