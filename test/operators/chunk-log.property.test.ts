/**
 * The compact chunk log (streamParts, the output's replay buffer) against chunks shaped to trip
 * its "plain text delta" test: keys in another order, extra keys, a payload with metadata, a
 * non-string text or id, a class-made payload, a payload shared between chunks, runs of deltas
 * with changing runId / from / id — read as an array before, during and after the pushes, copied
 * at any length. Whatever it compacts, it gives back equal chunks, keys in the same order, and the
 * very objects it did not compact.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkLog } from '../../src/contract/chunk-log.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

class Payload {
  constructor(
    readonly id: string,
    readonly text: string,
  ) {}
}

const shortText = fc.string({ maxLength: 3 });
const runId = fc.constantFrom('run-1', 'run-2');
const from = fc.constantFrom('AGENT', 'USER');
const id = fc.constantFrom('text-1', 'text-2');

/** A text delta in one of the shapes the log must either compact losslessly or keep as it is. */
const delta: fc.Arbitrary<ChunkType> = fc.oneof(
  // plain: the shape that compacts
  fc.record({ runId, from, id, text: shortText }).map(({ runId, from, id, text }) => ({ type: 'text-delta', runId, from, payload: { id, text } })),
  // keys reordered (chunk or payload)
  fc.record({ runId, id, text: shortText }).map(({ runId, id, text }) => ({ runId, type: 'text-delta', from: 'AGENT', payload: { id, text } })),
  fc.record({ runId, id, text: shortText }).map(({ runId, id, text }) => ({ type: 'text-delta', runId, from: 'AGENT', payload: { text, id } })),
  // extra keys
  fc.record({ id, text: shortText }).map(({ id, text }) => ({ type: 'text-delta', runId: 'run-1', from: 'AGENT', payload: { id, text, providerMetadata: { p: { n: 1 } } } })),
  fc.record({ id, text: shortText }).map(({ id, text }) => ({ type: 'text-delta', runId: 'run-1', from: 'AGENT', payload: { id, text }, metadata: { k: text } })),
  // a field of another type, a missing field, a class-made payload
  fc.record({ id }).map(({ id }) => ({ type: 'text-delta', runId: 'run-1', from: 'AGENT', payload: { id, text: 7 } })),
  fc.record({ text: shortText }).map(({ text }) => ({ type: 'text-delta', runId: 'run-1', from: 'AGENT', payload: { text } })),
  fc.record({ id, text: shortText }).map(({ id, text }) => ({ type: 'text-delta', runId: 'run-1', from: 'AGENT', payload: new Payload(id, text) })),
) as fc.Arbitrary<ChunkType>;

const other: fc.Arbitrary<ChunkType> = fc.oneof(
  id.map((id) => ({ type: 'text-start', runId: 'run-1', from: 'AGENT', payload: { id } })),
  id.map((id) => ({ type: 'text-end', runId: 'run-1', from: 'AGENT', payload: { id } })),
  fc.constant({ type: 'data-progress', data: { percent: 50 } }),
  fc.constant({ type: 'step-start', runId: 'run-1', from: 'AGENT', payload: { messageId: 'm-1' } }),
) as fc.Arbitrary<ChunkType>;

/** A case: the chunks, where to read the array (an index into the pushes, or never), a copy length. */
const logCase = fc.record({
  chunks: fc.array(fc.oneof({ weight: 4, arbitrary: delta }, { weight: 1, arbitrary: other }), { maxLength: 40 }),
  readAt: fc.option(fc.nat(40), { nil: undefined }),
  copyAt: fc.nat(40),
  shareFirstPayload: fc.boolean(),
});

describe('ChunkLog (property)', () => {
  it(
    'gives back every chunk pushed, equal, keys in order, the uncompacted ones as the same objects',
    async () => {
      await checkProperty('chunk-log', logCase, async ({ chunks: generated, readAt, copyAt, shareFirstPayload }) => {
        // a payload object shared by two chunks (a processor re-emitting it) must survive both entries
        const chunks =
          shareFirstPayload && generated.length > 1 && 'payload' in (generated[0] as object)
            ? [generated[0] as ChunkType, { ...(generated[0] as ChunkType) } as ChunkType, ...generated.slice(1)]
            : generated;
        const log = new ChunkLog();
        let early: ChunkType[] | undefined;
        chunks.forEach((item, index) => {
          if (readAt === index) early = log.toArray();
          log.push(item);
        });
        const copyLength = Math.min(copyAt, chunks.length);
        const copy = log.copy(copyLength);
        const array = log.toArray();
        if (early !== undefined) expect(array).toBe(early);
        expect(array).toStrictEqual(chunks);
        expect(JSON.stringify(array)).toBe(JSON.stringify(chunks));
        for (const [index, item] of chunks.entries()) {
          const got = array[index] as ChunkType;
          if (got !== item) {
            // compacted: only a plain delta may come back as another (equal) object
            expect(Object.getPrototypeOf((item as { payload: object }).payload)).toBe(Object.prototype);
            expect(Object.keys(item)).toStrictEqual(['type', 'runId', 'from', 'payload']);
            expect(Object.keys((item as { payload: object }).payload)).toStrictEqual(['id', 'text']);
          }
        }
        expect(copy.toArray()).toStrictEqual(chunks.slice(0, copyLength));
        expect(log.last()).toStrictEqual(chunks.at(-1));
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('runs the configured number of cases', () => {
    expect(PROPERTY_RUNS).toBeGreaterThan(0);
  });
});
