/**
 * Two copies of rxagent side by side, for before/after questions ("is every per-chunk row within
 * 10 % of before?"). Each copy runs in its own worker process (in one process the two copies would
 * share rxjs, whose inline caches then see both copies' objects: that slows whichever leans on
 * rxjs more, a bias no user has). Every round times each row on both copies back to back, in
 * A-B-B-A order across rounds, and keeps the ratio of the pair; the table gives the median of
 * those per-round ratios and their middle half (25th–75th percentile). A pair shares the load the
 * machine had in that second, so a ratio of pairs moves far less with other work on the machine
 * than a ratio of two medians taken minutes apart in different processes (`bench:compare`).
 * Times are process CPU time per unit (`--wall` for wall clock).
 *
 *   npm run bench:ab -- --after dist --before .ab/base-dist [--rounds 15] [--quick] [--rows stream] [--wall] [--node 24]
 *
 * `--rows` keeps the rows whose name contains the text. Ratio = after / before. `--before ai-sdk`
 * puts the AI SDK itself (`streamText` / `generateText`) in the before column, for the rows it has
 * (e.g. `--rows "generate(), K=0"`).
 */
import { reexecOnNode } from './lib/node-version.js';
import { markdownTable, fmt, summarize } from './lib/stats.js';
import { profiles, workloads, type Timing } from './lib/suite.js';
import { startWorker } from './lib/worker-runner.js';

const argv = process.argv.slice(2);
await reexecOnNode(argv);
const option = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const after = option('--after');
const before = option('--before');
if (after === undefined || before === undefined) throw new TypeError('bench/ab.ts: give both copies, e.g. --after dist --before .ab/base-dist');
const rounds = Number(option('--rounds') ?? 15);
if (!Number.isInteger(rounds) || rounds < 2) throw new TypeError(`bench/ab.ts: --rounds must be an integer ≥ 2, got ${option('--rounds')}`);
const profile = profiles[argv.includes('--quick') ? 'quick' : 'full'];
const metric: keyof Timing = argv.includes('--wall') ? 'wall' : 'cpu';
const only = option('--rows');

const subjects = [
  await startWorker('rxagent', profile, { name: 'after', env: { RXAGENT_BENCH_SRC: after } }),
  before === 'ai-sdk' ? await startWorker('ai-sdk', profile, { name: 'before' }) : await startWorker('rxagent', profile, { name: 'before', env: { RXAGENT_BENCH_SRC: before } }),
] as const;
const rows = workloads(profile).filter((workload) => subjects.every((subject) => subject.measures(workload)) && (only === undefined || workload.row.includes(only)));
if (rows.length === 0) throw new TypeError(`bench/ab.ts: no row contains ${JSON.stringify(only)}`);

const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))] as number;
const table: string[][] = [];
const started = performance.now();
for (const workload of rows) {
  const times = { after: [] as number[], before: [] as number[] };
  const ratios: number[] = [];
  for (let round = -1; round < rounds; round++) {
    const pair = round % 2 === 0 ? subjects : ([subjects[1], subjects[0]] as const);
    const timed: Record<string, number> = {};
    for (const subject of pair) timed[subject.name] = (await subject.measure(workload))[metric];
    if (round < 0) continue; // round -1 warms both copies up
    times.after.push(timed.after as number);
    times.before.push(timed.before as number);
    ratios.push((timed.after as number) / (timed.before as number));
  }
  const sorted = [...ratios].sort((left, right) => left - right);
  table.push([workload.row, fmt(summarize(times.after).median), fmt(summarize(times.before).median), quantile(sorted, 0.5).toFixed(2), `${quantile(sorted, 0.25).toFixed(2)}–${quantile(sorted, 0.75).toFixed(2)}`]);
  process.stderr.write(`ab: ${workload.row} done (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
}
console.log(`after = ${after}, before = ${before}; ${rounds} paired rounds, ${profile.name} sizes, ${metric === 'cpu' ? 'process CPU time' : 'wall clock'}; Node ${process.version}`);
console.log(markdownTable(['row', 'after', 'before', 'ratio (median of pairs)', 'middle half of pairs'], table));
for (const subject of subjects) subject.close?.();
