import { describe, expect, it } from 'vitest';
import { ChunkLog } from '../../src/contract/chunk-log.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';

/** A mix of chunks that compact (plain deltas) and chunks that must stay as they are. */
function mixed(): ChunkType[] {
  const withMetadata = { ...chunk.textDelta('m'), payload: { id: 'text-1', text: 'm', providerMetadata: { x: { y: 1 } } } } as ChunkType;
  const extraKey = { ...chunk.textDelta('e'), metadata: { k: 1 } } as ChunkType;
  const reordered = { runId: 'run-42', type: 'text-delta', from: 'AGENT', payload: { id: 'text-1', text: 'r' } } as ChunkType;
  const payloadReordered = { type: 'text-delta', runId: 'run-42', from: 'AGENT', payload: { text: 'p', id: 'text-1' } } as ChunkType;
  const otherRun = { type: 'text-delta', runId: 'run-7', from: 'AGENT', payload: { id: 'text-1', text: 'o' } } as ChunkType;
  return [
    chunk.textStart(),
    chunk.textDelta('a'),
    chunk.textDelta('b'),
    withMetadata,
    chunk.textDelta('c', 'text-2'),
    extraKey,
    chunk.textDelta('d', 'text-2'),
    reordered,
    payloadReordered,
    otherRun,
    chunk.textDelta(''),
    chunk.textEnd(),
  ];
}

describe('ChunkLog', () => {
  it('gives back equal chunks in order, keys in the same order, and the same objects for what it does not compact', () => {
    const chunks = mixed();
    const log = new ChunkLog();
    for (const item of chunks) log.push(item);
    expect(log.length).toBe(chunks.length);
    const array = log.toArray();
    expect(array).toStrictEqual(chunks);
    expect(JSON.stringify(array)).toBe(JSON.stringify(chunks));
    for (const [index, item] of chunks.entries()) {
      const compacted = item.type === 'text-delta' && index !== 3 && index !== 5 && index !== 7 && index !== 8;
      if (!compacted) expect(array[index]).toBe(item);
    }
  });

  it('makes the array once and appends to it afterwards', () => {
    const log = new ChunkLog();
    log.push(chunk.textDelta('a'));
    const array = log.toArray();
    const next = chunk.textDelta('b');
    log.push(next);
    expect(log.toArray()).toBe(array);
    expect(array).toHaveLength(2);
    expect(array[1]).toBe(next);
    expect(log.length).toBe(2);
  });

  it('copies a prefix that grows on its own, compact or not', () => {
    const chunks = mixed();
    for (const materialize of [false, true]) {
      const log = new ChunkLog();
      for (const item of chunks) log.push(item);
      if (materialize) log.toArray();
      const copy = log.copy(4);
      copy.push(chunk.textDelta('z', 'text-9'));
      log.push(chunk.textDelta('y'));
      expect(copy.toArray()).toStrictEqual([...chunks.slice(0, 4), chunk.textDelta('z', 'text-9')]);
      expect(log.toArray()).toStrictEqual([...chunks, chunk.textDelta('y')]);
    }
  });

  it('reads the last chunk and walks the chunks without making the array', () => {
    const chunks = mixed();
    const log = new ChunkLog();
    expect(log.last()).toBeUndefined();
    for (const item of chunks) log.push(item);
    log.push(chunk.textDelta('last'));
    expect(log.last()).toStrictEqual(chunk.textDelta('last'));
    const seen: ChunkType[] = [];
    log.forEach((item) => seen.push(item));
    expect(seen).toStrictEqual([...chunks, chunk.textDelta('last')]);
  });
});
