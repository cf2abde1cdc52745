/**
 * `npm run bench`: rxagent alone — every workload (median, min and max over repetitions
 * interleaved across K), the floors in the same process, the slow consumer, and memory (in its
 * own process). Times are wall clock per unit (`--cpu`: process CPU time) — see bench/README.md.
 *
 *   npm run bench               full sizes (20,000 chunks, 1,000 concurrent streams)
 *   npm run bench -- --quick    reduced sizes
 *   npm run bench:check         tiny sizes: checks that the benchmark still runs, and that no
 *                               guard stalls the event loop over 50 ms on 100 KB hostile input (CI)
 *   npm run bench -- --hostile  only the hostile-input rows, every built-in (`--src DIR`: another copy of src/;
 *                               `--only-guards`: only the text-scanning guards)
 *   npm run bench -- --guards   only the windowed model-backed guard rows (bench/guards.ts; `--real`: also on real timers)
 *   npm run bench -- --tokenizer  event-loop stall while the default tokenizer loads (bench/tokenizer-load.ts)
 */
import { guardsReport } from './guards.js';
import { tokenizerLoadReport } from './tokenizer-load.js';
import { HOSTILE_STALL_LIMIT_MS, hostileReport } from './lib/hostile-report.js';
import { measureMemory } from './lib/memory.js';
import { rxagentSubject } from './lib/rxagent-subject.js';
import { fmt, markdownTable } from './lib/stats.js';
import { localRunner, profiles, rowName, runSuite, slowConsumer, type SuiteProfile } from './lib/suite.js';

const argv = process.argv.slice(2);
const args = new Set(argv);
if (args.has('--hostile')) {
  const srcIndex = argv.indexOf('--src');
  const report = await hostileReport({ only: args.has('--only-guards') ? 'guards' : 'all', ...(srcIndex === -1 ? {} : { src: argv[srcIndex + 1] as string }), log: (line) => process.stderr.write(`bench: ${line}\n`) });
  process.stdout.write(`${report.table}\n`);
  process.exit(0);
}
if (args.has('--guards')) {
  const report = await guardsReport({ real: args.has('--real') });
  process.stdout.write(`${report.table}\n`);
  if (report.failures.length > 0) process.stderr.write(`bench: guard targets missed:\n${report.failures.join('\n')}\n`);
  process.exit(report.failures.length > 0 ? 1 : 0);
}
if (args.has('--tokenizer')) {
  process.stdout.write(`${tokenizerLoadReport(5).table}\n`);
  process.exit(0);
}
const profile: SuiteProfile = args.has('--check') ? profiles.check : args.has('--quick') ? profiles.quick : profiles.full;
const metric = args.has('--cpu') ? 'cpu' : 'wall';
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

const started = performance.now();
log(`profile ${profile.name} on Node ${process.version}${typeof (globalThis as { gc?: unknown }).gc === 'function' ? '' : ' (no --expose-gc: no GC between samples)'}`);
const all = await runSuite([localRunner(rxagentSubject), localRunner(undefined, 'floor')], profile, log);
const samples = all[metric];
const other = all[metric === 'cpu' ? 'wall' : 'cpu'];

const rows: string[][] = [];
const add = (subject: string, row: string) => {
  const summary = samples.summary(subject, row);
  if (summary.n > 0) rows.push([row, fmt(summary.median), fmt(summary.min), fmt(summary.max), fmt(other.median(subject, row))]);
};
for (const variant of ['sync', 'async'] as const) {
  for (const k of profile.streamKs) {
    if (variant === 'async' && k === 0) continue;
    add('rxagent', rowName.stream$(k, variant));
    add('rxagent', rowName.stream(k, variant));
  }
}
add('rxagent', rowName.sliceSync);
add('rxagent', rowName.sliceAsync);
for (const k of [0, 10]) add('rxagent', rowName.generate(k));
add('rxagent', rowName.generatePerProcessor);
for (const k of [0, 5]) add('rxagent', rowName.toolLoop(k));
add('rxagent', rowName.toolPerProcessor);
for (const stages of [0, 1, 5, 10]) add('floor', rowName.floorMap(stages));
for (const stages of [0, 1, 5, 10]) add('floor', rowName.floorAwait(stages));

const slowNone = await slowConsumer(rxagentSubject, profile.slowChunks, 'none');
const slowAsync = await slowConsumer(rxagentSubject, profile.slowChunks, 'async');
rows.push([`max chunks buffered, consumer 1 chunk/ms, ${profile.slowChunks} chunks, no processor`, String(slowNone.maxBuffered), '', '', '']);
rows.push([`max chunks buffered, consumer 1 chunk/ms, ${profile.slowChunks} chunks, 1 async processor`, String(slowAsync.maxBuffered), '', '', '']);

const memory = await measureMemory('rxagent', profile);
const { streams, chunks, processors } = profile.memory;
rows.push([`${streams} streams × ${chunks} chunks × ${processors} processors: live KiB per in-flight stream`, fmt(memory.liveBytesPerStream / 1024), '', '', '']);
rows.push([`… parts pulled ahead of each paused consumer`, fmt(memory.bufferedPerStream), '', '', '']);
rows.push([`… peak RSS (MiB)`, fmt(memory.peakRssBytes / 2 ** 20), '', '', '']);

process.stdout.write(`\nrxagent benchmark (${profile.name}: ${profile.chunks} chunks, ${profile.reps} reps; ${metric === 'cpu' ? 'CPU time' : 'wall clock'}), Node ${process.version}\n\n`);
process.stdout.write(`${markdownTable(['workload', 'median', 'min', 'max', metric === 'cpu' ? 'wall median' : 'CPU median'], rows)}\n`);
if (args.has('--check')) {
  // Hostile input: every guard owned by rxagent's text scanning must stay under the stall limit.
  const report = await hostileReport({ only: 'guards', deltaSize: 64, log });
  process.stdout.write(`\n${report.table}\n`);
  if (report.failures.length > 0) {
    process.stderr.write(`bench: FAILED: event-loop stall over ${HOSTILE_STALL_LIMIT_MS} ms on hostile input:\n${report.failures.join('\n')}\n`);
    process.exit(1);
  }
}
// The windowed model-backed guards (bench/guards.ts, fake clock): the default window setting in CI, every setting in full runs.
const guards = await guardsReport({ settings: args.has('--check') ? 1 : undefined });
process.stdout.write(`\n${guards.table}\n`);
if (guards.failures.length > 0) {
  process.stderr.write(`bench: FAILED: guard targets missed:\n${guards.failures.join('\n')}\n`);
  if (args.has('--check')) process.exit(1);
}
log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
