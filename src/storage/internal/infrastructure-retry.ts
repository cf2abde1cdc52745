/**
 * A store operation through infrastructure faults: tried again, after a jittered exponential
 * backoff, while it fails for the infrastructure's reason (`isInfrastructureError`: a cut
 * connection, a restart, a lock or statement timeout, a serialization conflict) and its deadline
 * has not passed. Anything else — bad input, a constraint, another thread's message id, a fence,
 * an aborted operation — ends it at once. Only for operations that are safe to run again: a read,
 * or one transaction whose writes are upserts (running it again after a commit whose answer was
 * lost changes nothing).
 */
import { infrastructureBackoffMs, isInfrastructureError } from '../infrastructure-error.js';

/** How long a store retries an operation that failed for an infrastructure reason, by default (ms). */
export const DEFAULT_RETRY_DEADLINE_MS = 10_000;

/**
 * The retry deadline of a store's `retry` option, checked: `undefined` or `{}` is the default, a
 * whole number of ms ≥ 0 (0: no retries) is taken; anything else is a `TypeError` /
 * `RangeError` naming the store and the option.
 */
export function retryDeadlineMs(owner: string, retry: unknown): number {
  if (retry === undefined) return DEFAULT_RETRY_DEADLINE_MS;
  if (typeof retry !== 'object' || retry === null || Array.isArray(retry)) {
    throw new TypeError(`${owner}: retry must be an object such as { deadlineMs: 10000 } (got ${describe(retry)})`);
  }
  const deadlineMs: unknown = (retry as { deadlineMs?: unknown }).deadlineMs;
  if (deadlineMs === undefined) return DEFAULT_RETRY_DEADLINE_MS;
  if (typeof deadlineMs !== 'number' || !Number.isSafeInteger(deadlineMs) || deadlineMs < 0) {
    throw new RangeError(`${owner}: retry.deadlineMs must be a whole number of milliseconds ≥ 0 (got ${describe(deadlineMs)})`);
  }
  return deadlineMs;
}

/**
 * Runs `task` until it settles other than with an infrastructure failure, or until `deadlineMs`
 * after its first infrastructure failure (a first try that waited long on a lock before the
 * connection was cut still gets the whole window): the pauses between tries grow from 100 ms to
 * 5 s (jittered), the last one is cut short to end at the deadline, where one last try runs; a
 * failure after that is thrown as it is. `signal` ends the retries at once: an aborted signal
 * rejects with its reason instead of a first or another try (a try already running is left to
 * settle on its own terms). `stopped` (the store was closed) ends them with the last failure.
 */
export async function retryInfrastructure<T>(
  task: () => Promise<T>,
  options: { deadlineMs: number; signal?: AbortSignal | undefined; stopped: () => boolean },
): Promise<T> {
  const { deadlineMs, signal, stopped } = options;
  signal?.throwIfAborted();
  let deadline: number | undefined;
  for (let retry = 0; ; retry++) {
    try {
      return await task();
    } catch (error) {
      if (!isInfrastructureError(error) || stopped()) throw error;
      signal?.throwIfAborted();
      deadline ??= Date.now() + deadlineMs;
      const left = deadline - Date.now();
      if (left <= 0) throw error;
      await pause(Math.min(infrastructureBackoffMs(retry), left), signal);
      if (stopped()) throw error;
    }
  }
}

/** Resolves after `ms`; rejects with `signal`'s reason as soon as it aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    const aborted = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}
