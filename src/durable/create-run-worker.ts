/**
 * `createRunWorker`: runs that survive their server. A run is submitted once (a journal row and
 * one pg-boss job), claimed by one worker at a time (the journal's epoch fences the others),
 * checkpointed at the loop's commit points, and taken over from its last commit by another worker
 * when its owner dies (pg-boss fails the job of a worker that stops sending heartbeats).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Subject, filter, isObservable, lastValueFrom, tap, type Observable } from 'rxjs';
import { RequestContext, type Processor } from '../contract/index.js';
import { asProcessors } from '../contract/index.js';
import { agentConfig, validateRunArguments, type Agent, type AgentConfig, type AgentInput } from '../loop/index.js';
import { FencedError, JournalSchemaError, MalformedJournalEntryError, RunNotFoundError, assertRunAccess, authorizedRun, type RunAccess, type RunClaim, type RunJournal, type RunRecord } from '../storage/index.js';
import { runCallOptionsOf, submittedCallOf, threadOf, type DurableCallOptions } from './durable-call-options.js';
import { assertDurableProcessor } from './internal/durable-processors.js';
import { RunAttemptsExhaustedError } from './errors/run-attempts-exhausted-error.js';
import type { FaultPointInfo, RunFaultPoint } from './fault-point.js';
import { checkMemoryFence } from './internal/fence-probe.js';
import { retentionJob, type RetentionJobOptions } from './internal/retention-job.js';
import { afterLastAttempt, attemptKeyOf, endRun, giveUpRun } from './internal/give-up.js';
import { claimProblem } from './internal/claim-check.js';
import { checkWorkerOptions, failureOf } from './internal/worker-options.js';
import { DEFAULT_QUEUE_PREFIX, deadLetterQueueOf, generationJobIdOf, queueNameOf } from './internal/queues.js';
import { infrastructureBackoffMs, isInfrastructureError, submitWrite } from './internal/infrastructure-error.js';
import { executeRun, isExecutionOutcome, type ExecutionContext } from './internal/run-execution.js';
import { sweepLostOwners } from './internal/lost-owners.js';
import type { OwnerSession } from '../storage/index.js';
import type { Subscription } from 'rxjs';
import type { RunWorkerEvent } from './run-worker-event.js';

/**
 * A pg-boss job as the worker gets it from `work()`: one per run, its id made from the run id and
 * its incarnation, its signal aborted by pg-boss when this worker's claim on it is gone.
 *
 * @example
 * ```ts
 * import type { RunJob } from 'rxagent/durable';
 * const runIdOf = (job: RunJob): string => job.data.runId;
 * ```
 */
export interface RunJob {
  /** The job's id (made from the run id and its incarnation). */
  readonly id: string;
  /** The job's payload. */
  readonly data: {
    /** The run the job is for. */
    readonly runId: string;
    /**
     * Which run under `runId` (`RunRecord.incarnation`): the job claims that run only, so the job of
     * a run erased and created again under its id never runs the new one. Absent on a run without
     * one and on jobs an earlier build sent: whichever run the journal holds under the id.
     */
    readonly incarnation?: string;
    /** 0 for the submitted job; each handover hands the run on in a job of the next generation. */
    readonly generation?: number;
    /** How many times a job of the run was queued again because none of its attempts ever claimed the run (a fetch whose reply was lost). */
    readonly requeued?: number;
    /** The generation the run's budget of attempts began with (0, or its last handover's). */
    readonly since?: number;
    /** Attempts of the generations since `since` before this one, all failed (those the infrastructure failed are refunded at the give-up). */
    readonly failedBefore?: number;
  };
  /** (`includeMetadata`) Which attempt of the job this is: 0 first, then one more per retry. */
  readonly retryCount?: number;
  /** Aborted by pg-boss when this worker's claim on the job is gone. */
  readonly signal: AbortSignal;
  /** In the dead-letter queue (`includeMetadata`): how many times the failed job was retried. */
  readonly sourceRetryCount?: number | null;
  /** In the dead-letter queue (`includeMetadata`): the failed job's output (why its last attempt failed). */
  readonly sourceOutput?: object | null;
}

/**
 * A job's policies as the worker gives them to pg-boss (`createQueue` and `send`): attempts,
 * heartbeat, expiry, and where pg-boss copies the job when it fails for the last time.
 *
 * @example
 * ```ts
 * const policies: JobPolicies = { retryLimit: 10, heartbeatSeconds: 10, deadLetter: 'rxagent/support/dead-letter' };
 * ```
 */
export interface JobPolicies {
  /** A worker that sends no heartbeat for this long loses the job (pg-boss fails it). */
  heartbeatSeconds?: number;
  /** How many times a failed job is retried before it fails for good. */
  retryLimit?: number;
  /** Seconds before a retry. */
  retryDelay?: number;
  /** Retry delays grow exponentially. */
  retryBackoff?: boolean;
  /** The longest one attempt may last. */
  expireInSeconds?: number;
  /** The queue pg-boss copies the job to when it fails for the last time. */
  deadLetter?: string;
  /** The queue's policy (`createQueue` only): the retention queue is `exclusive`, one job queued or active. */
  policy?: 'standard' | 'exclusive';
}

/**
 * What the worker uses of pg-boss 12 (a started `PgBoss` is one): queues, jobs under their own
 * ids, and `work()` with heartbeats and the job's abort signal.
 *
 * @example
 * ```ts
 * import { PgBoss } from 'pg-boss';
 * import type { RunQueue } from 'rxagent/durable';
 * const boss = new PgBoss({ connectionString, schema: 'pgboss' });
 * boss.on('error', (error) => console.error('pg-boss:', error.message)); // unhandled, the first blip ends the process
 * await boss.start();
 * const queue: RunQueue = boss;
 * ```
 */
export interface RunQueue {
  /** Creates the queue `name` with these policies (a queue that exists is left as it is). */
  createQueue(name: string, options?: JobPolicies): Promise<void>;
  /** Queues a job with `data` under the given `id` and policies: its id, or `null` when none was created (a job with that id exists). */
  send(name: string, data: object, options: JobPolicies & { id: string }): Promise<string | null>;
  /** Starts polling queue `name`, handing fetched jobs to `handler`; resolves to the work id. */
  work(
    name: string,
    options: { localConcurrency?: number; batchSize?: number; pollingIntervalSeconds?: number; includeMetadata?: boolean },
    handler: (jobs: RunJob[]) => Promise<unknown>,
  ): Promise<string>;
  /** The job `id` of queue `name` (its `state`: `created`, `retry`, `active`, `completed`, `cancelled`, `failed`), or `null`. */
  getJobById(
    name: string,
    id: string,
  ): Promise<{
    /** pg-boss's state of the job: `created`, `retry`, `active`, `completed`, `cancelled` or `failed`. */
    readonly state: string;
  } | null>;
  /** Stops working queue `name` (or only the work `id`); `wait`: until its running jobs have ended. */
  offWork(name: string, options?: { id?: string; wait?: boolean }): Promise<void>;
  /** Sends a job to queue `name` on a cron schedule (one schedule per name, one job per tick across instances). */
  schedule(name: string, cron: string): Promise<void>;
  /**
   * Optional (pg-boss 12 has it; the fast takeover after a dead owner needs it): the jobs of queue
   * `name` whose data contains `options.data`.
   */
  findJobs?(
    name: string,
    options: { data: object; limit?: number },
  ): Promise<
    ReadonlyArray<{
      /** The job's id. */
      readonly id: string;
      /** pg-boss's state of the job. */
      readonly state: string;
      /** The attempt (fetches after the first). */
      readonly retryCount: number;
      /** When the attempt was fetched (the database's clock). */
      readonly startedOn?: Date | null;
    }>
  >;
  /** Optional (pg-boss 12 has it; the fast takeover needs it): fails one attempt of a job, fenced to it (`{ id, retryCount }`). */
  fail?(
    name: string,
    attempt: { id: string; retryCount: number },
    data: object,
  ): Promise<{
    /** How many jobs were failed (0: the attempt was no longer active). */
    readonly affected?: number;
  }>;
  /** Optional (pg-boss 12 has it): wakes the work `id` to fetch at once instead of at its next poll. */
  notifyWorker?(id: string): void;
}

/**
 * Options of {@link createRunWorker}.
 *
 * @example
 * ```ts
 * import type { RunWorkerOptions } from 'rxagent/durable';
 * const options: RunWorkerOptions = { journal, boss, agents: [support], concurrency: 8 };
 * ```
 */
export interface RunWorkerOptions {
  /** Where runs are journaled (a `PostgresRunJournal`; `InMemoryRunJournal` for one-process tests). */
  journal: RunJournal;
  /** A started pg-boss 12 (`new PgBoss({ connectionString, schema })`, an `error` listener, then `await boss.start()`). */
  boss: RunQueue;
  /** The agents this worker runs, by id (every worker of a deployment has the same ones). */
  agents: readonly Agent[];
  /** Runs at once per agent on this worker (default 8); 0: this instance submits and cancels only. */
  concurrency?: number;
  /** This worker's name in the journal (`runs.owner`). Default: `<host>:<pid>:<random>`. */
  workerId?: string;
  /** The pg-boss queues: one per agent, `<prefix><agentId>`. */
  queue?: {
    /** Default `rxagent.runs.`. */
    prefix?: string;
    /** A worker silent this long loses its runs (pg-boss fails the job; another worker takes it over). Default 10 (pg-boss's minimum). */
    heartbeatSeconds?: number;
    /**
     * Retries a run's job may go through — takeovers of a dead or silent worker's run, failed
     * attempts, expired claims — before the run is given up: it then ends `failed` with
     * `RunAttemptsExhaustedError` (default 10, so 11 attempts). Handovers spend none, and neither
     * do attempts the infrastructure failed (the worker claims the run again itself, backing off).
     */
    retryLimit?: number;
    /** The longest one claim of a run may last before pg-boss hands it on (default 3600). */
    expireInSeconds?: number;
    /** How often an idle worker asks for a job (default 2, pg-boss's minimum 0.5). */
    pollingIntervalSeconds?: number;
  };
  /**
   * The journal's retention, run through pg-boss (docs/durable.md, "Retention and erasure"): every worker
   * schedules `retention.cron` (default every 15 minutes) on `retention.queue` (default
   * `rxagent.retention`), and workers with `concurrency > 0` purge expired runs when it fires, one
   * job at a time across instances. How long runs are kept is the journal's option
   * (`chunkRetentionSeconds`, `runRetentionSeconds`). `false`: nothing is scheduled (purge yourself
   * with `journal.purgeExpired()`).
   */
  retention?: RetentionJobOptions | false;
  /**
   * Takeover when an owner's process dies (default on, with a `PostgresRunJournal` and pg-boss):
   * this worker holds an owner session (a session-level lock on a connection of its own), and
   * every `intervalMs` (default 400, jittered ±25 %; at least 50) looks in one statement for
   * `running` runs whose owner's session is gone, and fails the dead owner's attempt of their job
   * so a worker takes them over at once instead of after `heartbeatSeconds`. A run is released
   * only once its owner has been seen without its session for `graceMs` (default 750, at least
   * 0): an owner whose connection blipped takes its lock again well within it and spends no
   * attempt; one whose session stayed away longer (its run taken over) notes that attempt as the
   * infrastructure's, so the give-up refunds it. `false`: this worker does not sweep (it still
   * holds its owner session, so its own runs never look lost to others).
   */
  lostOwnerSweep?:
    | false
    | {
        /** Mean pause between sweeps, in ms (default 400, jittered ±25 %; at least 50). */
        intervalMs?: number;
        /**
         * How long an owner must be seen without its session before its run is released, in ms
         * (default 750). This worker's own session reconnects at most a quarter of it apart (at
         * least 50 ms, at most 2 s), so after an outage it is back within the other workers' grace;
         * below about 300 ms that cannot be promised (the connection and the lock take part of it).
         */
        graceMs?: number;
      };
  /** Awaited at each {@link RunFaultPoint} (tests, chaos drills); a throw stops the run here as a crash would. */
  faultPoint?: (point: RunFaultPoint, info: FaultPointInfo) => void | Promise<void>;
}

/**
 * A worker of durable runs (see {@link createRunWorker}).
 *
 * @example
 * ```ts
 * const { runId } = await worker.submit('support', 'Where is my order?', { memory: { thread: chatId, resource: userId } });
 * worker.events$.subscribe((event) => console.log(event.type, event.runId));
 * await worker.cancel(runId, { request, authorize: runTokenAuthorization({ secret }) });
 * ```
 */
export interface RunWorker {
  /** Checks each agent's memory can fence saves (`NotDurableError` otherwise), creates the queues and starts working them. */
  start(): Promise<void>;
  /**
   * Stores a run and queues its job; any worker runs it. The same `runId` again is the same run
   * (`created: false`, one job); the same id with another input is a `RunConflictError`. Refused
   * before anything is stored or queued: `NotDurableError` for what a durable run cannot carry (not
   * JSON, options that cannot be read), `TypeError` for an unknown agent, an unknown option (own
   * keys only: `constructor` or `__proto__` are unknown options), an id a journal cannot hold or a
   * `messageId` that is no such id or holds control characters, and the run's own error for what
   * the run would refuse (`maxSteps: 0`, an unknown `toolChoice`, `memory` for an agent without
   * memory, an empty input). The options are read once: the run's row and its stored call are made
   * of that one reading; the input is stored as given (`__proto__` keys too). A write that fails
   * for the infrastructure's reason is tried again for up to 10 s (one id: one run, one job).
   */
  submit(
    agent: string | Agent,
    input: AgentInput,
    options?: DurableCallOptions,
  ): Promise<{
    /** The run's id (read it with `resumeUIMessageStreamResponse`, stop it with `cancel`). */
    runId: string;
    /** `false` when the same run was already submitted. */
    created: boolean;
  }>;
  /**
   * Asks the run's owner, wherever it is, to stop it (the run ends with `abort`, status
   * `cancelled`), when `options` authorizes the caller (`authorize(run, request)`, or
   * `unsafeNoAuthorization: true`; neither: `MissingAuthorizationError`). `RunNotFoundError` for an
   * unknown run and for a refused caller alike (nothing is recorded): answer both with 404. Its
   * read of the run and its write of the stop are tried again through an infrastructure failure
   * for up to 10 s, as a submit's writes are.
   */
  cancel(runId: string, options: CancelRunOptions): Promise<void>;
  /**
   * Stops taking runs; resolves when this worker's runs have ended — or, with `handover: true`,
   * when each was released at its next step commit for another worker to continue.
   */
  close(options?: { handover?: boolean }): Promise<void>;
  /** The runs this worker executes: claimed, committed, completed, fenced, released, failed. */
  readonly events$: Observable<RunWorkerEvent>;
}

/** Attempts of one job the infrastructure may fail in a row, each claimed again by the same worker, before the job fails (an attempt spent). */
const INFRASTRUCTURE_RETRIES = 20;

/** How long a worker that lost an attempt to the infrastructure keeps trying to note it (the give-up waits ≈ 15 s for the note). */
const NOTE_WITHIN_MS = 10_000;

/** Times a run that no attempt ever claimed is queued again in a new job instead of being given up. */
const MAX_REQUEUES = 3;

/**
 * The longest pause between two reconnects of a worker's owner session: a quarter of its sweeps'
 * grace, at least 50 ms (no tighter loop against a database that is away) and at most 2 s. After
 * an outage, other workers' sweeps count the grace from when the database answers them again: the
 * session is back well within it (a reconnect's own connection and lock take part of it, so a
 * grace below about 300 ms cannot be promised).
 */
function sessionReconnectWithinMs(graceMs: number): number {
  return Math.min(2000, Math.max(50, Math.floor(graceMs / 4)));
}

/** Generations a hand-on looks past for one whose job the run can have, before it gives up looking (a queue that keeps answering "exists" for ended jobs). */
const MAX_GENERATION_SKIPS = 1000;

/** Which run a job is for: its id, and its incarnation when the run has one (see `RunJob.data`). */
type JobRun = Pick<RunJob['data'], 'runId' | 'incarnation'>;

/** The run of a job's payload, or `undefined` for a payload that is not a run job's. */
function jobRunOf(job: RunJob): JobRun | undefined {
  const { runId, incarnation } = job.data ?? {};
  if (typeof runId !== 'string') return undefined;
  return typeof incarnation === 'string' ? { runId, incarnation } : { runId };
}

/** The run a stored record names for its jobs. */
function jobRunOfRecord(run: Pick<RunRecord, 'runId' | 'incarnation'>): JobRun {
  return run.incarnation === undefined ? { runId: run.runId } : { runId: run.runId, incarnation: run.incarnation };
}

/** Whether `run` is the job's run: any run under the id for a job without an incarnation (an earlier build's). */
function sameRun(run: Pick<RunRecord, 'incarnation'>, of: Pick<JobRun, 'incarnation'>): boolean {
  return of.incarnation === undefined || run.incarnation === of.incarnation;
}

/** pg-boss states of a job that will still run (or runs). */
const LIVE_JOB_STATES: ReadonlySet<string> = new Set(['created', 'retry', 'active']);

/** Waits `ms`; false when `signal` aborted first (the job is no longer this worker's). */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Options of `RunWorker.cancel`: who asks (see `RunAccess`) and why.
 *
 * @example
 * ```ts
 * import type { CancelRunOptions } from 'rxagent/durable';
 * const options: CancelRunOptions = { request, authorize, reason: 'user pressed stop' };
 * ```
 */
export type CancelRunOptions = RunAccess & {
  /** Why (the run's `abort` chunk carries it). */
  reason?: string;
};

/** The processors of `config` as a run with `requestContext` resolves them. */
async function processorsOf(config: AgentConfig, requestContext: RequestContext): Promise<Processor[]> {
  const lists = [config.inputProcessors, config.outputProcessors, config.errorProcessors];
  const resolved = await Promise.all(lists.map((list) => (typeof list === 'function' ? list({ requestContext }) : list)));
  return resolved.flatMap((list) => asProcessors(list ?? []));
}

/**
 * A worker of durable runs on a {@link RunJournal} and pg-boss. Every instance of a deployment
 * creates one with the same agents; any instance submits, reads (`resumeUIMessageStreamResponse`)
 * and cancels any run; workers with `concurrency > 0` run them.
 *
 * @example
 * ```ts
 * import { PgBoss } from 'pg-boss';
 * import { createRunWorker } from 'rxagent/durable';
 * import { PostgresRunJournal } from 'rxagent/storage/postgres';
 * const boss = new PgBoss({ connectionString, schema: 'pgboss' });
 * boss.on('error', (error) => console.error('pg-boss:', error.message)); // unhandled, the first blip ends the process
 * await boss.start();
 * const worker = createRunWorker({ journal: new PostgresRunJournal({ connectionString }), boss, agents: [support] });
 * await worker.start();
 * const { runId } = await worker.submit('support', 'Hi', { memory: { thread: chatId, resource: userId } });
 * ```
 */
export function createRunWorker(options: RunWorkerOptions): RunWorker {
  const { journal, boss, faultPoint } = options;
  checkWorkerOptions(options);
  const concurrency = options.concurrency ?? 8;
  const workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const prefix = options.queue?.prefix ?? DEFAULT_QUEUE_PREFIX;
  const agents = new Map<string, { agent: Agent; config: AgentConfig; queue: string; deadLetter: string }>();
  for (const agent of options.agents ?? []) {
    if (agents.has(agent.id)) throw new TypeError(`createRunWorker: two agents with the id "${agent.id}" (a durable run names its agent by id).`);
    const queue = queueNameOf(prefix, agent.id);
    agents.set(agent.id, { agent, config: agentConfig(agent), queue, deadLetter: deadLetterQueueOf(queue) });
  }
  for (const { agent, queue } of agents.values()) {
    const other = [...agents.values()].find((entry) => entry.deadLetter === queue);
    if (other !== undefined) throw new TypeError(`createRunWorker: agent "${agent.id}" has the queue "${queue}", the dead-letter queue of agent "${other.agent.id}"; rename one.`);
  }
  const policies = {
    heartbeatSeconds: options.queue?.heartbeatSeconds ?? 10,
    retryLimit: options.queue?.retryLimit ?? 10,
    retryDelay: 0,
    expireInSeconds: options.queue?.expireInSeconds ?? 3600,
  };
  const pollingIntervalSeconds = options.queue?.pollingIntervalSeconds ?? 2;
  const retention = options.retention === false ? undefined : retentionJob(journal, options.retention);
  const lostOwnerIntervalMs = (options.lostOwnerSweep === false ? undefined : options.lostOwnerSweep?.intervalMs) ?? 400;
  const lostOwnerGraceMs = (options.lostOwnerSweep === false ? undefined : options.lostOwnerSweep?.graceMs) ?? 750;
  const events = new Subject<RunWorkerEvent>();
  const queues = new Map<string, Promise<void>>();
  const works: Array<{ queue: string; id: string }> = [];
  const executions = new Set<Promise<unknown>>();
  /**
   * Per run (its id and incarnation: a run created again under an erased run's id is another), its
   * newest attempt (job) on this worker.
   */
  const latestAttempts = new Map<string, object>();
  let started = false;
  let closing: Promise<void> | undefined;
  let session: OwnerSession | undefined;
  /**
   * When this worker's owner session was without its lock, as the session told it (`lock$`; this
   * process's clock, `regainedAt` undefined while still without): another worker's sweep can have
   * failed an attempt of this worker only in such an interval or within the grace after it.
   */
  const sessionLosses: Array<{ lostAt: number; regainedAt?: number }> = [];
  /** The attempts running here, each with when it began (losses ended before the oldest no longer matter). */
  const liveAttempts = new Map<object, number>();
  /** This worker's subscription to its owner session's `lock$`. */
  let sessionLock: Subscription | undefined;
  let sweeps: Subscription | undefined;
  let handingOver = false;

  const agentOf = (agent: string | Agent): { agent: Agent; config: AgentConfig; queue: string; deadLetter: string } => {
    const id = typeof agent === 'string' ? agent : agent?.id;
    const found = typeof id === 'string' ? agents.get(id) : undefined;
    if (found === undefined) {
      throw new TypeError(`RunWorker: unknown agent ${JSON.stringify(id ?? agent)}; this worker runs ${[...agents.keys()].map((known) => JSON.stringify(known)).join(', ') || 'no agents'}.`);
    }
    return found;
  };

  /** An agent's queue and, first, its dead-letter queue (giving up retries with backoff: a database that is down must not strand the run). */
  const ensureQueue = (queue: string, deadLetter: string): Promise<void> => {
    let made = queues.get(queue);
    if (made === undefined) {
      made = (async () => {
        await boss.createQueue(deadLetter, { heartbeatSeconds: policies.heartbeatSeconds, retryLimit: 10, retryDelay: 1, retryBackoff: true, expireInSeconds: 300 });
        await boss.createQueue(queue, { ...policies, deadLetter });
      })();
      made.catch(() => queues.delete(queue));
      queues.set(queue, made);
    }
    return made;
  };

  /**
   * Queues a job of `run` (its id and incarnation: the job's id is made of both, and the job
   * carries them; its policies on the job itself: they hold on a queue created before them too).
   * A requeue carries the run's budget on: where it began (`since`), the attempts failed before
   * (`failedBefore`), and the attempts left (`retryLimit`).
   */
  const sendJob = (
    queue: string,
    deadLetter: string,
    { runId, incarnation }: JobRun,
    generation: number,
    { requeued = 0, since = generation, failedBefore = 0, retryLimit = policies.retryLimit } = {},
  ): Promise<string | null> =>
    boss.send(
      queue,
      {
        runId,
        ...(incarnation === undefined ? {} : { incarnation }),
        ...(generation === 0 ? {} : { generation }),
        ...(requeued === 0 ? {} : { requeued }),
        ...(since === generation ? {} : { since }),
        ...(failedBefore === 0 ? {} : { failedBefore }),
      },
      { ...policies, retryLimit, deadLetter, id: generationJobIdOf(runId, generation, incarnation) },
    );

  /**
   * Whether another worker's lost-owner sweep can have fenced an attempt of this worker at some
   * moment between `from` and `to`: while its owner session was without its lock, or within the
   * sweeps' grace after the lock was back (a sweep that saw it lost just before). The deployment's
   * workers share their options, so this worker's grace is theirs.
   */
  const sessionLostBetween = (from: number, to: number): boolean =>
    sessionLosses.some(({ lostAt, regainedAt }) => lostAt <= to && (regainedAt === undefined || regainedAt + lostOwnerGraceMs >= from));

  /** The owner session's lock lost (`held` false) or regained at `at` (its `lock$`). */
  const sessionLockChanged = ({ held, at }: { held: boolean; at: number }): void => {
    const last = sessionLosses.at(-1);
    const open = last !== undefined && last.regainedAt === undefined;
    if (held) {
      if (open) last.regainedAt = at;
      return;
    }
    if (open) return; // still without it
    // losses whose window ended before the oldest running attempt began can fence none of them
    const oldest = Math.min(at, ...liveAttempts.values());
    for (let index = sessionLosses.length - 1; index >= 0; index--) {
      const regainedAt = sessionLosses[index]!.regainedAt;
      if (regainedAt !== undefined && regainedAt + lostOwnerGraceMs < oldest) sessionLosses.splice(index, 1);
    }
    sessionLosses.push({ lostAt: at });
  };

  /**
   * Hands run `runId` on to a job of a generation after `generation` (`budget`: as `sendJob`): the
   * next one's; when that job exists already it has the run while it is live (queued, retrying,
   * active), and when it has ended — a crash during a handover sent it, a retry of the old job then
   * fenced it, and it completed with the run still `running` — the next generation after it is
   * tried, and so on. The run is never left to a job that ended (it stayed `running` with none).
   */
  const handOn = async (queue: string, deadLetter: string, run: JobRun, generation: number, budget: Parameters<typeof sendJob>[4] = {}): Promise<void> => {
    for (let next = generation + 1; next <= generation + MAX_GENERATION_SKIPS; next++) {
      if ((await sendJob(queue, deadLetter, run, next, budget)) !== null) return;
      const existing = await boss.getJobById(queue, generationJobIdOf(run.runId, next, run.incarnation));
      if (existing !== null && LIVE_JOB_STATES.has(existing.state)) return; // the run is that job's
    }
    throw new Error(`RunWorker: run ${run.runId} could not be handed on: the queue ${JSON.stringify(queue)} has ended jobs for its next ${MAX_GENERATION_SKIPS} generations after ${generation}.`);
  };

  /**
   * A job of the dead-letter queue: the run's job failed for the last time. Unless a later job of
   * the run is live (a handover's, whose old job failed after it), the run ends `failed` under a new
   * claim; a run that already ended is left alone.
   */
  const giveUp = async (job: RunJob, queue: string): Promise<void> => {
    const of = jobRunOf(job);
    if (of === undefined) return;
    const { runId, incarnation } = of;
    const generation = job.data.generation ?? 0;
    const next = await boss.getJobById(queue, generationJobIdOf(runId, generation + 1, incarnation));
    if (next !== null && LIVE_JOB_STATES.has(next.state)) return;
    // never claimed: no attempt ran the run (each fetch's reply was lost to a blip, so pg-boss took
    // the worker for dead). The run cannot have killed its worker: it goes on in a new job, a few times.
    const requeued = job.data.requeued ?? 0;
    let run;
    try {
      run = await journal.getRun(runId);
    } catch (error) {
      // a row this build cannot read: left as it was (no retry of this job reads it better)
      if (!MalformedJournalEntryError.isInstance(error) && !JournalSchemaError.isInstance(error)) throw error;
      events.next({ type: 'failed', runId, epoch: 0, error });
      return;
    }
    // ended, or erased (another run under the id is not this job's): nothing to give up
    if (run === null || !sameRun(run, of) || (run.status !== 'queued' && run.status !== 'running')) return;
    const failedAttempts = (job.sourceRetryCount ?? 0) + 1;
    const since = job.data.since ?? generation;
    const failedBefore = job.data.failedBefore ?? 0;
    if (requeued < MAX_REQUEUES && run.status === 'queued') {
      // attempts that never claimed the run spend nothing: the budget goes on as it was
      const budget = { since, failedBefore, retryLimit: Math.max(0, policies.retryLimit - failedBefore) };
      if ((await sendJob(queue, deadLetterQueueOf(queue), of, generation + 1, { requeued: requeued + 1, ...budget })) !== null) return;
    }
    // attempts the infrastructure failed are refunded: the run goes on with the attempts it has left
    let spent = failedBefore + failedAttempts;
    if (journal.infrastructureLosses !== undefined) {
      const losses = await journal.infrastructureLosses(runId, incarnation === undefined ? {} : { incarnation });
      const decision = afterLastAttempt({ generation, since, failedBefore, failedAttempts, losses, retryLimit: policies.retryLimit, waited: job.retryCount ?? 0 });
      if (decision.kind === 'wait') throw new Error(`RunWorker: waiting for the last owner of run ${runId} to note whether the infrastructure failed its attempt`);
      if (decision.kind === 'requeue') {
        // the next generation's job may exist already: a handover's, or this decision made before by
        // a worker that crashed before completing this job (the run is that job's while it is live)
        await handOn(queue, deadLetterQueueOf(queue), of, generation, { since, failedBefore: decision.failedBefore, retryLimit: decision.retryLimit });
        return;
      }
      spent = decision.spent;
    }
    const error = new RunAttemptsExhaustedError({ runId, attempts: spent, ...failureOf(job.sourceOutput) });
    const outcome = await giveUpRun(journal, of, workerId, error);
    if (outcome.kind === 'failed') events.next({ type: 'completed', runId, epoch: outcome.epoch, status: 'failed' });
    // a newer format or a malformed row: left as it was, for a worker that can read it (or an operator)
    if (outcome.kind === 'unreadable') events.next({ type: 'failed', runId, epoch: 0, error: outcome.error });
  };

  /**
   * Ends a claimed run `failed` with `error` (a row it cannot go on from) under the claim's lease:
   * one `final` commit, the job done. No attempt is spent on it: another would meet the same row.
   * A blip of its reads or its write is the attempt's (`infrastructure`: `work` claims again and
   * fails the run closed then), never the job's.
   */
  const failClosed = async (
    claim: Pick<RunClaim, 'lease' | 'input' | 'commits'>,
    error: MalformedJournalEntryError,
  ): Promise<{ kind: 'done' } | { kind: 'infrastructure'; error: unknown; epoch: number }> => {
    const { runId, epoch } = claim.lease;
    let ended;
    try {
      ended = await endRun(journal, claim, error);
    } catch (caught) {
      if (isInfrastructureError(caught)) return { kind: 'infrastructure', error: caught, epoch };
      throw caught;
    }
    if (ended.kind === 'failed') events.next({ type: 'completed', runId, epoch: ended.epoch, status: 'failed' });
    return { kind: 'done' };
  };

  /** Runs `handler` for each fetched job, tracked so `close()` waits for it. */
  const tracked =
    (handler: (job: RunJob) => Promise<void>) =>
    async ([job]: RunJob[]): Promise<void> => {
      if (job === undefined) return;
      const execution = handler(job);
      executions.add(execution);
      try {
        await execution;
      } finally {
        executions.delete(execution);
      }
    };

  /**
   * One job: claim the run, execute it, tell pg-boss (a throw fails the job: it comes back for a
   * retry, an attempt spent). An attempt the infrastructure failed (the database, the way to it)
   * spends none: this worker claims the run again after a jittered backoff, as long as the job is
   * still its own and the run still at the epoch it left — up to `INFRASTRUCTURE_RETRIES` in a
   * row, then the job fails as before.
   */
  const work = async (job: RunJob): Promise<void> => {
    const runId = job.data?.runId;
    if (typeof runId !== 'string') return; // not a job of ours: nothing to run, nothing to retry
    const { incarnation } = jobRunOf(job) ?? {};
    const losses = infrastructureLosses(runId, incarnation, attemptKeyOf(job.data.generation ?? 0, job.retryCount ?? 0));
    // the run's newest attempt on this worker: pg-boss hands out another only once it took this one's
    // job. Of this incarnation: the old run's job (live or queued) is not a newer attempt of the new run
    const self = {};
    const latest = `${incarnation ?? ''}/${runId}`;
    latestAttempts.set(latest, self);
    try {
      let lastEpoch: number | undefined;
      for (let failures = 0; ; failures++) {
        // after a failure of the infrastructure, noted at the first turn the database answers again
        if (failures > 0) await losses.note();
        const outcome = await attempt(job, runId, lastEpoch);
        // fenced while its owner session was cut: the run is another attempt's now, and this one the infrastructure's
        if (outcome.kind === 'session-lost') return await losses.noteWithin(NOTE_WITHIN_MS);
        if (outcome.kind !== 'infrastructure') return;
        const retry = failures < INFRASTRUCTURE_RETRIES && closing === undefined && (await pause(infrastructureBackoffMs(failures), job.signal));
        if (retry && latestAttempts.get(latest) !== self) {
          // the job was handed on to a newer attempt here (claiming again would fence it and leave the
          // run to a job pg-boss no longer has): this one stops, the infrastructure's
          await losses.noteWithin(NOTE_WITHIN_MS);
          return;
        }
        if (!retry) {
          // the attempt is lost (pg-boss took the job, or the outage outlasted our retries): noted, so the give-up refunds it
          await losses.noteWithin(NOTE_WITHIN_MS);
          throw outcome.error;
        }
        lastEpoch = outcome.epoch ?? lastEpoch;
      }
    } finally {
      if (latestAttempts.get(latest) === self) latestAttempts.delete(latest);
    }
  };

  /**
   * Notes (once) that the infrastructure failed attempt `key` of run `runId` (of `incarnation`: a run
   * created again under the id since is left alone): `note()` tries once, `noteWithin(ms)` retries
   * with backoff for up to `ms`. A journal without the method notes nothing.
   */
  const infrastructureLosses = (runId: string, incarnation: string | undefined, key: string): { note(): Promise<void>; noteWithin(ms: number): Promise<void> } => {
    const noteLoss = journal.noteInfrastructureLoss?.bind(journal);
    let noted = noteLoss === undefined;
    const note = async (): Promise<void> => {
      if (noted || noteLoss === undefined) return;
      noted = await noteLoss(runId, key, incarnation === undefined ? {} : { incarnation }).then(
        () => true,
        () => false,
      );
    };
    return {
      note,
      async noteWithin(ms) {
        const until = Date.now() + ms;
        for (let retry = 0; !noted && Date.now() < until; retry++) {
          await note();
          if (!noted) await new Promise((resolve) => setTimeout(resolve, Math.min(infrastructureBackoffMs(retry), Math.max(0, until - Date.now()))));
        }
      },
    };
  };

  /**
   * One attempt of a job: `done`, `infrastructure` (what failed, and the epoch it held) for `work`
   * to try again, or `session-lost`: fenced when another worker's sweep can have fenced it — the
   * run's epoch moved (between the attempt's last acknowledged write and the moment it learnt of
   * it) while this worker's owner session was without its lock or within the grace after (a sweep
   * took the run from a live owner whose connection was cut). A fence outside that window is
   * another owner's doing, and plain `done`. `expectedEpoch`: the epoch the previous attempt held;
   * a run that moved past it has another owner now (this attempt stops, the job is done here).
   */
  const attempt = async (
    job: RunJob,
    runId: string,
    expectedEpoch: number | undefined,
  ): Promise<{ kind: 'done' } | { kind: 'session-lost' } | { kind: 'infrastructure'; error: unknown; epoch?: number }> => {
    const self = {};
    const startedAt = Date.now();
    liveAttempts.set(self, startedAt);
    try {
      return await attemptFrom(startedAt, job, runId, expectedEpoch);
    } finally {
      liveAttempts.delete(self);
    }
  };

  /** {@link attempt}'s body, begun at `startedAt` (before its claim). */
  const attemptFrom = async (
    startedAt: number,
    job: RunJob,
    runId: string,
    expectedEpoch: number | undefined,
  ): Promise<{ kind: 'done' } | { kind: 'session-lost' } | { kind: 'infrastructure'; error: unknown; epoch?: number }> => {
    // the last moment the run was known to be this attempt's: before its claim, then each commit acknowledged
    let ownedAt = startedAt;
    let claim;
    try {
      if (expectedEpoch !== undefined) {
        // still ours: at the epoch the last attempt held, or claimed by this worker since (a claim whose reply was lost)
        const run = await journal.getRun(runId);
        if (run === null || !sameRun(run, jobRunOf(job) ?? {}) || run.status !== 'running' || (run.epoch !== expectedEpoch && run.owner !== workerId)) return { kind: 'done' };
      }
      // the job's run only: another created under its id since (it was erased or purged) is not found
      const { incarnation } = jobRunOf(job) ?? {};
      claim = await journal.claim(runId, workerId, incarnation === undefined ? {} : { incarnation });
    } catch (error) {
      // the run ended (a stale job) or is gone: nothing to do; a blip is tried again; anything else comes back later
      if ((FencedError.isInstance(error) && error.reason === 'ended') || RunNotFoundError.isInstance(error)) return { kind: 'done' };
      // its row is one this build cannot claim (nothing was changed): left as it was, not retried — no
      // attempt reads it better. A newer format is retried: a worker of the newer build may take it.
      if (MalformedJournalEntryError.isInstance(error)) {
        events.next({ type: 'failed', runId, epoch: 0, error });
        return { kind: 'done' };
      }
      if (isInfrastructureError(error)) return { kind: 'infrastructure', error, ...(expectedEpoch === undefined ? {} : { epoch: expectedEpoch }) };
      throw error;
    }
    const { epoch } = claim.lease;
    events.next({ type: 'claimed', runId, epoch });
    // rows of another build or edited (its agent, stored call, last commit, ledger): failed closed at once
    const problem = claimProblem(claim, (agentId) => agents.has(agentId));
    if (problem !== undefined) {
      events.next({ type: 'failed', runId, epoch, error: problem });
      return failClosed(claim, problem);
    }
    const entry = agents.get(claim.run.agentId);
    if (entry === undefined) throw new TypeError(`RunWorker: run ${runId} belongs to agent "${claim.run.agentId}", which this worker does not run.`);
    const context: ExecutionContext = {
      journal,
      agent: entry.agent,
      faultPoint: faultPoint === undefined ? undefined : async (point, info) => faultPoint(point, info),
      handingOver: () => handingOver,
    };
    try {
      await faultPoint?.('claimed', { runId, epoch });
    } catch (error) {
      events.next({ type: 'failed', runId, epoch, error });
      throw error;
    }
    // the execution's values are this worker's events for the run, then its outcome
    const outcome = await lastValueFrom(
      executeRun(context, claim, job.signal).pipe(
        tap((item) => {
          if (isExecutionOutcome(item)) return;
          if (item.type === 'committed') ownedAt = Date.now();
          events.next(item);
        }),
        filter(isExecutionOutcome),
      ),
    );
    if (outcome.kind === 'retry') {
      if (outcome.infrastructure) return { kind: 'infrastructure', error: outcome.error, epoch };
      throw outcome.error;
    }
    if (outcome.kind === 'malformed') return failClosed(claim, outcome.error); // the execution told its `failed`
    if (outcome.kind === 'fenced' && sessionLostBetween(ownedAt, Date.now())) return { kind: 'session-lost' };
    // handed over: the run goes on in a job of the next generation (a budget of attempts of its own);
    // this one completes. A crash between the two leaves both: the later claim fences the other.
    // The send is tried again through a blip (one id, one job); past that the attempt is the
    // infrastructure's (noted: the give-up refunds it and hands the run on).
    if (outcome.kind === 'released') {
      try {
        // the next generation named as this job is (the give-up of this one looks for it so)
        await submitWrite(() => handOn(entry.queue, entry.deadLetter, jobRunOf(job) ?? { runId }, job.data.generation ?? 0));
      } catch (error) {
        if (isInfrastructureError(error)) return { kind: 'infrastructure', error, epoch };
        throw error;
      }
    }
    return { kind: 'done' };
  };

  return {
    events$: events.asObservable(),

    async start() {
      if (started) throw new TypeError('RunWorker.start(): already started.');
      if (closing !== undefined) throw new TypeError('RunWorker.start(): the worker is closed.');
      started = true;
      for (const { config } of agents.values()) await checkMemoryFence(journal, config, workerId);
      for (const { queue, deadLetter } of agents.values()) await ensureQueue(queue, deadLetter);
      if (retention !== undefined) {
        await boss.createQueue(retention.queue, { policy: 'exclusive', retryLimit: 2, retryDelay: 60, expireInSeconds: 900 });
        await boss.schedule(retention.queue, retention.cron);
      }
      if (concurrency === 0) return; // submit and cancel only: no runs, no giving up, no purging
      if (journal.holdOwnerSession !== undefined) {
        // held before the first claim (also with lostOwnerSweep: false: other workers sweep), so this worker's runs never look like a dead owner's
        // its reconnects at most a quarter of the grace apart: after an outage it is back before other workers' sweeps give its runs up
        const held = journal.holdOwnerSession(workerId, { reconnectWithinMs: sessionReconnectWithinMs(lostOwnerGraceMs) });
        if (!isObservable(held.lock$)) {
          await held.close();
          throw new TypeError('RunWorker.start(): journal.holdOwnerSession() returned a session without lock$ (an OwnerSession tells each change of its lock: see OwnerSession.lock$).');
        }
        session = held;
        // the session tells each change as it happens (its current state first): no looking
        sessionLock = held.lock$.subscribe(sessionLockChanged);
        let waited: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([held.ready(), new Promise((resolve) => (waited = setTimeout(resolve, 10_000)))]);
        clearTimeout(waited);
      }
      for (const { queue, deadLetter } of agents.values()) {
        const id = await boss.work(queue, { localConcurrency: concurrency, batchSize: 1, pollingIntervalSeconds, includeMetadata: true }, tracked(work));
        works.push({ queue, id });
        const giveUpId = await boss.work(deadLetter, { localConcurrency: 1, batchSize: 1, pollingIntervalSeconds, includeMetadata: true }, tracked((job) => giveUp(job, queue)));
        works.push({ queue: deadLetter, id: giveUpId });
      }
      if (retention !== undefined) {
        const id = await boss.work(retention.queue, { localConcurrency: 1, batchSize: 1, pollingIntervalSeconds }, () => retention.run());
        works.push({ queue: retention.queue, id });
      }
      const { findJobs, fail } = boss;
      if (options.lostOwnerSweep !== false && session !== undefined && journal.runsOfLostOwners !== undefined && findJobs !== undefined && fail !== undefined) {
        const byAgent = new Map([...agents.values()].map((entry) => [entry.agent.id, entry.queue]));
        sweeps = sweepLostOwners({
          journal,
          queue: { findJobs: findJobs.bind(boss), fail: fail.bind(boss) },
          workerId,
          agentIds: [...byAgent.keys()],
          queueOf: (agentId) => byAgent.get(agentId),
          woken: (queue) => {
            for (const work of works) if (work.queue === queue || work.queue === deadLetterQueueOf(queue)) boss.notifyWorker?.(work.id);
          },
          intervalMs: lostOwnerIntervalMs,
          graceMs: lostOwnerGraceMs,
        });
      }
    },

    async submit(agent, input, callOptions) {
      const { agent: registered, config, queue, deadLetter } = agentOf(agent);
      // the options read once: the row, the processors' check and the stored call are made of one reading
      const { stored, runId: givenRunId } = submittedCallOf(input, callOptions);
      const runId = givenRunId ?? randomUUID();
      if (typeof runId !== 'string' || runId === '') throw new TypeError('RunWorker.submit: runId must be a non-empty string.');
      // the run's own check of its arguments, on the options a worker will run it with: what the run
      // would refuse (maxSteps 0, an unknown toolChoice, memory on an agent without it, an empty
      // input) is its option error here, before anything is stored — not a run failed after one attempt
      const runOptions = runCallOptionsOf(runId, stored, new AbortController().signal);
      validateRunArguments(config, stored.input, runOptions);
      for (const processor of await processorsOf(config, runOptions.requestContext)) assertDurableProcessor(processor);
      // each write tried again through a blip (one id names one run and one job, so a try whose
      // answer was lost is found done by the next): a blip no longer leaves a run without its job
      let blipped = false;
      const run = { runId, agentId: registered.id, ...threadOf(stored.options), input: { input: stored.input, options: stored.options } };
      const { created, run: record } = await submitWrite(() => journal.createRun(run), () => (blipped = true));
      await submitWrite(() => ensureQueue(queue, deadLetter));
      // sent again when the run existed: the job of a submit that died between the two is made now.
      // Named by the run's id and incarnation, as stored: the same run again is the same job (a
      // no-op), a run created again under a removed run's id another (pg-boss keeps the old one's)
      await submitWrite(() => sendJob(queue, deadLetter, jobRunOfRecord(record), 0));
      // a try that failed may have stored the run (its answer lost): the run this submit made
      return { runId, created: created || blipped };
    },

    async cancel(runId, options) {
      assertRunAccess('RunWorker.cancel', options);
      // the run's read and the stop's write tried again through a blip, as a submit's writes are
      // (a run holds one stop: a try whose answer was lost adds nothing the next time)
      await submitWrite(() => authorizedRun(journal, runId, options));
      const reason = options.reason;
      await submitWrite(() => journal.signal(runId, { kind: 'stop', ...(reason === undefined ? {} : { reason }) }));
    },

    close({ handover = false } = {}) {
      closing ??= (async () => {
        handingOver = handover;
        await Promise.all(works.map(({ queue, id }) => boss.offWork(queue, { id, wait: false })));
        while (executions.size > 0) await Promise.allSettled([...executions]);
        sweeps?.unsubscribe();
        sessionLock?.unsubscribe();
        await session?.close();
        events.complete();
      })();
      return closing;
    },
  };
}
