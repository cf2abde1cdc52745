/**
 * The cost of the guards' normalised view per streamed chunk (issue 31 §2): `normalizeForMatching`
 * alone, and `RegexFilterProcessor` (presets pii, secrets, urls; redact) streaming the same text in
 * 64-character deltas, for four kinds of text — ASCII prose, prose with non-ASCII letters (accents,
 * Cyrillic words), text with look-alikes and dashes, and text with bidi override controls — plus
 * the one-time cost of building the bidi algorithm's tables.
 *
 *   npm run bench:normalize        (tsx; compare with the same script on an older checkout)
 */
import { from, lastValueFrom, toArray } from 'rxjs';
import { processOutputStream } from '../src/operators/process-output-stream.js';
import { createRunContext } from '../src/operators/run-context.js';
import { normalizeForMatching } from '../src/processors/internal/normalized-text.js';
import { RegexFilterProcessor } from '../src/processors/regex-filter.js';
import { chunk } from '../src/testing/chunk-builders.js';

const DELTA = 64;
const sentence = (index: number) => `Sentence ${index} of the answer explains how the guard reads a stream, one delta at a time. `;
const TEXTS: Record<string, string> = {
  ascii: Array.from({ length: 200 }, (_, index) => sentence(index)).join(''),
  'non-ASCII letters': Array.from({ length: 200 }, (_, index) => `Café ${index}: naïve façade, Привет мир, Καλημέρα — ${sentence(index)}`).join(''),
  'look-alikes, dashes': Array.from({ length: 200 }, (_, index) => `Kеy ${index} – АКIА–like ЗОО−12 ${sentence(index)}`).join(''),
  'bidi controls': Array.from({ length: 200 }, (_, index) => `Name \u2067שלום ${index}\u2069 and \u202Edesrever\u202C: ${sentence(index)}`).join(''),
};

async function measure(run: () => unknown, chunks: number): Promise<number> {
  for (let warm = 0; warm < 10; warm++) await run();
  const rounds = 40;
  const started = performance.now();
  for (let round = 0; round < rounds; round++) await run();
  const perChunkUs = ((performance.now() - started) * 1000) / rounds / chunks;
  return Math.round(perChunkUs * 100) / 100;
}

const rows: string[] = ['| text | chunks | view per chunk (µs) | RegexFilter stream per chunk (µs) |', '|---|---|---|---|'];
const startedTables = performance.now();
normalizeForMatching('\u202Ex');
const tablesMs = performance.now() - startedTables;
for (const [name, text] of Object.entries(TEXTS)) {
  const deltas: string[] = [];
  for (let at = 0; at < text.length; at += DELTA) deltas.push(text.slice(at, at + DELTA));
  const view = await measure(() => {
    for (const delta of deltas) normalizeForMatching(delta);
  }, deltas.length);
  const input = [chunk.textStart(), ...deltas.map((delta) => chunk.textDelta(delta)), chunk.textEnd(), chunk.finish()];
  const stream = await measure(() => {
    const filter = new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' });
    return lastValueFrom(from(input).pipe(processOutputStream([filter], createRunContext()), toArray()));
  }, deltas.length);
  rows.push(`| ${name} | ${deltas.length} | ${view} | ${stream} |`);
}
process.stdout.write(`${rows.join('\n')}\n\nfirst bidi paragraph (tables built): ${tablesMs.toFixed(1)} ms, Node ${process.version}\n`);
