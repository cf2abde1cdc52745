/** Checks of `createRunWorker`'s options, and what the worker reads off a dead-lettered job. */

/** What the worker calls on `boss`: every method of `RunQueue` (create-run-worker.ts; keep the two in step). */
const QUEUE_METHODS = ['createQueue', 'send', 'work', 'getJobById', 'offWork', 'schedule'] as const;

/** The options checked here (the shape of `RunWorkerOptions`; not imported: that file imports this one). */
interface CheckedOptions {
  readonly journal?: unknown;
  readonly boss?: unknown;
  readonly concurrency?: number;
  readonly retention?: unknown;
  readonly queue?: { readonly heartbeatSeconds?: number; readonly retryLimit?: number; readonly expireInSeconds?: number };
  readonly lostOwnerSweep?: false | { readonly intervalMs?: number; readonly graceMs?: number };
}

function checkCount(name: string, value: number | undefined, minimum: number): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < minimum)) throw new TypeError(`createRunWorker: ${name} must be an integer ≥ ${minimum} (got ${String(value)}).`);
}

/**
 * A `TypeError` naming the first wrong option: no journal or boss, a boss without a method the
 * worker calls (an older pg-boss, a wrapper), a count out of range.
 *
 * @example
 * ```ts
 * checkWorkerOptions({ journal, boss: {} }); // TypeError: createRunWorker: boss has no createQueue, send, …
 * ```
 */
export function checkWorkerOptions(options: CheckedOptions): void {
  const { journal, boss } = options;
  if (journal === undefined || boss === undefined) throw new TypeError('createRunWorker: journal and boss are required.');
  // `schedule` only for the retention job (`retention: false` schedules nothing)
  const missing = QUEUE_METHODS.filter((method) => typeof (boss as Record<string, unknown>)[method] !== 'function' && (method !== 'schedule' || options.retention !== false));
  if (missing.length > 0) throw new TypeError(`createRunWorker: boss has no ${missing.join(', ')} (a started pg-boss 12 instance has them; see RunQueue).`);
  checkCount('concurrency', options.concurrency, 0);
  checkCount('queue.heartbeatSeconds', options.queue?.heartbeatSeconds, 10);
  checkCount('queue.retryLimit', options.queue?.retryLimit, 0);
  checkCount('queue.expireInSeconds', options.queue?.expireInSeconds, 1);
  const sweep = options.lostOwnerSweep;
  if (sweep !== undefined && sweep !== false && (typeof sweep !== 'object' || sweep === null)) {
    throw new TypeError(`createRunWorker: lostOwnerSweep must be false or { intervalMs?, graceMs? } (got ${String(sweep)}).`);
  }
  if (sweep !== undefined && sweep !== false) {
    checkCount('lostOwnerSweep.intervalMs', sweep.intervalMs, 50);
    checkCount('lostOwnerSweep.graceMs', sweep.graceMs, 0);
  }
}

/**
 * Why a dead-lettered job's last attempt failed, from its output (pg-boss's `{ value: { message } }`,
 * or the handler's error).
 *
 * @example
 * ```ts
 * failureOf({ value: { message: 'job heartbeat timeout' } }); // { lastFailure: 'job heartbeat timeout' }
 * ```
 */
export function failureOf(output: object | null | undefined): { lastFailure?: string } {
  const record = (output ?? {}) as { message?: unknown; value?: unknown };
  const value = record.value as { message?: unknown } | string | undefined;
  const message = typeof record.message === 'string' ? record.message : typeof value === 'string' ? value : typeof value?.message === 'string' ? value.message : undefined;
  return message === undefined ? {} : { lastFailure: message };
}
