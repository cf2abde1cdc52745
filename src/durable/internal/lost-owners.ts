/**
 * Takeover after an owner's process died, without waiting for its heartbeat: every worker holds
 * an owner session (`RunJournal.holdOwnerSession`), and sweeps — one statement, every
 * `intervalMs` jittered — for `running` runs of its agents whose owner's session is gone. For each
 * whose owner has stayed gone for `graceMs` (a blipped connection is back well within it),
 * the dead owner's attempt of the run's job (active, fetched before the run's last write) is failed
 * in pg-boss, fenced to that attempt (`{ id, retryCount }`): exactly what the heartbeat timeout
 * would have done ≈ 10 s later (an attempt spent, or the dead-letter queue when none is left), and
 * this worker's fetch is woken at once. Which worker then claims the run does not matter: the
 * journal's epoch fences anyone else, and a frozen owner (its session alive) is left to the
 * heartbeat as before.
 */
import { EMPTY, catchError, concatMap, defer, from, repeat, timer, type Subscription } from 'rxjs';
import type { LostOwnerRun, RunJournal } from '../../storage/index.js';

/** What the sweep uses of pg-boss (the optional `RunQueue` methods). */
export interface LostOwnerQueue {
  findJobs(
    name: string,
    options: { data: object; limit?: number },
  ): Promise<ReadonlyArray<{ readonly id: string; readonly state: string; readonly retryCount: number; readonly startedOn?: Date | null }>>;
  fail(name: string, attempt: { id: string; retryCount: number }, data: object): Promise<{ readonly affected?: number }>;
}

/** The sweep's setting and what it needs of its worker. */
export interface LostOwnerSweep {
  journal: RunJournal;
  queue: LostOwnerQueue;
  workerId: string;
  /** The agents this worker runs, by id: their queues. */
  queueOf(agentId: string): string | undefined;
  agentIds: readonly string[];
  /** A job was made available: wake this worker's fetch. */
  woken(queue: string): void;
  /** Mean pause between sweeps (jittered ±25 %). */
  intervalMs: number;
  /**
   * How long a run's owner must have been seen without its session before its attempt is failed:
   * an owner whose connection blipped takes its lock again well within it, and spends nothing.
   */
  graceMs: number;
}

/** How long a run already handled is left out of the sweeps (its job is waiting for a fetch). */
const HANDLED_MS = 5000;

/**
 * Starts the sweeps; unsubscribe to stop. Failures of a sweep (the database away) are left to the
 * next one: the heartbeat still takes over what the sweeps miss.
 */
export function sweepLostOwners(sweep: LostOwnerSweep): Subscription {
  const handled = new Map<string, number>();
  /** When this worker first saw each run's owner without its session (this process's clock: a duration, never an order). */
  const lostSince = new Map<string, number>();
  const once = async (): Promise<void> => {
    const now = Date.now();
    for (const [key, until] of handled) if (until <= now) handled.delete(key);
    const runs = (await sweep.journal.runsOfLostOwners?.(sweep.agentIds)) ?? [];
    const seen = new Set<string>();
    for (const run of runs) {
      const key = `${run.runId}@${run.epoch}`;
      seen.add(key);
      // our own runs: this worker is alive (its session is between connections); the fence decides
      if (run.owner === sweep.workerId || handled.has(key)) continue;
      const since = lostSince.get(key) ?? now;
      lostSince.set(key, since);
      // a blip of the owner's connection: its session comes back within the grace, nothing spent
      if (now - since < sweep.graceMs) continue;
      handled.set(key, now + HANDLED_MS);
      await release(sweep, run);
    }
    // owners that came back (or runs that ended) start again from zero
    for (const key of lostSince.keys()) if (!seen.has(key)) lostSince.delete(key);
  };
  return defer(() => timer(sweep.intervalMs * (0.75 + Math.random() * 0.5)))
    .pipe(
      concatMap(() => from(once()).pipe(catchError(() => EMPTY))),
      repeat(),
    )
    .subscribe();
}

/** Fails the dead owner's attempt of `run`'s job (see the file's comment). */
async function release(sweep: LostOwnerSweep, run: LostOwnerRun): Promise<void> {
  const queue = sweep.queueOf(run.agentId);
  if (queue === undefined) return;
  const jobs = await sweep.queue.findJobs(queue, { data: { runId: run.runId }, limit: 100 });
  for (const job of jobs) {
    // the dead owner's attempt: fetched before the run's last write (a later fetch is a live worker's)
    const startedOn = job.startedOn == null ? Number.NaN : new Date(job.startedOn).getTime();
    if (job.state !== 'active' || !(startedOn <= run.updatedAt.getTime())) continue;
    const failed = await sweep.queue.fail(queue, { id: job.id, retryCount: job.retryCount }, { message: 'owner session ended', owner: run.owner });
    if ((failed.affected ?? 0) > 0) sweep.woken(queue);
  }
}
