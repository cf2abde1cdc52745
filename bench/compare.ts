/**
 * `npm run bench:compare`: rxagent and the reference implementation (`@mastra/core`, pinned in
 * bench/peer, installed there on first use) on the same workloads and the same model objects,
 * alternating A/B row by row; ratios rxagent / reference per row, and every target of the
 * benchmark issue as a row marked met or not.
 *
 * By default each implementation runs in its own worker process, both driven by this one, one
 * row at a time in alternating order: on Node 22 the reference's AsyncLocalStorage turns on
 * async_hooks promise hooks for the whole process, which slows every promise of whatever else
 * runs there (rxagent, the floors) 3–5×. `--same-process` runs both here anyway. Times are
 * wall clock per unit (`--cpu`: process CPU time); memory runs each implementation alone.
 *
 * A third column is the AI SDK itself (`streamText` with `experimental_transform` stages,
 * `generateText`), in its own worker too: what a user would pick instead of either framework.
 *
 *   npm run bench:compare                     full sizes (several minutes)
 *   npm run bench:compare -- --quick --json   reduced sizes (< 2 min); last line: { "rows": [...] }
 *   npm run bench:compare -- --node 24        the same on Node 24 (installed into bench/node24 on first use)
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { resolve, sep } from 'node:path';
import { measureMemory } from './lib/memory.js';
import { loadReferenceSubject } from './lib/reference-subject.js';
import { rxagentSubject } from './lib/rxagent-subject.js';
import { fmt, markdownTable } from './lib/stats.js';
import { localRunner, profiles, rowName, runSuite, slowConsumer, type Runner, type SuiteProfile } from './lib/suite.js';
import { startWorker, type WorkerRunner } from './lib/worker-runner.js';
import { reexecOnNode } from './lib/node-version.js';

await reexecOnNode(process.argv.slice(2));
const args = new Set(process.argv.slice(2));
const profile: SuiteProfile = args.has('--check') ? profiles.check : args.has('--quick') ? profiles.quick : profiles.full;
const json = args.has('--json');
const metric = args.has('--cpu') ? 'cpu' : 'wall';
const sameProcess = args.has('--same-process');
const argv = process.argv.slice(2);
/** `--baseline-src DIR`: instead of the reference, rxagent from another copy of src/ (before/after figures). */
const baselineSrc = argv.includes('--baseline-src') ? argv[argv.indexOf('--baseline-src') + 1] : undefined;
const baselineEnv = baselineSrc === undefined ? undefined : { RXAGENT_BENCH_SRC: baselineSrc };
/** `--rxagent-src DIR`: rxagent itself from another copy of src/ (default: this checkout's src/). */
const rxagentSrc = argv.includes('--rxagent-src') ? argv[argv.indexOf('--rxagent-src') + 1] : undefined;
const rxagentEnv = rxagentSrc === undefined ? undefined : { RXAGENT_BENCH_SRC: rxagentSrc };
const log = (line: string) => process.stderr.write(`bench:compare: ${line}\n`);
// A copy of src/ outside the repository finds no `rxjs` and loads as CommonJS (no package.json with
// "type": "module" above it), which runs the same code slower: refuse it rather than measure that.
for (const dir of [baselineSrc, rxagentSrc]) {
  if (dir !== undefined && !resolve(dir).startsWith(`${process.cwd()}${sep}`)) {
    throw new Error(`bench:compare: ${dir} is outside this repository; copy src/ inside it (e.g. .ab/base-src, gitignored) so it loads as ESM with the same node_modules`);
  }
}

/** One target row of the issue. */
interface TargetRow {
  name: string;
  rxagent: number;
  reference: number;
  ratio: number;
  target: string;
  met: boolean;
  /** A target the issue "The loop reads as the pipeline it promises" retired: reported, not judged. */
  retired?: true;
}

type Slow = { maxBuffered: number; received: number };
interface Side {
  runner: Runner;
  version: string;
  slow(chunks: number): Promise<Slow>;
}

const started = performance.now();
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${loadavg()
  .map((value) => value.toFixed(1))
  .join('/')}`;

async function sides(): Promise<{ rx: Side; ref: Side }> {
  if (baselineSrc !== undefined) {
    const [rx, base] = await Promise.all([
      startWorker('rxagent', profile, { name: 'rxagent', ...(rxagentEnv ? { env: rxagentEnv } : {}) }),
      startWorker('rxagent', profile, { name: 'reference', env: baselineEnv }),
    ]);
    return {
      rx: { runner: rx, version: rx.version, slow: (chunks) => rx.slowConsumer(chunks) },
      ref: { runner: base, version: `baseline ${baselineSrc}`, slow: (chunks) => base.slowConsumer(chunks) },
    };
  }
  if (sameProcess) {
    const reference = await loadReferenceSubject();
    return {
      rx: { runner: localRunner(rxagentSubject), version: 'source', slow: (chunks) => slowConsumer(rxagentSubject, chunks, 'async') },
      ref: { runner: localRunner(reference), version: reference.version, slow: (chunks) => slowConsumer(reference, chunks, 'async') },
    };
  }
  const [rx, ref] = await Promise.all([startWorker('rxagent', profile, rxagentEnv ? { env: rxagentEnv } : {}), startWorker('reference', profile)]);
  return {
    rx: { runner: rx, version: rx.version, slow: (chunks) => rx.slowConsumer(chunks) },
    ref: { runner: ref, version: ref.version, slow: (chunks) => ref.slowConsumer(chunks) },
  };
}

const { rx, ref } = await sides();
/** The AI SDK column (not in `--baseline-src` runs, which compare two copies of rxagent). */
const aiSdk: WorkerRunner | undefined = baselineSrc === undefined ? await startWorker('ai-sdk', profile) : undefined;
const referenceVersion = ref.version;
const referenceLabel = baselineSrc === undefined ? `@mastra/core ${referenceVersion}` : referenceVersion;
log(`profile ${profile.name}; rxagent vs ${referenceLabel}; ${sameProcess ? 'one process' : 'one worker process each'}; ${metric === 'cpu' ? 'CPU time' : 'wall clock'}; Node ${process.version}; ${machine}`);
const all = await runSuite([rx.runner, ref.runner, ...(aiSdk ? [aiSdk] : []), localRunner(undefined, 'floor')], profile, log);
const samples = all[metric];

const slow = {
  rxagent: await rx.slow(profile.slowChunks),
  reference: await ref.slow(profile.slowChunks),
};
rx.runner.close?.();
ref.runner.close?.();
aiSdk?.close?.();
log(`slow consumer: rxagent ${slow.rxagent.maxBuffered}, reference ${slow.reference.maxBuffered} chunks buffered at most`);
const memory = {
  rxagent: await measureMemory('rxagent', profile, rxagentEnv),
  reference: baselineEnv === undefined ? await measureMemory('reference', profile) : await measureMemory('rxagent', profile, baselineEnv),
  aiSdk: aiSdk === undefined ? undefined : await measureMemory('ai-sdk', profile),
};
log(`memory: rxagent ${fmt(memory.rxagent.liveBytesPerStream / 1024)} KiB/stream, reference ${fmt(memory.reference.liveBytesPerStream / 1024)} KiB/stream`);

// --- every workload, both implementations ---
const workloadRows: string[][] = [];
const both = (row: string) => {
  const a = samples.summary('rxagent', row);
  const b = samples.summary('reference', row);
  const c = aiSdk === undefined ? undefined : samples.summary('ai-sdk', row);
  workloadRows.push([
    row,
    fmt(a.median),
    `${fmt(a.min)}–${fmt(a.max)}`,
    fmt(b.median),
    `${fmt(b.min)}–${fmt(b.max)}`,
    fmt(a.median / b.median),
    c === undefined || !Number.isFinite(c.median) ? '' : fmt(c.median),
    c === undefined || !Number.isFinite(c.median) ? '' : fmt(a.median / c.median),
  ]);
};
for (const variant of ['sync', 'async'] as const) {
  for (const k of profile.streamKs) if (!(variant === 'async' && k === 0)) both(rowName.stream(k, variant));
}
for (const variant of ['sync', 'async'] as const) {
  for (const k of profile.streamKs) if (!(variant === 'async' && k === 0)) both(rowName.stream$(k, variant));
}
both(rowName.sliceSync);
both(rowName.sliceAsync);
for (const k of [0, 10]) both(rowName.generate(k));
both(rowName.generatePerProcessor);
for (const k of [0, 5]) both(rowName.toolLoop(k));
both(rowName.toolPerProcessor);
const { streams, chunks, processors } = profile.memory;
const aiMemory = memory.aiSdk;
workloadRows.push([
  `${streams} streams × ${chunks} chunks × ${processors} processors: live KiB per in-flight stream`,
  fmt(memory.rxagent.liveBytesPerStream / 1024),
  '',
  fmt(memory.reference.liveBytesPerStream / 1024),
  '',
  fmt(memory.rxagent.liveBytesPerStream / memory.reference.liveBytesPerStream),
  aiMemory === undefined ? '' : fmt(aiMemory.liveBytesPerStream / 1024),
  aiMemory === undefined ? '' : fmt(memory.rxagent.liveBytesPerStream / aiMemory.liveBytesPerStream),
]);
workloadRows.push([
  '… parts pulled ahead of each paused consumer',
  fmt(memory.rxagent.bufferedPerStream),
  '',
  fmt(memory.reference.bufferedPerStream),
  '',
  '',
  aiMemory === undefined ? '' : fmt(aiMemory.bufferedPerStream),
  '',
]);
workloadRows.push([
  '… peak RSS (MiB, own process)',
  fmt(memory.rxagent.peakRssBytes / 2 ** 20),
  '',
  fmt(memory.reference.peakRssBytes / 2 ** 20),
  '',
  fmt(memory.rxagent.peakRssBytes / memory.reference.peakRssBytes),
  aiMemory === undefined ? '' : fmt(aiMemory.peakRssBytes / 2 ** 20),
  aiMemory === undefined ? '' : fmt(memory.rxagent.peakRssBytes / aiMemory.peakRssBytes),
]);
workloadRows.push([
  `max chunks buffered, consumer 1 chunk/ms (${profile.slowChunks} chunks, 1 async processor)`,
  String(slow.rxagent.maxBuffered),
  '',
  String(slow.reference.maxBuffered),
  '',
  '',
  '',
  '',
]);
const floorRow = (row: string) => workloadRows.push([row, fmt(samples.median('floor', row)), '', '', '', '', '', '']);
for (const stages of [0, 1, 5, 10]) floorRow(rowName.floorMap(stages));
for (const stages of [0, 1, 5, 10]) floorRow(rowName.floorAwait(stages));
for (const stages of [0, 1, 5, 10]) floorRow(rowName.floorAwaitSync(stages));

// --- the targets ---
const targets: TargetRow[] = [];
const ratioTarget = (name: string, row: string, bound: number, label: string) => {
  const rxagent = samples.median('rxagent', row);
  const ref = samples.median('reference', row);
  const ratio = rxagent / ref;
  targets.push({ name, rxagent, reference: ref, ratio, target: `ratio ≤ ${label}`, met: ratio <= bound });
};
ratioTarget('whole run at K=0 (µs/chunk)', rowName.stream(0, 'sync'), 1 / 10, '1/10');
ratioTarget('marginal sync processor (µs/processor/chunk)', rowName.sliceSync, 1 / 30, '1/30');
ratioTarget('marginal async processor (µs/processor/chunk)', rowName.sliceAsync, 1 / 10, '1/10');
ratioTarget('generate() per call, K=0 (ms)', rowName.generate(0), 1 / 10, '1/10');
ratioTarget('generate() per processInput processor (ms)', rowName.generatePerProcessor, 1 / 10, '1/10');
ratioTarget('tool loop per step, K=0 (ms)', rowName.toolLoop(0), 1 / 10, '1/10');
ratioTarget('tool loop per processor per step (ms)', rowName.toolPerProcessor, 1 / 10, '1/10');
{
  const rx = memory.rxagent.liveBytesPerStream / 1024;
  const ref = memory.reference.liveBytesPerStream / 1024;
  targets.push({ name: 'live KiB per in-flight stream', rxagent: rx, reference: ref, ratio: rx / ref, target: 'ratio ≤ 1/10', met: rx / ref <= 1 / 10 });
}
targets.push({
  name: 'max chunks buffered, consumer 1 chunk/ms',
  rxagent: slow.rxagent.maxBuffered,
  reference: slow.reference.maxBuffered,
  ratio: slow.rxagent.maxBuffered / Math.max(slow.reference.maxBuffered, 1),
  target: 'rxagent ≤ 64',
  met: slow.rxagent.maxBuffered <= 64,
});
{
  // stream$() here: like the floor, one async hop per part (the provider's stream); stream() adds
  // a second web stream for the consumer, which the floor does not have.
  const rx = samples.median('rxagent', rowName.stream$(10, 'sync'));
  const floor = samples.median('floor', rowName.floorAwait(10));
  targets.push({
    name: 'whole run stream$() at K=10 sync vs for-await + async-fn floor ×10 (µs/chunk; reference column = floor)',
    rxagent: rx,
    reference: floor,
    ratio: rx / floor,
    target: 'ratio ≤ 3',
    met: rx / floor <= 3,
  });
}

{
  // the same 10 synchronous functions, called from the cheapest loop that reads the provider stream
  const rx = samples.median('rxagent', rowName.stream$(10, 'sync'));
  const floor = samples.median('floor', rowName.floorAwaitSync(10));
  targets.push({
    name: 'whole run stream$() at K=10 sync vs for-await + sync-fn floor ×10 (µs/chunk; reference column = floor)',
    rxagent: rx,
    reference: floor,
    ratio: rx / floor,
    target: 'ratio ≤ 2 (retired)',
    met: rx / floor <= 2,
    retired: true,
  });
}
{
  const rx = memory.rxagent.liveBytesPerStream / 1024;
  targets.push({ name: 'live KiB per in-flight stream, absolute (reference column = reference)', rxagent: rx, reference: memory.reference.liveBytesPerStream / 1024, ratio: rx / (memory.reference.liveBytesPerStream / 1024), target: 'rxagent ≤ 10 KiB (retired)', met: rx <= 10, retired: true });
}
if (aiSdk !== undefined) {
  // a user must not pay for processors they do not use
  const rx = samples.median('rxagent', rowName.generate(0));
  const sdk = samples.median('ai-sdk', rowName.generate(0));
  targets.push({ name: 'generate() per call, K=0 vs AI SDK generateText (ms; reference column = AI SDK)', rxagent: rx, reference: sdk, ratio: rx / sdk, target: 'ratio ≤ 1', met: rx / sdk <= 1 });
}

const out = (text: string) => process.stdout.write(text);
out(`\nrxagent vs ${referenceLabel}${aiSdk === undefined ? '' : ' and the AI SDK (ai ' + aiSdk.version + ')'} (${profile.name}: ${profile.chunks} chunks, ${profile.reps} reps, A/B alternating, ${sameProcess ? 'one process' : 'one worker process each'}, ${metric === 'cpu' ? 'CPU time' : 'wall clock'})\n`);
out(`Node ${process.version}, ${machine}\n\n`);
out(`${markdownTable(['workload', 'rxagent', 'rxagent min–max', 'reference', 'reference min–max', 'ratio', 'AI SDK', 'ratio to AI SDK'], workloadRows)}\n\n`);
out(
  `${markdownTable(
    ['target', 'rxagent', 'reference', 'ratio', 'target', 'met'],
    targets.map((row) => [row.name, fmt(row.rxagent), fmt(row.reference), fmt(row.ratio), row.target, row.retired ? 'report' : row.met ? 'met' : 'NOT met']),
  )}\n`,
);
log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
if (json) {
  const round = (value: number) => (Number.isFinite(value) ? Number(value.toPrecision(4)) : null);
  out(`${JSON.stringify({ rows: targets.map((row) => ({ name: row.name, rxagent: round(row.rxagent), reference: round(row.reference), ratio: round(row.ratio), target: row.target, met: row.met, ...(row.retired ? { retired: true } : {}) })) })}\n`);
}
