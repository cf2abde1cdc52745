import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { testContext } from './helpers.js';

/**
 * `streamParts` is kept compactly until read (src/contract/chunk-log.ts): whenever a processor
 * reads it, it must be exactly the parts that processor has seen so far, the current one included.
 */
function source(): ChunkType[] {
  return [
    chunk.textStart(),
    ...Array.from({ length: 20 }, (_, index) => chunk.textDelta(String(index))),
    { ...chunk.textDelta('meta'), payload: { id: 'text-1', text: 'meta', providerMetadata: { p: { q: 1 } } } } as ChunkType,
    chunk.textDelta('x', 'text-2'),
    chunk.textEnd(),
  ];
}

/** A processor recording what it saw and, at the chunks `readAt` selects, a copy of its `streamParts`. */
function recorder(id: string, readAt: (index: number) => boolean, transform: (part: ChunkType) => ChunkType | null = (part) => part) {
  const seen: ChunkType[] = [];
  const reads: Array<{ expected: ChunkType[]; got: ChunkType[] }> = [];
  let held: ChunkType[] | undefined;
  const processor: Processor = {
    id,
    processOutputStream: ({ part, streamParts }) => {
      seen.push(part);
      if (readAt(seen.length - 1)) {
        reads.push({ expected: [...seen], got: [...streamParts] });
        held ??= streamParts;
      }
      return transform(part);
    },
  };
  return { processor, seen, reads, held: () => held };
}

describe('streamParts (compact log)', () => {
  it('is the parts seen so far at every read, for in-step and diverged processors, read early, late or never', async () => {
    const everyFifth = recorder('every-fifth', (index) => index % 5 === 3);
    const upper = recorder('upper', (index) => index === 7, (part) =>
      part.type === 'text-delta' && part.payload.text === '5' ? { ...part, payload: { ...part.payload, text: 'FIVE' } } : part,
    );
    const dropper = recorder('dropper', () => false, (part) => (part.type === 'text-delta' && part.payload.text === '9' ? null : part));
    const late = recorder('late', (index, ) => index >= 20);
    const never = recorder('never', () => false);
    const processors = [everyFifth.processor, upper.processor, dropper.processor, late.processor, never.processor];
    const out = await lastValueFrom(from(source()).pipe(processOutputStream(processors, testContext()), toArray()));
    expect(out).toHaveLength(source().length - 1);
    for (const probe of [everyFifth, upper, late]) {
      expect(probe.reads.length).toBeGreaterThan(0);
      for (const { expected, got } of probe.reads) expect(got).toStrictEqual(expected);
      // the array a processor holds keeps growing with what it sees
      expect(probe.held()).toStrictEqual(probe.seen);
    }
    expect(late.seen.map((part) => (part.type === 'text-delta' ? part.payload.text : part.type))).not.toContain('9');
    expect(late.seen.map((part) => (part.type === 'text-delta' ? part.payload.text : part.type))).toContain('FIVE');
  });

  it('is the same array for every read by one processor; processors in step read the same log, each through its own read-only view', async () => {
    const arrays: Array<[string, ChunkType[]]> = [];
    const reader = (id: string): Processor => ({
      id,
      processOutputStream: ({ part, streamParts }) => {
        arrays.push([id, streamParts]);
        return part;
      },
    });
    await lastValueFrom(from(source()).pipe(processOutputStream([reader('a'), reader('b')], testContext()), toArray()));
    const first = new Map<string, ChunkType[]>();
    for (const [id, array] of arrays) {
      if (!first.has(id)) first.set(id, array);
      expect(array).toBe(first.get(id));
    }
    // (a view per processor: one cannot write to what the other reads — test/reliability/stream-hook-leftovers)
    expect(first.get('a')).not.toBe(first.get('b'));
    expect(first.get('a')).toStrictEqual(source());
    expect(first.get('b')).toStrictEqual(source());
  });

  it('shows an edit a hook makes to its part in place, during that part\'s pass and afterwards', async () => {
    const shout: Processor = {
      id: 'shout',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta') part.payload.text = `${part.payload.text}!`;
        return part;
      },
    };
    const reads: Array<{ part: ChunkType; parts: ChunkType[] }> = [];
    const reader: Processor = {
      id: 'reader',
      processOutputStream: ({ part, streamParts }) => {
        reads.push({ part, parts: [...streamParts] });
        return part;
      },
    };
    await lastValueFrom(from(source()).pipe(processOutputStream([shout, reader], testContext()), toArray()));
    for (const { part, parts } of reads) {
      expect(parts[parts.length - 1]).toBe(part);
      for (const seen of parts) if (seen.type === 'text-delta') expect(seen.payload.text.endsWith('!')).toBe(true);
    }
  });

  it('keeps a value a hook assigns to args.streamParts', async () => {
    const assigned: ChunkType[] = [];
    let seen: ChunkType[] | undefined;
    const processor: Processor = {
      id: 'assign',
      processOutputStream: (args) => {
        if (args.streamParts.length === 1) args.streamParts = assigned;
        else seen = args.streamParts;
        return args.part;
      },
    };
    await lastValueFrom(from(source().slice(0, 3)).pipe(processOutputStream([processor], testContext()), toArray()));
    expect(seen).toBe(assigned);
  });

  it('copies with the args (spread) as a plain array', async () => {
    let copied: Record<string, unknown> | undefined;
    const processor: Processor = {
      id: 'spread',
      processOutputStream: (args) => {
        copied = { ...args };
        return args.part;
      },
    };
    await lastValueFrom(from(source().slice(0, 3)).pipe(processOutputStream([processor], testContext()), toArray()));
    expect(copied?.streamParts).toStrictEqual(source().slice(0, 3));
    expect(Object.getOwnPropertySymbols(copied ?? {})).toEqual([]);
  });

  it('gives abort and writer made on first read: the same each time, usable destructured, in a copy of the args', async () => {
    const aborts = new Set<unknown>();
    const writers = new Set<unknown>();
    let copied: Record<string, unknown> | undefined;
    const processor: Processor = {
      id: 'fields',
      processDataParts: false,
      processOutputStream: async (args) => {
        const { part, abort, writer } = args;
        aborts.add(abort);
        writers.add(writer);
        copied ??= { ...args };
        if (part.type === 'text-start') await writer.custom({ type: 'data-note', data: 1 });
        if (part.type === 'text-end') abort('stop here');
        return part;
      },
    };
    const recording = await lastValueFrom(from(source()).pipe(processOutputStream([processor], testContext()), toArray())).catch((error: unknown) => error);
    expect((recording as { message?: string }).message ?? String(recording)).toContain('stop here');
    expect(aborts.size).toBe(1);
    expect(writers.size).toBe(1);
    expect(typeof copied?.abort).toBe('function');
    expect(copied?.writer).toBe([...writers][0]);
  });
});
