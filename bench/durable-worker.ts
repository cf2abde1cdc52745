/**
 * The worker's rows of `npm run bench:durable` (issue 25), against the same PostgreSQL:
 *
 *   takeover      a worker process SIGKILLed at a step commit; another, already working the
 *                 queue, claims the run: kill → claim, and kill → the next owner's first chunk
 *                 (read live from the journal here), p50/p95 (pg-boss heartbeat 10 s, monitor 1 s;
 *                 the owner-session sweep, on by default, sees the dead session at once)
 *   throughput    N runs (one short step, memory) over W worker processes × 8: runs/s
 *   owner CPU     one run streaming a 10,000-chunk step: the owner process's CPU per chunk as a
 *                 durable run (createRunWorker on PostgresRunJournal) minus as a plain run
 *                 (agent.stream$), both in this process, runs back to back (the row: no forced GC
 *                 before a timed sample, as everywhere in bench/), and again with a full GC before
 *                 each run; each also on the main thread only
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, lastValueFrom } from 'rxjs';
import { Agent } from '../src/index.js';
import { createRunWorker } from '../src/durable/index.js';
import { InMemoryStorage, Memory } from '../src/memory/index.js';
import { PostgresRunJournal, PostgresStorage } from '../src/storage/postgres/index.js';
import { finishPart, textParts } from '../src/testing/index.js';
import { matrixTables, type MatrixCase } from '../test/durable/fixtures/matrix.js';
import { WorkerProcess } from '../test/durable/fixtures/worker-processes.js';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export interface WorkerRowsOptions {
  connectionString: string;
  /** Kills measured (each ≈ 10–12 s: the heartbeat). */
  takeovers: number;
  /** Runs and worker processes of the throughput row. */
  runs: number;
  workers: number;
  /** Chunks of the CPU row's step. */
  chunks: number;
  /** Only the owner CPU row, measured over 9 rounds instead of 3 (no takeover, no throughput). */
  cpuOnly?: boolean;
  /** Only the takeover rows. */
  takeoverOnly?: boolean;
}

export interface WorkerRows {
  takeover?: { p50: number; p95: number; samples: number; firstChunkP50: number; firstChunkP95: number };
  throughput?: { runs: number; workers: number; seconds: number; runsPerSecond: number };
  cpu?: {
    durableUs: number;
    plainUs: number;
    overheadUs: number;
    /** The same difference on the main thread only (V8's compiler and GC threads left out). */
    mainOverheadUs: number;
    /** With a full GC before each run (V8 then optimizes the run's code again inside it): process, and main thread only. */
    forcedGcOverheadUs: number;
    forcedGcMainOverheadUs: number;
  };
}

async function setUp(connectionString: string) {
  const suffix = randomUUID().slice(0, 6);
  const schema = `rxagent_bench_worker_${suffix}`;
  const bossSchema = `pgboss_bench_${suffix}`;
  const db = new pg.Pool({ connectionString, max: 4 });
  await db.query(matrixTables);
  const journal = new PostgresRunJournal({ connectionString, schema });
  const storage = new PostgresStorage({ connectionString, schema });
  const boss = new PgBoss({ connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  const close = async (): Promise<void> => {
    await boss.stop({ graceful: false });
    await Promise.all([journal.close(), storage.close()]);
    for (const name of [schema, bossSchema]) await db.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await db.end();
  };
  return { suffix, schema, bossSchema, db, journal, storage, boss, close };
}

/** Kill → claim of a run whose owner died at a step commit, with a rescuer already polling. */
/**
 * The agent a submit-only worker holds for `id`: submit checks a run's options against it (memory
 * options need an agent with memory), the worker processes run the real one.
 */
function submitOnly(id: string): Agent {
  return new Agent({ id, model: 'unused/model' as never, memory: new Memory({ storage: new InMemoryStorage() }) });
}

async function takeover(env: Awaited<ReturnType<typeof setUp>>, connectionString: string, samples: number): Promise<WorkerRows['takeover']> {
  const latencies: number[] = [];
  const firstChunks: number[] = [];
  const base = { connectionString, schema: env.schema, bossSchema: env.bossSchema, concurrency: 1, wordDelayMs: 5 };
  for (let index = 0; index < samples; index++) {
    const matrixCase: MatrixCase = { id: `takeover-${env.suffix}-${index}`, toolConcurrency: 1, plan: { at: 'step-committed', step: 0, signal: 'SIGKILL' } };
    // a slower victim: the rescuer is working the queue before the kill
    const victim = new WorkerProcess({ ...base, wordDelayMs: 50, workerId: `victim-${index}`, cases: [matrixCase] });
    const rescuer = new WorkerProcess({ ...base, workerId: `rescuer-${index}`, cases: [] });
    try {
      await Promise.all([victim.ready, rescuer.ready]);
      const submitter = createRunWorker({ journal: env.journal, boss: env.boss, concurrency: 0, agents: [submitOnly(matrixCase.id)] });
      const runId = `${matrixCase.id}.1`;
      await submitter.submit(matrixCase.id, 'How much do the stores have?', { runId, memory: { thread: `thread-${runId}`, resource: 'u' }, providerOptions: { matrix: { caseId: matrixCase.id, runId } } });
      await victim.waitForEvent('its claim', (event) => event.type === 'claimed' && event.runId === runId);
      // the first entry the next owner writes, as a reader on another instance gets it
      const rescuedEntry = firstValueFrom(env.journal.read$(runId, { after: 0 }).pipe(filter((entry) => entry.epoch >= 2))).then(() => Date.now());
      const { plan: _plan, ...rescued } = matrixCase;
      await rescuer.add([rescued]);
      const [stopped] = await victim.waitForStops(1);
      const claim = await rescuer.waitForEvent('the takeover', (event) => event.type === 'claimed' && event.runId === runId);
      latencies.push(claim.at - stopped!.at);
      firstChunks.push((await rescuedEntry) - stopped!.at);
      await rescuer.waitForEvent('the end of the run', (event) => event.type === 'completed' && event.runId === runId);
    } finally {
      await Promise.all([victim.kill(), rescuer.kill()]);
    }
  }
  return {
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    samples: latencies.length,
    firstChunkP50: percentile(firstChunks, 50),
    firstChunkP95: percentile(firstChunks, 95),
  };
}

async function throughput(env: Awaited<ReturnType<typeof setUp>>, connectionString: string, runs: number, workers: number): Promise<WorkerRows['throughput']> {
  const bulk: MatrixCase = { id: `bulk-${env.suffix}`, toolConcurrency: 1, simple: true };
  const processes = Array.from({ length: workers }, (_, index) => new WorkerProcess({ connectionString, schema: env.schema, bossSchema: env.bossSchema, workerId: `bulk-${index}`, cases: [bulk], concurrency: 8, wordDelayMs: 0, poolMax: 6 }));
  try {
    await Promise.all(processes.map((process) => process.ready));
    const submitter = createRunWorker({ journal: env.journal, boss: env.boss, concurrency: 0, agents: [submitOnly(bulk.id)] });
    const startedAt = Date.now();
    for (let from = 0; from < runs; from += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, runs - from) }, (_, offset) => {
          const runId = `${bulk.id}.${from + offset}`;
          return submitter.submit(bulk.id, 'Is it in stock?', { runId, memory: { thread: `thread-${runId}`, resource: 'u' }, providerOptions: { matrix: { caseId: bulk.id, runId } } });
        }),
      );
    }
    const completed = (): number => processes.reduce((sum, process) => sum + process.events.filter((event) => event.type === 'completed').length, 0);
    await processes[0]!.waitUntil(`${runs} completed runs`, () => (completed() >= runs ? true : undefined), 600_000);
    const seconds = (Date.now() - startedAt) / 1000;
    return { runs, workers, seconds, runsPerSecond: runs / seconds };
  } finally {
    await Promise.all(processes.map((process) => process.kill()));
  }
}

/** One run of `chunks` text deltas: CPU of this process per chunk, durable minus plain. */
async function ownerCpu(env: Awaited<ReturnType<typeof setUp>>, chunks: number, rounds: number): Promise<WorkerRows['cpu']> {
  const words = Array.from({ length: chunks }, (_, index) => `w${index}`).join(' ');
  const model = {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'bench',
    supportedUrls: {},
    async doStream() {
      const parts = [{ type: 'stream-start', warnings: [] }, ...textParts(words, { id: 'text-0' }), finishPart('stop', { inputTokens: 1, outputTokens: chunks })];
      return { stream: new ReadableStream({ start: (controller) => (parts.forEach((part) => controller.enqueue(part)), controller.close()) }) };
    },
    async doGenerate() {
      throw new Error('streams only');
    },
  } as never;
  const agentId = `cpu-${env.suffix}`;
  const agent = new Agent({ id: agentId, model, memory: new Memory({ storage: env.storage }) });
  const worker = createRunWorker({ journal: env.journal, boss: env.boss, agents: [agent], concurrency: 1, queue: { pollingIntervalSeconds: 0.5 } });
  await worker.start();
  /** This process's CPU per chunk, and its main thread's (without V8's compiler and GC threads; NaN where Node lacks `threadCpuUsage`). */
  const measure = async (work: () => Promise<unknown>, start: () => Promise<unknown> = async () => undefined): Promise<{ process: number; main: number }> => {
    await start();
    const threadCpuUsage = (process as { threadCpuUsage?: (previous?: NodeJS.CpuUsage) => NodeJS.CpuUsage }).threadCpuUsage;
    const before = process.cpuUsage();
    const mainBefore = threadCpuUsage?.call(process);
    await work();
    const used = process.cpuUsage(before);
    const mainUsed = mainBefore === undefined ? undefined : threadCpuUsage?.call(process, mainBefore);
    return { process: (used.user + used.system) / chunks, main: mainUsed === undefined ? Number.NaN : (mainUsed.user + mainUsed.system) / chunks };
  };
  const durable = async (): Promise<{ process: number; main: number }> => {
    const runId = `${agentId}.${randomUUID()}`;
    const done = firstValueFrom(worker.events$.pipe(filter((event) => event.type === 'completed' && event.runId === runId)));
    // measured from the claim: the job's wait in the queue is not the owner's work
    const claimed = firstValueFrom(worker.events$.pipe(filter((event) => event.type === 'claimed' && event.runId === runId)));
    return measure(
      () => done,
      async () => {
        await worker.submit(agentId, 'Stream please', { runId, memory: { thread: `thread-${runId}`, resource: 'u' } });
        await claimed;
      },
    );
  };
  const plain = (): Promise<{ process: number; main: number }> =>
    measure(() => lastValueFrom(agent.stream$('Stream please', { memory: { thread: `plain-${randomUUID()}`, resource: 'u' } })));
  /** Rounds of one durable and one plain run (the first left out): medians of each measure. */
  const rounds$ = async (count: number, forceGc: boolean) => {
    const durables: Array<{ process: number; main: number }> = [];
    const plains: Array<{ process: number; main: number }> = [];
    for (let round = 0; round < count; round++) {
      if (forceGc) gc();
      const d = await durable();
      if (forceGc) gc();
      const p = await plain();
      if (round > 0) {
        durables.push(d);
        plains.push(p);
      }
    }
    const median = (runs: Array<{ process: number; main: number }>, pick: 'process' | 'main') => percentile(runs.map((run) => run[pick]), 50);
    return { durableUs: median(durables, 'process'), plainUs: median(plains, 'process'), mainOverheadUs: median(durables, 'main') - median(plains, 'main') };
  };
  // the row: runs back to back, as a server runs them
  const row = await rounds$(rounds, false);
  // with a full GC before each run: V8 drops optimized code and compiles it again inside the measured run (bench/README.md)
  const forced = await rounds$(rounds, true);
  await worker.close();
  return {
    durableUs: row.durableUs,
    plainUs: row.plainUs,
    overheadUs: row.durableUs - row.plainUs,
    mainOverheadUs: row.mainOverheadUs,
    forcedGcOverheadUs: forced.durableUs - forced.plainUs,
    forcedGcMainOverheadUs: forced.mainOverheadUs,
  };
}

/** Measures the worker rows. */
export async function workerRows(options: WorkerRowsOptions): Promise<WorkerRows> {
  const env = await setUp(options.connectionString);
  try {
    if (options.takeoverOnly === true) {
      const takeoverRow = await takeover(env, options.connectionString, options.takeovers);
      return { takeover: takeoverRow };
    }
    const cpu = await ownerCpu(env, options.chunks, options.cpuOnly === true ? 10 : 4);
    if (options.cpuOnly === true) return { cpu };
    const takeoverRow = await takeover(env, options.connectionString, options.takeovers);
    const throughputRow = await throughput(env, options.connectionString, options.runs, options.workers);
    return { takeover: takeoverRow, throughput: throughputRow, cpu };
  } finally {
    await env.close();
  }
}
