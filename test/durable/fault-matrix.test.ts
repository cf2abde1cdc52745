/**
 * The fault matrix (issue 25, "Must hold"): the owner of a run — a child worker process — is
 * SIGKILLed at each point of the table below, with tool concurrency 1 and 4; another worker
 * process takes the run over and completes it. Each case is compared with a crash-free run of the
 * same agent: the chunks a client keeps (after the resets), the UI message `useChat` shows, the
 * processor's state (its `data-stats` chunk), and the thread in memory are equal; the tool's effect
 * happened once per tool call (the test's own table); the model was called at most once more, and
 * only when the kill was inside a model stream. Then two owners are SIGSTOPped (mid-stream, inside
 * memory's save), their runs taken over and completed, and SIGCONTed: they append and save nothing.
 *
 * Orchestration: three victim processes (the SIGKILL cases with tool concurrency 1, those with 4,
 * the SIGSTOP cases), each working only its cases' queues. Once a victim claimed its runs, the two
 * rescuer processes start working those queues (and run the crash-free references); the victim
 * holds each run at its kill point and, when all are held, stops itself — for each run the same as
 * dying at its point, and the heartbeat waits (≈ 10 s) overlap. Every wait is for an event or a
 * row, with a generous deadline: timing is never asserted.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunWorker, type RunWorker } from 'rxagent/durable';
import type { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import type { TestPostgres } from '../support/postgres.js';
import { effectiveChunks, journalEntries, memoryShape, normalise, uiMessageOf } from './fixtures/matrix-checks.js';
import { matrixAgent, type KillPlan, type MatrixCase } from './fixtures/matrix.js';
import { closeDurableDb, openDurableDb } from './fixtures/durable-db.js';
import { WorkerProcess, type WorkerProcessConfig } from './fixtures/worker-processes.js';

const suffix = randomUUID().slice(0, 6);
const kills: Array<[string, KillPlan, boolean, boolean]> = [
  // name, plan, whether the kill is inside a model stream (the one case allowed an extra model call),
  // whether a tool call was in flight (started, its outcome not in the ledger: the idempotent tool runs again)
  ['mid-stream', { at: 'chunks-flushed', step: 0, nth: 2, signal: 'SIGKILL' }, true, false],
  ['after-tool-call', { at: 'model-committed', signal: 'SIGKILL' }, false, false],
  ['during-tool', { at: 'tool', toolCall: 'call-1', signal: 'SIGKILL' }, false, true],
  ['after-tool-result', { at: 'tool-returned', nth: 2, signal: 'SIGKILL' }, false, true],
  ['memory-save', { at: 'memory-save', signal: 'SIGKILL' }, false, false],
  ['between-steps', { at: 'step-committed', step: 0, signal: 'SIGKILL' }, false, false],
  ['process-output-result', { at: 'processOutputResult', signal: 'SIGKILL' }, false, false],
  ['during-retry', { at: 'chunks-flushed', step: 2, nth: 1, signal: 'SIGKILL' }, true, false],
];
const killCases: Array<MatrixCase & { name: string; inModelStream: boolean; reruns: boolean }> = kills.flatMap(([name, plan, inModelStream, reruns]) =>
  [1, 4].map((toolConcurrency) => ({ id: `m${suffix}-${name}-c${toolConcurrency}`, name: `${name} × toolConcurrency ${toolConcurrency}`, toolConcurrency, plan, inModelStream, reruns })),
);
const stopCases: Array<MatrixCase & { name: string }> = [
  { id: `m${suffix}-stop-mid-stream`, name: 'SIGSTOP mid-stream', toolConcurrency: 1, plan: { at: 'chunks-flushed', step: 0, nth: 2, signal: 'SIGSTOP' } },
  { id: `m${suffix}-stop-memory-save`, name: 'SIGSTOP inside memory’s save', toolConcurrency: 1, plan: { at: 'memory-save', signal: 'SIGSTOP' } },
];
/** A SIGKILL inside a tool that is not idempotent: the call is not run again, the model is told ToolOutcomeUnknownError. */
const unsafeCase: MatrixCase & { name: string } = { id: `m${suffix}-during-unsafe-tool`, name: 'during a non-idempotent tool', toolConcurrency: 1, unsafe: true, plan: { at: 'tool', toolCall: 'call-1', signal: 'SIGKILL' } };
/**
 * Takeovers compose (issue 32 §1) under real kills: the first owner is SIGKILLed at its plan, the
 * second owner (another process, the only one working the queues then) takes the run over and is
 * SIGKILLed at `second`, and a rescuer completes it — at the same point twice, inside the replay a
 * takeover after a model commit writes, between a tool's result and memory's save, and in a retry.
 */
const composed: Array<[string, KillPlan, KillPlan, number]> = [
  // name, first kill, second kill (epoch 2), most extra model calls (kills inside a model stream)
  ['mid-stream twice', { at: 'chunks-flushed', step: 0, nth: 2, signal: 'SIGKILL' }, { at: 'chunks-flushed', step: 0, nth: 2, signal: 'SIGKILL', epoch: 2 }, 2],
  ['after the model commit, then inside the replay', { at: 'model-committed', signal: 'SIGKILL' }, { at: 'chunks-flushed', nth: 1, signal: 'SIGKILL', epoch: 2 }, 0],
  ['after a tool result, then in memory’s save', { at: 'tool-returned', nth: 2, signal: 'SIGKILL' }, { at: 'memory-save', signal: 'SIGKILL', epoch: 2 }, 0],
  ['between steps, then in the retry', { at: 'step-committed', step: 0, signal: 'SIGKILL' }, { at: 'chunks-flushed', step: 2, nth: 1, signal: 'SIGKILL', epoch: 2 }, 1],
];
const composedCases: Array<MatrixCase & { name: string; second: KillPlan; extraModelCalls: number }> = composed.map(([name, plan, second, extraModelCalls], index) => ({
  id: `m${suffix}-twice-${index}`,
  name,
  toolConcurrency: 1,
  plan,
  second,
  extraModelCalls,
}));
const allCases = [...killCases, unsafeCase, ...stopCases, ...composedCases];
/** The victim processes: the SIGKILL cases by tool concurrency, the SIGSTOP cases (≤ 8 connections each). */
const groups: MatrixCase[][] = [[...killCases.filter((matrixCase) => matrixCase.toolConcurrency === 1), unsafeCase], killCases.filter((matrixCase) => matrixCase.toolConcurrency === 4), stopCases];

let server: TestPostgres;
let db: pg.Pool;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
let submitter: RunWorker;
const schema = `rxagent_matrix_${suffix}`;
const bossSchema = `pgboss_matrix_${suffix}`;
const processes: WorkerProcess[] = [];
const runs = new Map<string, { crashed: string; reference: string; victim: WorkerProcess; killedAt?: number }>();

const baseConfig = (): Omit<WorkerProcessConfig, 'workerId' | 'cases' | 'concurrency'> => ({ connectionString: server.connectionString, schema, bossSchema, wordDelayMs: 25 });
const spawn = (workerId: string, cases: MatrixCase[], concurrency: number, pools: Pick<WorkerProcessConfig, 'poolMax'> = {}): WorkerProcess => {
  const process = new WorkerProcess({ ...baseConfig(), workerId, cases, concurrency, ...pools });
  processes.push(process);
  return process;
};
const submit = (matrixCase: MatrixCase, runId: string) =>
  submitter.submit(matrixCase.id, 'How much do the north, south and east stores have?', {
    runId,
    memory: { thread: `thread-${runId}`, resource: 'user-1' },
    requestContext: { caseId: matrixCase.id },
    providerOptions: { matrix: { caseId: matrixCase.id, runId } },
  });

async function waitForRuns(runIds: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM "${schema}".runs WHERE id = ANY($1) AND status NOT IN ('queued', 'running')`, [runIds]);
    if (rows.length === runIds.length) return;
    if (Date.now() > deadline) {
      const done = new Set(rows.map((row) => row.id));
      throw new Error(`runs not ended within ${timeoutMs} ms: ${runIds.filter((id) => !done.has(id)).join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

beforeAll(async () => {
  ({ server, db, journal, storage, boss } = await openDurableDb({ schema, bossSchema, poolMax: 4, bossMax: 2, maintenanceIntervalSeconds: 1 }));
  const noPlans = new Map<string, KillPlan>();
  const never = async (): Promise<never> => new Promise<never>(() => undefined);
  submitter = createRunWorker({ journal, boss, concurrency: 0, agents: allCases.map((matrixCase) => matrixAgent(matrixCase, { db, storage, wordDelayMs: 0, plans: noPlans, stop: never })) });
  await submitter.start();

  const rescuers = [spawn('rescuer-1', [], 1, { poolMax: 4 }), spawn('rescuer-2', [], 1, { poolMax: 4 })];
  await Promise.all(rescuers.map((rescuer) => rescuer.ready));
  let rescuing = Promise.resolve();
  const rescue = (cases: MatrixCase[]): Promise<void> => {
    const withoutPlans = cases.map(({ plan: _plan, ...withoutPlan }) => withoutPlan);
    rescuing = rescuing.then(async () => {
      for (const rescuer of rescuers) await rescuer.add(withoutPlans);
    });
    return rescuing;
  };

  // one victim per group: it claims the group's runs (then the rescuers join their queues and run
  // the crash-free references), holds each at its plan, and stops itself once all are held
  const victimOf = async (cases: MatrixCase[], name: string): Promise<void> => {
    const victim = spawn(`victim-${name}`, cases, 1, { poolMax: 6 });
    await victim.ready;
    for (const matrixCase of cases) runs.set(matrixCase.id, { crashed: `${matrixCase.id}.1`, reference: `${matrixCase.id}.0`, victim });
    await Promise.all(cases.map((matrixCase) => submit(matrixCase, `${matrixCase.id}.1`)));
    for (const matrixCase of cases) {
      const crashed = `${matrixCase.id}.1`;
      await victim.waitForEvent(`the claim of ${crashed}`, (event) => event.type === 'claimed' && event.runId === crashed);
    }
    await rescue(cases);
    await Promise.all(cases.map((matrixCase) => submit(matrixCase, `${matrixCase.id}.0`)));
    const stops = await victim.waitForStops(cases.length);
    for (const matrixCase of cases) {
      const stop = stops.find((each) => each.runId === `${matrixCase.id}.1`);
      expect(stop, `${matrixCase.id} held at its plan`).toBeDefined();
      runs.get(matrixCase.id)!.killedAt = stops.at(-1)!.at; // the process stops after the last report
    }
  };
  // two victims in a row: the second works the queues (alone) before the first dies, takes the runs
  // over at epoch 2, holds them at their second plans and dies too; then the rescuers join
  const composedVictims = async (): Promise<void> => {
    const first = spawn('victim-composed-1', composedCases.map(({ second: _second, ...matrixCase }) => matrixCase), 1, { poolMax: 6 });
    await first.ready;
    for (const matrixCase of composedCases) runs.set(matrixCase.id, { crashed: `${matrixCase.id}.1`, reference: `${matrixCase.id}.0`, victim: first });
    await Promise.all(composedCases.map((matrixCase) => submit(matrixCase, `${matrixCase.id}.1`)));
    for (const matrixCase of composedCases) await first.waitForEvent(`the claim of ${matrixCase.id}.1`, (event) => event.type === 'claimed' && event.runId === `${matrixCase.id}.1`);
    const second = spawn('victim-composed-2', composedCases.map(({ second: plan, ...matrixCase }) => ({ ...matrixCase, plan })), 1, { poolMax: 6 });
    await second.ready;
    await first.waitForStops(composedCases.length);
    for (const matrixCase of composedCases) {
      await second.waitForEvent(`the second claim of ${matrixCase.id}.1`, (event) => event.type === 'claimed' && event.runId === `${matrixCase.id}.1` && event.epoch === 2);
    }
    await rescue(composedCases);
    await Promise.all(composedCases.map((matrixCase) => submit(matrixCase, `${matrixCase.id}.0`)));
    const stops = await second.waitForStops(composedCases.length);
    for (const matrixCase of composedCases) {
      expect(stops.find((each) => each.runId === `${matrixCase.id}.1`), `${matrixCase.id} held at its second plan`).toBeDefined();
      Object.assign(runs.get(matrixCase.id)!, { victim: second, killedAt: stops.at(-1)!.at });
    }
  };
  await Promise.all([...groups.map((cases, index) => victimOf(cases, `group-${index}`)), composedVictims()]);
  await waitForRuns([...runs.values()].flatMap((run) => [run.crashed, run.reference]), 300_000);
  // the SIGSTOPped owner wakes up: its runs are someone else's now
  for (const matrixCase of stopCases) stopSnapshots.set(matrixCase.id, await ownerWrites(`${matrixCase.id}.1`));
  const sleeper = runs.get(stopCases[0]!.id)!.victim;
  sleeper.signal('SIGCONT');
  for (const matrixCase of stopCases) {
    const crashed = `${matrixCase.id}.1`;
    await sleeper.waitForEvent(`the fence of ${crashed} after SIGCONT`, (event) => event.type === 'fenced' && event.runId === crashed);
  }
}, 600_000);

const stopSnapshots = new Map<string, Awaited<ReturnType<typeof ownerWrites>>>();

/** What epoch 1 (the first owner) has in the journal and the thread, now. */
async function ownerWrites(runId: string): Promise<{ chunks: number; commits: number; ledger: number; messages: number }> {
  const count = async (sql: string, values: unknown[]): Promise<number> => Number((await db.query<{ n: string }>(sql, values)).rows[0]!.n);
  return {
    chunks: await count(`SELECT count(*) AS n FROM "${schema}".run_chunks WHERE run_id = $1 AND epoch = 1`, [runId]),
    commits: await count(`SELECT count(*) AS n FROM "${schema}".run_commits WHERE run_id = $1 AND epoch = 1`, [runId]),
    ledger: await count(`SELECT count(*) AS n FROM "${schema}".run_tool_calls WHERE run_id = $1 AND epoch = 1`, [runId]),
    messages: await count(`SELECT count(*) AS n FROM "${schema}".messages WHERE thread_id = $1`, [`thread-${runId}`]),
  };
}

afterAll(() => closeDurableDb({ processes, submitter, boss, journal, storage, db, server }), 60_000);

async function compare(matrixCase: MatrixCase, reruns: boolean | 'twice' = false): Promise<void> {
  const { crashed, reference } = runs.get(matrixCase.id)!;
  const [crashedRun, referenceRun] = await Promise.all([journal.getRun(crashed), journal.getRun(reference)]);
  expect(referenceRun).toMatchObject({ status: 'completed', epoch: 1, terminal: 'finish' });
  expect(crashedRun).toMatchObject({ status: 'completed', terminal: 'finish' });
  expect(crashedRun!.epoch).toBeGreaterThanOrEqual(2);
  // what the client keeps, chunk by chunk and as the UI message
  const [crashedEntries, referenceEntries] = await Promise.all([journalEntries(journal, crashed), journalEntries(journal, reference)]);
  expect(normalise(effectiveChunks(crashedEntries), crashed)).toEqual(normalise(effectiveChunks(referenceEntries), reference));
  const [crashedMessage, referenceMessage] = await Promise.all([uiMessageOf(journal, crashed), uiMessageOf(journal, reference)]);
  expect(normalise(crashedMessage?.parts, crashed)).toEqual(normalise(referenceMessage?.parts, reference));
  expect(referenceMessage?.parts.some((part) => part.type === 'data-stats')).toBe(true);
  // memory holds the exchange once, as the crash-free run's
  const [crashedThread, referenceThread] = await Promise.all([storage.getMessages({ threadId: `thread-${crashed}` }), storage.getMessages({ threadId: `thread-${reference}` })]);
  expect(memoryShape(crashedThread, crashed)).toEqual(memoryShape(referenceThread, reference));
  // one effect per tool call (the effect is keyed by idempotencyKey: a re-run under another key would show twice)
  const [crashedEffects, referenceEffects] = await Promise.all([perToolCall('matrix_effects', crashed), perToolCall('matrix_effects', reference)]);
  expect(referenceEffects).toHaveLength(6); // three calls in step 0, three in the retry (step 2)
  expect(referenceEffects.every(([, count]) => count === 1)).toBe(true);
  expect(crashedEffects).toEqual(referenceEffects);
  // executions: a call the ledger knew the outcome of never ran again; only a call in flight at the kill did
  const attempts = await perToolCall('matrix_tool_attempts', crashed);
  expect(attempts.map(([toolCallId]) => toolCallId)).toEqual(referenceEffects.map(([toolCallId]) => toolCallId));
  if (reruns === 'twice') {
    // two kills: a call in flight at either runs again (same key, so its effect above stays one)
    expect(attempts.every(([, count]) => count >= 1 && count <= 3), JSON.stringify(attempts)).toBe(true);
  } else if (reruns) {
    expect(attempts.every(([, count]) => count === 1 || count === 2), JSON.stringify(attempts)).toBe(true);
    expect(attempts.some(([, count]) => count === 2), JSON.stringify(attempts)).toBe(true);
  } else {
    expect(attempts.every(([, count]) => count === 1), JSON.stringify(attempts)).toBe(true);
  }
}

/** Rows of `table` for the run, counted per tool call. */
async function perToolCall(table: 'matrix_effects' | 'matrix_tool_attempts', runId: string): Promise<Array<[string, number]>> {
  const { rows } = await db.query<{ tool_call_id: string; n: string }>(`SELECT tool_call_id, count(*) AS n FROM ${table} WHERE run_id = $1 GROUP BY tool_call_id ORDER BY 1`, [runId]);
  return rows.map((row) => [row.tool_call_id, Number(row.n)]);
}

async function modelCalls(runId: string): Promise<number> {
  return Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM matrix_model_calls WHERE run_id = $1', [runId])).rows[0]!.n);
}

describe('fault matrix: SIGKILL of the owner, another worker completes the run', () => {
  it.each(killCases)('$name', async (matrixCase) => {
    await compare(matrixCase, matrixCase.reruns);
    const { crashed, reference } = runs.get(matrixCase.id)!;
    const extra = (await modelCalls(crashed)) - (await modelCalls(reference));
    expect(extra).toBe(matrixCase.inModelStream ? 1 : 0);
  });
});

describe('fault matrix: takeovers compose — the owner SIGKILLed, its successor SIGKILLed, a third owner completes the run', () => {
  it.each(composedCases)('$name', async (matrixCase) => {
    await compare(matrixCase, 'twice');
    const { crashed, reference } = runs.get(matrixCase.id)!;
    expect((await journal.getRun(crashed))!.epoch).toBeGreaterThanOrEqual(3);
    const extra = (await modelCalls(crashed)) - (await modelCalls(reference));
    expect(extra).toBeGreaterThanOrEqual(0);
    expect(extra).toBeLessThanOrEqual(matrixCase.extraModelCalls);
  });
});

describe('fault matrix: SIGSTOP of the owner, takeover, SIGCONT', () => {
  it.each(stopCases)('$name: the old owner appends and saves nothing', async (matrixCase) => {
    await compare(matrixCase);
    const { crashed } = runs.get(matrixCase.id)!;
    expect(await ownerWrites(crashed)).toEqual(stopSnapshots.get(matrixCase.id));
    const thread = await storage.getMessages({ threadId: `thread-${crashed}` });
    expect(new Set(thread.map((message) => message.id)).size).toBe(thread.length);
  });
});

describe('fault matrix: SIGKILL inside a tool that is not idempotent', () => {
  it('the call is never run again: the model gets a tool-error ToolOutcomeUnknownError for it, the run completes, memory holds it once', async () => {
    const { crashed, reference } = runs.get(unsafeCase.id)!;
    expect(await journal.getRun(crashed)).toMatchObject({ status: 'completed', terminal: 'finish' });
    // every call executed once, the one in flight at the kill included (by the dead owner)
    const attempts = await perToolCall('matrix_tool_attempts', crashed);
    expect(attempts).toEqual([['call-0', 1], ['call-0_2', 1], ['call-1', 1], ['call-1_2', 1], ['call-2', 1], ['call-2_2', 1]]);
    const chunks = effectiveChunks(await journalEntries(journal, crashed));
    const errors = chunks.filter((chunk) => chunk.type === 'tool-error');
    expect(errors.map((chunk) => chunk.payload)).toEqual([expect.objectContaining({ toolCallId: 'call-1', error: expect.objectContaining({ name: 'ToolOutcomeUnknownError', toolName: 'lookup', toolCallId: 'call-1' }) })]);
    expect(chunks.filter((chunk) => chunk.type === 'tool-result').map((chunk) => (chunk.payload as { toolCallId: string }).toolCallId).sort()).toEqual(['call-0', 'call-0_2', 'call-1_2', 'call-2', 'call-2_2']);
    const [thread, referenceThread] = await Promise.all([storage.getMessages({ threadId: `thread-${crashed}` }), storage.getMessages({ threadId: `thread-${reference}` })]);
    expect(thread.map((message) => message.role)).toEqual(referenceThread.map((message) => message.role));
    expect(new Set(thread.map((message) => message.id)).size).toBe(thread.length);
  });
});

describe('takeover latency', () => {
  it('every killed run was claimed again by a rescuer (kill → claim, reported, not asserted)', () => {
    const latencies = killCases.map((matrixCase) => {
      const run = runs.get(matrixCase.id)!;
      const claim = processes
        .filter((process) => process.name.startsWith('rescuer'))
        .flatMap((process) => process.events)
        .find((event) => event.type === 'claimed' && event.runId === run.crashed && event.epoch >= 2);
      expect(claim, matrixCase.id).toBeDefined();
      return claim!.at - run.killedAt!;
    });
    const sorted = [...latencies].sort((a, b) => a - b);
    console.log(`takeover kill → claim over ${sorted.length} kills: p50 ${sorted[Math.floor(sorted.length / 2)]} ms, p95 ${sorted[Math.ceil(0.95 * sorted.length) - 1]} ms, max ${sorted.at(-1)} ms`);
  });
});

describe('counts', () => {
  it('every case ended at its plan; the totals (printed for the CI log)', async () => {
    const crashed = [...runs.values()].map((run) => run.crashed);
    const references = [...runs.values()].map((run) => run.reference);
    const count = async (sql: string, values: unknown[]): Promise<number> => Number((await db.query<{ n: string }>(sql, values)).rows[0]!.n);
    const modelCallsOf = (ids: string[]) => count('SELECT count(*) AS n FROM matrix_model_calls WHERE run_id = ANY($1)', [ids]);
    const attemptsOf = (ids: string[]) => count('SELECT count(*) AS n FROM matrix_tool_attempts WHERE run_id = ANY($1)', [ids]);
    const effectsOf = (ids: string[]) => count('SELECT count(*) AS n FROM matrix_effects WHERE run_id = ANY($1)', [ids]);
    const takeovers = await count(`SELECT count(*) AS n FROM "${schema}".runs WHERE id = ANY($1) AND status = 'completed' AND epoch >= 2`, [crashed]);
    expect(takeovers).toBe(allCases.length);
    expect([...runs.values()].every((run) => run.killedAt !== undefined)).toBe(true);
    const extraModelCalls = (await modelCallsOf(crashed)) - (await modelCallsOf(references));
    const extraExecutions = (await attemptsOf(crashed)) - (await attemptsOf(references));
    expect(await effectsOf(crashed)).toBe(await effectsOf(references));
    console.log(
      `fault matrix: ${killCases.length + 1} SIGKILL (one inside a non-idempotent tool) + ${stopCases.length} SIGSTOP cases, ${takeovers} runs completed by another worker, ` +
        `${extraModelCalls} extra model calls (${killCases.filter((matrixCase) => matrixCase.inModelStream).length} kills inside a model stream), ` +
        `${extraExecutions} idempotent tool re-executions, ${await effectsOf(crashed)} effects = the crash-free runs'`,
    );
  });
});
