/**
 * The journal's retention as a pg-boss job (docs/durable.md, "Retention and erasure"): every worker schedules
 * the same cron on one queue (pg-boss keeps one schedule per name and sends one job per tick
 * whichever instances are up), and workers with runs to serve work it one job at a time (the
 * queue's `exclusive` policy: one job queued or active). A job runs purge rounds until the journal
 * reports nothing left or its round budget is spent (the next tick goes on).
 */
import type { PurgeOptions, RunJournal } from '../../storage/index.js';

/**
 * Options of the worker's retention job (`RunWorkerOptions.retention`).
 *
 * @example
 * ```ts
 * import type { RetentionJobOptions } from 'rxagent/durable';
 * const retention: RetentionJobOptions = { cron: '0 * * * *', batchSize: 500 }; // hourly
 * const worker = createRunWorker({ journal, boss, agents: [support], retention });
 * ```
 */
export interface RetentionJobOptions extends PurgeOptions {
  /** The pg-boss queue of the job. Default `rxagent.retention`. */
  queue?: string;
  /** When the purge runs, as a cron expression (UTC). Default `'*\/15 * * * *'` (every 15 minutes). */
  cron?: string;
  /** Purge rounds (`RunJournal.purgeExpired` calls) at most per job. Default 20. */
  roundsPerJob?: number;
}

/** The resolved retention job. */
export interface RetentionJob {
  readonly queue: string;
  readonly cron: string;
  /** One job's work: purge rounds until done or the budget is spent; the rounds run. */
  run(): Promise<number>;
}

/** The retention job of `journal` (a `TypeError` naming a bad option). */
export function retentionJob(journal: RunJournal, options: RetentionJobOptions = {}): RetentionJob {
  const queue = options.queue ?? 'rxagent.retention';
  const cron = options.cron ?? '*/15 * * * *';
  const rounds = options.roundsPerJob ?? 20;
  if (typeof queue !== 'string' || !/^[\w.\-/]+$/.test(queue)) throw new TypeError(`createRunWorker: retention.queue must be a pg-boss queue name (got ${JSON.stringify(queue)}).`);
  if (typeof cron !== 'string' || cron.trim().split(/\s+/).length < 5) throw new TypeError(`createRunWorker: retention.cron must be a cron expression (got ${JSON.stringify(cron)}).`);
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new TypeError(`createRunWorker: retention.roundsPerJob must be an integer ≥ 1 (got ${String(rounds)}).`);
  const purge: PurgeOptions = {
    ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
    ...(options.maxStatements === undefined ? {} : { maxStatements: options.maxStatements }),
  };
  return {
    queue,
    cron,
    async run() {
      for (let round = 1; round <= rounds; round++) if ((await journal.purgeExpired(purge)).done) return round;
      return rounds;
    },
  };
}
