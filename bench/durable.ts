/**
 * Durable-run rows (issue 25) against a real local PostgreSQL (DATABASE_URL, else a throwaway
 * cluster like the tests start). Two journals on one database play two instances: A owns and
 * writes the run, B serves readers.
 *
 *   catch-up      20,000 journaled chunks read from seq 0 through journalStreamResponse on B:
 *                 request → first byte, whole read, RSS growth while reading
 *   live tail     A appends one chunk → B's SSE response yields it (NOTIFY), p50/p95 of 50
 *   resume        B answers resumeUIMessageStreamResponse(after: '<seq>:<k>') mid-run:
 *                 request → first resumed UI chunk, p50/p95 of 50
 *   writer CPU    journalTo encode + batch per chunk (journal answering at once), and the
 *                 owner's whole CPU per chunk writing through PostgresRunJournal (driver included)
 *   worker        takeover (SIGKILL → claim, SIGKILL → next owner's first chunk), runs/s over worker processes, durable − plain owner
 *                 CPU per chunk (bench/durable-worker.ts)
 *   long step     an open step of 1,000,000 deltas (generate_series): a takeover's plan (≤ 2 s,
 *                 entries read, RSS) and a UI resume near its end (first byte ≤ 250 ms)
 *                 (bench/durable-long-step.ts; not in --check: building it takes ≈ 20 s)
 *
 * npm run bench:durable           (prints a table)
 * npm run bench:durable -- --check  a small run of every row (one takeover, 100 runs over 2 workers,
 *                                   fewer rounds) that exits 1 when a row misses its target (the
 *                                   owner-CPU row is reported only); part of `npm run bench:check`
 * npm run bench:durable -- --worker the worker rows only
 * npm run bench:durable -- --takeover the takeover rows only (5 kills)
 * npm run bench:durable -- --long-step [--chunks N]  the long-step rows only
 * npm run bench:durable -- --cpu    the durable − non-durable owner CPU rows only (9 rounds back to back, 9 with a full GC before each run, ≈ 40 s)
 */
import { randomUUID } from 'node:crypto';
import { Subject, lastValueFrom } from 'rxjs';
import { performance } from 'node:perf_hooks';
import { resumeUIMessageStreamResponse } from '../src/ai-sdk/resume-ui-message-stream-response.js';
import type { ChunkType } from '../src/contract/chunk-types.js';
import { DemandGate } from '../src/contract/demand-gate.js';
import { encodeJson } from '../src/contract/json-codec.js';
import { journalTo, type JournalAppender, type JournalRecord } from '../src/durable/internal/journal-to.js';
import { journalStreamResponse } from '../src/durable/journal-stream-response.js';
import { InMemoryRunJournal } from '../src/storage/journal/in-memory-run-journal.js';
import type { EncodedChunk, RunCommit, RunLease } from '../src/storage/journal/types.js';
import { PostgresRunJournal } from '../src/storage/postgres/postgres-run-journal.js';
import { startTestPostgres } from '../test/support/postgres.js';
import { longStepRows } from './durable-long-step.js';
import { workerRows } from './durable-worker.js';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const check = process.argv.includes('--check');
const cpuOnly = process.argv.includes('--cpu');
const takeoverOnly = process.argv.includes('--takeover');
const longStepOnly = process.argv.includes('--long-step');
const workerOnly = cpuOnly || takeoverOnly || process.argv.includes('--worker');
const longStepChunks = Number(process.argv[process.argv.indexOf('--chunks') + 1] ?? 1_000_000) || 1_000_000;
const schema = `rxagent_bench_${randomUUID().slice(0, 8)}`;

const delta = (runId: string, index: number): ChunkType => ({ type: 'text-delta', runId, from: 'AGENT', payload: { id: 'text-1', text: `token ${index} ` } });
const finish = (runId: string): ChunkType => ({
  type: 'finish',
  runId,
  from: 'AGENT',
  payload: { stepResult: { reason: 'stop' }, output: { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } as never, text: '' } },
});
const final: RunCommit = { kind: 'final', step: 0, attempt: 0, state: {} };

/** Writes `chunks` through journalTo as a run does (pausing while its demand gate is held), then `commit` with `last`. */
async function writeThrough(journal: JournalAppender, lease: RunLease, chunks: readonly ChunkType[], commit?: { commit: RunCommit; chunks: ChunkType[] }): Promise<void> {
  const demand = new DemandGate();
  const records = new Subject<JournalRecord>();
  const written = lastValueFrom(records.pipe(journalTo(journal, lease, { demand })), { defaultValue: undefined });
  for (const chunk of chunks) {
    records.next(chunk);
    if (!demand.open) await demand.whenOpen();
  }
  if (commit !== undefined) records.next(commit);
  records.complete();
  await written;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function newRun(journal: PostgresRunJournal | InMemoryRunJournal, runId: string): Promise<RunLease> {
  await journal.createRun({ runId, agentId: 'bench', input: null });
  return (await journal.claim(runId, 'owner-a')).lease;
}

/** Reads a body until `until` holds for the text so far; resolves with the time of the first byte. */
async function readBody(body: ReadableStream<Uint8Array>, onBytes?: (text: string) => boolean): Promise<{ firstByteAt: number; text: string }> {
  const reader = body.pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>).getReader();
  let firstByteAt = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (firstByteAt === 0) firstByteAt = performance.now();
    text = value; // only the latest piece is kept: the catch-up row measures the reader, not a copy of the run
    if (onBytes?.(value) === true) {
      await reader.cancel();
      break;
    }
  }
  return { firstByteAt, text };
}

async function catchUp(a: PostgresRunJournal, b: PostgresRunJournal) {
  const runId = `catch-up-${randomUUID()}`;
  const lease = await newRun(a, runId);
  await writeThrough(
    a,
    lease,
    Array.from({ length: 20_000 }, (_, index) => delta(runId, index)),
    { commit: final, chunks: [finish(runId)] },
  );
  await b.getRun(runId); // a serving instance has a warm pool
  const reads: Array<{ respondMs: number; firstByteMs: number; totalMs: number; rssGrowthMb: number; entries: number }> = [];
  for (let round = 0; round < (check ? 2 : 5); round++) {
    gc();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 5);
    const requestedAt = performance.now();
    const response = await journalStreamResponse(b, runId, { unsafeNoAuthorization: true });
    const respondedAt = performance.now();
    let entries = 0;
    const { firstByteAt } = await readBody(response.body!, (piece) => {
      entries += piece.split('\n\n').length - 1;
      return false;
    });
    const doneAt = performance.now();
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    reads.push({ respondMs: respondedAt - requestedAt, firstByteMs: firstByteAt - requestedAt, totalMs: doneAt - requestedAt, rssGrowthMb: (rssPeak - rssBefore) / 2 ** 20, entries });
  }
  const median = (pick: (read: (typeof reads)[number]) => number) => percentile(reads.map(pick), 50);
  return {
    respondMs: median((read) => read.respondMs),
    firstByteMs: median((read) => read.firstByteMs),
    firstByteMaxMs: Math.max(...reads.map((read) => read.firstByteMs)),
    totalMs: median((read) => read.totalMs),
    rssGrowthMb: Math.max(...reads.map((read) => read.rssGrowthMb)),
    entries: reads[0]?.entries ?? 0,
  };
}

async function liveTail(a: PostgresRunJournal, b: PostgresRunJournal) {
  const runId = `tail-${randomUUID()}`;
  const lease = await newRun(a, runId);
  await a.append(lease, [delta(runId, 0)]);
  const response = await journalStreamResponse(b, runId, { unsafeNoAuthorization: true, after: 1 });
  const reader = response.body!.pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>).getReader();
  const samples: number[] = [];
  for (let index = 1; index <= (check ? 30 : 60); index++) {
    const sentAt = performance.now();
    const arrived = reader.read();
    await a.append(lease, [delta(runId, index)]);
    await arrived;
    if (index > 10) samples.push(performance.now() - sentAt);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await a.append(lease, [finish(runId)], final);
  await reader.cancel();
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

async function resume(a: PostgresRunJournal, b: PostgresRunJournal) {
  const runId = `resume-${randomUUID()}`;
  const lease = await newRun(a, runId);
  const chunks: ChunkType[] = [
    { type: 'start', runId, from: 'AGENT', payload: { messageId: 'm1' } },
    { type: 'step-start', runId, from: 'AGENT', payload: { stepNumber: 0 } },
    { type: 'text-start', runId, from: 'AGENT', payload: { id: 'text-1' } },
    ...Array.from({ length: 600 }, (_, index) => delta(runId, index)),
  ];
  await a.append(lease, chunks);
  const samples: number[] = [];
  for (let index = 0; index < (check ? 30 : 60); index++) {
    const seq = 4 + ((index * 37) % 590);
    const requestedAt = performance.now();
    const response = await resumeUIMessageStreamResponse(b, runId, { unsafeNoAuthorization: true, after: `${seq}:0` });
    const { firstByteAt } = await readBody(response.body!, () => true);
    if (index >= 10) samples.push(firstByteAt - requestedAt);
  }
  await a.append(lease, [finish(runId)], final);
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

/** A journal that accepts every append at once: the writer's own cost. */
class InstantJournal extends InMemoryRunJournal {
  #seq = 0;
  override async appendEncoded(_lease: RunLease, chunks: readonly EncodedChunk[]): Promise<{ lastSeq: number }> {
    this.#seq += chunks.length;
    return { lastSeq: this.#seq };
  }
}

async function writerCpu(a: PostgresRunJournal) {
  const count = 100_000;
  const instant = new InstantJournal();
  const chunks = Array.from({ length: count }, (_, index) => delta('r', index));
  const lease = { runId: 'r', epoch: 1, owner: 'w' };
  // warm-up, then measure
  for (let round = 0; round < 2; round++) {
    gc();
    const before = process.cpuUsage();
    await writeThrough(instant, lease, chunks);
    const used = process.cpuUsage(before);
    if (round === 1) {
      const writerUs = (used.user + used.system) / count;
      gc();
      const codecBefore = process.cpuUsage();
      for (const chunk of chunks) encodeJson(chunk, 'chunk text-delta');
      const codecUsed = process.cpuUsage(codecBefore);
      const codecUs = (codecUsed.user + codecUsed.system) / count;
      gc();
      const plainBefore = process.cpuUsage();
      for (const chunk of chunks) JSON.stringify(chunk);
      const plainUsed = process.cpuUsage(plainBefore);
      const stringifyUs = (plainUsed.user + plainUsed.system) / count;
      const runId = `cpu-${randomUUID()}`;
      const pgLease = await newRun(a, runId);
      const pgChunks = Array.from({ length: 20_000 }, (_, index) => delta(runId, index));
      gc();
      const pgBefore = process.cpuUsage();
      await writeThrough(a, pgLease, pgChunks, { commit: final, chunks: [finish(runId)] });
      const pgUsed = process.cpuUsage(pgBefore);
      return { writerUs, codecUs, stringifyUs, ownerUs: (pgUsed.user + pgUsed.system) / 20_000 };
    }
  }
  throw new Error('unreachable');
}

const server = await startTestPostgres();
const a = new PostgresRunJournal({ connectionString: server.connectionString, schema });
const b = new PostgresRunJournal({ connectionString: server.connectionString, schema });
try {
  await a.getRun('warm-up');
  await b.getRun('warm-up'); // both pools open; the first use migrates
  const rows: Array<[string, string, string, boolean]> = [];
  if (!workerOnly && !check) {
    const long = await longStepRows({ connectionString: server.connectionString, schema, owner: a, chunks: longStepChunks });
    const n = long.chunks.toLocaleString('en');
    rows.push(
      [`${n}-delta open step: takeover plan (claim + planTakeover)`, `${long.takeoverMs.toFixed(1)} ms, ${long.takeoverEntries} entries read`, '≤ 2 s', long.takeoverMs <= 2000],
      ['  RSS growth during the takeover plan', `${long.takeoverRssMb.toFixed(1)} MB`, 'report', true],
      [`${n}-delta open step: UI resume near its end → first byte, median / max of 5`, `${long.resumeFirstByteMs.toFixed(1)} / ${long.resumeFirstByteMaxMs.toFixed(1)} ms (${long.resumeEntries} entries read)`, '≤ 250 ms', long.resumeFirstByteMs <= 250],
      ['  building the step (INSERT … generate_series, ANALYZE)', `${long.buildSeconds.toFixed(1)} s`, 'report', true],
    );
  }
  if (!workerOnly && !longStepOnly) {
    const catchUpRow = await catchUp(a, b);
    const tail = await liveTail(a, b);
    const resumed = await resume(a, b);
    const cpu = await writerCpu(a);
    rows.push(
      ['20,000-chunk catch-up: request → first byte, median / max of 5', `${catchUpRow.firstByteMs.toFixed(1)} / ${catchUpRow.firstByteMaxMs.toFixed(1)} ms`, '≤ 250 ms', catchUpRow.firstByteMs <= 250],
      ['  of which request → response headers', `${catchUpRow.respondMs.toFixed(1)} ms`, 'report', true],
      ['20,000-chunk catch-up: RSS growth while reading (max of 5)', `${catchUpRow.rssGrowthMb.toFixed(1)} MB`, '≤ 20 MB', catchUpRow.rssGrowthMb <= 20],
      ['20,000-chunk catch-up: whole read (median)', `${catchUpRow.totalMs.toFixed(0)} ms (${catchUpRow.entries} events)`, 'report', true],
      ['live tail: append on A → SSE on B, p50 / p95', `${tail.p50.toFixed(1)} / ${tail.p95.toFixed(1)} ms`, 'p95 ≤ 50 ms', tail.p95 <= 50],
      ['resume on B: request → first resumed chunk, p50 / p95', `${resumed.p50.toFixed(1)} / ${resumed.p95.toFixed(1)} ms`, 'p95 ≤ 100 ms', resumed.p95 <= 100],
      ['writer CPU per chunk (encode + batch)', `${cpu.writerUs.toFixed(2)} µs`, 'part of ≤ 3 µs', cpu.writerUs <= 3],
      ['  of which the codec (encodeJson) / plain JSON.stringify', `${cpu.codecUs.toFixed(2)} / ${cpu.stringifyUs.toFixed(2)} µs`, 'report', true],
      ['owner CPU per chunk through PostgresRunJournal (driver incl.)', `${cpu.ownerUs.toFixed(2)} µs`, 'report', true],
    );
  }
  const worker = longStepOnly ? undefined : await workerRows({ connectionString: server.connectionString, takeovers: check ? 1 : 5, runs: check ? 100 : 1000, workers: check ? 2 : 4, chunks: 10_000, cpuOnly, takeoverOnly });
  // --check (CI) prints the CPU row but does not fail on it: CPU per chunk on a shared 2-core machine is a measurement, not a test
  const cpuTarget = check ? '≤ 3 µs (reported)' : '≤ 3 µs';
  if (worker?.cpu !== undefined) rows.push(
    ['durable − non-durable owner CPU per chunk (10k-chunk step)', `${worker.cpu.overheadUs.toFixed(2)} µs`, cpuTarget, check || worker.cpu.overheadUs <= 3],
    ['  durable / non-durable owner CPU per chunk', `${worker.cpu.durableUs.toFixed(2)} / ${worker.cpu.plainUs.toFixed(2)} µs`, 'report', true],
    ['  of which on the main thread (no JIT/GC threads)', `${worker.cpu.mainOverheadUs.toFixed(2)} µs`, 'report', true],
    ['  with a full GC before each run: process / main', `${worker.cpu.forcedGcOverheadUs.toFixed(2)} / ${worker.cpu.forcedGcMainOverheadUs.toFixed(2)} µs`, 'report', true],
  );
  // --check (CI, one kill on a loaded machine): the first-chunk row fails only past 5 s
  if (worker?.takeover !== undefined) rows.push(
    [`takeover SIGKILL → claim, p50 / p95 of ${worker.takeover.samples}`, `${(worker.takeover.p50 / 1000).toFixed(2)} / ${(worker.takeover.p95 / 1000).toFixed(2)} s`, 'p95 ≤ 15 s', worker.takeover.p95 <= 15_000],
    [`takeover after process kill → next owner's first chunk, p50 / p95 of ${worker.takeover.samples}`, `${(worker.takeover.firstChunkP50 / 1000).toFixed(2)} / ${(worker.takeover.firstChunkP95 / 1000).toFixed(2)} s`, check ? 'p95 ≤ 2 s (fails past 5 s)' : 'p95 ≤ 2 s', worker.takeover.firstChunkP95 <= (check ? 5000 : 2000)],
  );
  if (worker?.throughput !== undefined) rows.push(
    [`${worker.throughput.runs} runs / ${worker.throughput.workers} workers × 8`, `${worker.throughput.runsPerSecond.toFixed(1)} runs/s (${worker.throughput.seconds.toFixed(1)} s)`, 'report', true],
  );
  const width = Math.max(...rows.map((row) => row[0].length));
  console.log(`\nDurable rows — Node ${process.version}, PostgreSQL ${server.started ? 'throwaway cluster' : 'DATABASE_URL'}\n`);
  console.log(`${'row'.padEnd(width)}  ${'measured'.padEnd(28)}  target`);
  for (const [name, measured, target, ok] of rows) console.log(`${name.padEnd(width)}  ${measured.padEnd(28)}  ${target}${ok ? '' : '  ✗'}`);
  if (check && rows.some((row) => !row[3])) process.exitCode = 1;
} finally {
  await Promise.all([a.close(), b.close()]);
  if (!server.started) {
    const pg = await import('pg');
    const pool = new pg.default.Pool({ connectionString: server.connectionString });
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
  await server.stop();
}
