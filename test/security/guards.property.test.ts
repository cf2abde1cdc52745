/**
 * Property (issue 13 §4): for any secret from the presets — plain or obfuscated so it reads the
 * same to a person (invisible characters inserted, full-width characters, homoglyphs in a key
 * prefix) — split anywhere, on any channel, no consumer (`stream$()`, `stream()`'s `textStream`
 * and `text`, `generate()`), no UI message stream, no store (Memory on InMemoryStorage) and no
 * later model call sees it.
 *
 * Case counts: the stream-level properties run `RXAGENT_PROPERTY_RUNS` cases (default 1,000); the
 * end-to-end one, four agent runs per case, runs a tenth of that (at least 20; CI: 100).
 *
 * A secret split across text blocks is caught whole unless one block alone already holds a match of
 * it (then that match is redacted and the block boundary ends it): see the `guards-blocks` property
 * and `boundaries.property.test.ts` (issue 24 §7).
 */
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, it } from 'vitest';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { flattenChunks, LEAK_CHANNELS, leaks, observeRun, type LeakChannel } from './support/leak-harness.js';
import { secretArbitrary } from './support/secrets.js';

/** Cut points of a text into deltas. */
const splitArbitrary = fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 40 });

function split(text: string, sizes: readonly number[]): string[] {
  const pieces: string[] = [];
  let at = 0;
  for (let index = 0; at < text.length; index++) {
    const size = sizes[index % sizes.length] as number;
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  return pieces;
}

const guards = () => [new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' })];

describe('no secret from the presets leaks (property-based)', () => {
  it(
    'stream: any secret, obfuscated or not, split anywhere, is never emitted',
    async () => {
      await checkProperty('guards-stream', fc.tuple(secretArbitrary, splitArbitrary, fc.constantFrom('text', 'reasoning')), async ([secret, sizes, kind]) => {
        const text = `Here it is: ${secret} and done.`;
        const deltas = split(text, sizes).map((piece) => (kind === 'text' ? chunk.textDelta(piece) : chunk.reasoningDelta(piece)));
        const start = kind === 'text' ? chunk.textStart() : chunk.reasoningStart();
        const end = kind === 'text' ? chunk.textEnd() : chunk.reasoningEnd();
        const output = await lastValueFrom(from([start, ...deltas, end, chunk.finish()]).pipe(processOutputStream(guards(), createRunContext()), toArray()));
        const seen = leaks([{ consumer: 'stream', seen: flattenChunks(output) }], secret);
        if (seen.length > 0) throw new Error(`leaked ${JSON.stringify(secret)} split ${JSON.stringify(split(text, sizes))}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'text blocks: any secret split across any number of text blocks is never shown whole, and streams as in one block unless a block alone already holds a match of its start',
    async () => {
      // Boundaries are boundaries (issue 24 §7): a match crossing a block boundary is kept only if
      // it overlaps no match of one block alone. So the split secret streams as in one block
      // whenever no block's own text matches where the secret is; when a block alone ends in a
      // complete match (`sk-` + 20 characters, then more in the next block), that match is
      // redacted and the boundary ends it — the secret is still never shown whole.
      const blockBreaks = fc.array(fc.boolean(), { minLength: 1, maxLength: 40 });
      await checkProperty('guards-blocks', fc.tuple(secretArbitrary, splitArbitrary, blockBreaks), async ([secret, sizes, breaks]) => {
        const prefix = 'Here it is: ';
        const text = `${prefix}${secret} and done.`;
        const pieces = split(text, sizes);
        // the pieces as text blocks: a new block starts before piece i when breaks[i] says so
        const parts: ChunkType[] = [];
        const blocks: Array<{ start: number; text: string }> = [{ start: 0, text: '' }];
        let block = 0;
        let offset = 0;
        parts.push(chunk.textStart('b0'));
        pieces.forEach((piece, index) => {
          if (index > 0 && breaks[index % breaks.length] === true) {
            parts.push(chunk.textEnd(`b${block}`));
            block++;
            parts.push(chunk.textStart(`b${block}`));
            blocks.push({ start: offset, text: '' });
          }
          parts.push(chunk.textDelta(piece, `b${block}`));
          (blocks[block] as { text: string }).text += piece;
          offset += piece.length;
        });
        parts.push(chunk.textEnd(`b${block}`), chunk.finish());
        const run = async (input: ChunkType[]): Promise<ChunkType[]> => lastValueFrom(from(input).pipe(processOutputStream(guards(), createRunContext()), toArray()));
        const streamedText = (output: readonly ChunkType[]) => output.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('');
        const output = await run(parts);
        if (leaks([{ consumer: 'stream', seen: flattenChunks(output) }], secret).length > 0) throw new Error(`blocks ${JSON.stringify(pieces)}: the secret was shown whole`);
        const secretStart = prefix.length;
        const secretEnd = secretStart + secret.length;
        const blockAloneMatchesSecret = blocks.some(({ start, text: own }) =>
          guards()[0]!.scan(own).some((match) => start + match.start < secretEnd && start + match.end > secretStart),
        );
        if (blockAloneMatchesSecret) return;
        const whole = streamedText(await run([chunk.textStart('b0'), chunk.textDelta(text, 'b0'), chunk.textEnd('b0'), chunk.finish()]));
        const streamed = streamedText(output);
        if (streamed !== whole) throw new Error(`blocks ${JSON.stringify(pieces)}: streamed ${JSON.stringify(streamed)}, one block ${JSON.stringify(whole)}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'end to end: any secret, any split, any channel — no consumer, UI stream, store or later model call sees it',
    async () => {
      const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 10));
      const channel = fc.constantFrom<LeakChannel>(...LEAK_CHANNELS);
      await checkProperty(
        'guards-end-to-end',
        fc.tuple(secretArbitrary, fc.integer({ min: 1, max: 9 }), channel),
        async ([secret, chunkSize, leakChannel]) => {
          const observations = await observeRun({ channel: leakChannel, secret, chunkSize }, guards);
          const seen = leaks(observations, secret);
          if (seen.length > 0) throw new Error(`${leakChannel}: ${JSON.stringify(secret)} seen by ${seen.join(', ')}`);
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS * 2,
  );
});
