/**
 * The one place that decides whether a failure is the infrastructure's (the database or the
 * network between us and it: a cut connection, a restart, a failover, a lock or statement
 * timeout, a serialization conflict) rather than the caller's own, and the backoff between two
 * tries. Its users: the stores retry an operation that failed this way within their deadline
 * (`PostgresStorage`'s `retry`); a durable run's attempt that failed this way fails the attempt,
 * never the run (the run goes on from its last commit in the next attempt).
 *
 * | what | codes |
 * |---|---|
 * | PostgreSQL SQLSTATE | class `08` (connection exception), `40001` serialization failure, `40P01` deadlock, `55P03` lock not available, `57P01` admin shutdown, `57P02` crash shutdown, `57P03` cannot connect now, `57014` statement timeout / query canceled, class `53` insufficient resources, `25P03` idle-in-transaction timeout |
 * | Node socket errors | `ECONNRESET`, `ECONNREFUSED`, `EPIPE`, `ETIMEDOUT`, `ECONNABORTED`, `EHOSTUNREACH`, `ENETUNREACH`, `EAI_AGAIN` |
 * | `pg` / pool messages (no code) | `Connection terminated…`, `…not queryable`, `Query read timeout`, `timeout exceeded when trying to connect`, `no connection from the pool within…` |
 *
 * The error is looked at with its `cause` chain (a `StorageError` keeps the driver's error as
 * its cause; a `ProcessorError` the hook's), and an `AggregateError`'s errors (Node's
 * `ECONNREFUSED` on a host with several addresses).
 */
import { StorageError } from './errors/storage-error.js';

/** SQLSTATE codes of infrastructure failures (see the module comment), exact. */
const SQLSTATES = new Set(['40001', '40P01', '55P03', '57P01', '57P02', '57P03', '57014', '25P03']);
/** SQLSTATE classes of infrastructure failures: connection exception, insufficient resources. */
const SQLSTATE_CLASSES = ['08', '53'];
/** Node's socket and DNS error codes of a lost or refused connection. */
const NODE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** What `pg` and its pool (and `GuardedPool`) say, without a code, when a connection is gone. */
const MESSAGES = [
  /^Connection terminated/i,
  /not queryable/i,
  /^Query read timeout/i,
  /timeout exceeded when trying to connect/i,
  /^no connection from the pool within/i,
];

/** How deep a `cause` chain is followed (a cycle or a pathological chain ends here). */
const MAX_DEPTH = 8;

/** True for one error (not its causes) of the infrastructure. */
function isInfrastructureLink(error: object): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NODE_CODES.has(code)) return true; // before SQLSTATEs: `EPIPE` has their shape
    if (/^[0-9A-Z]{5}$/.test(code)) return SQLSTATES.has(code) || SQLSTATE_CLASSES.some((prefix) => code.startsWith(prefix));
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && MESSAGES.some((pattern) => pattern.test(message));
}

/** Every error of `error`'s chain (itself, its causes, an `AggregateError`'s errors), bounded. */
function* chainOf(error: unknown, depth = 0): Generator<object> {
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return;
  yield error;
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  if (cause !== error) yield* chainOf(cause, depth + 1);
  if (Array.isArray(errors)) for (const inner of errors.slice(0, MAX_DEPTH)) yield* chainOf(inner, depth + 1);
}

/**
 * True when `error` (or an error in its `cause` chain) is an infrastructure failure (see the
 * module comment): a store retries the operation, a durable run's attempt fails and the run goes
 * on from its last commit.
 *
 * @example
 * ```ts
 * isInfrastructureError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })); // true
 * isInfrastructureError(new StorageError({ operation: 'append', cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) })); // true
 * isInfrastructureError(Object.assign(new Error('duplicate key value'), { code: '23505' })); // false
 * ```
 */
export function isInfrastructureError(error: unknown): boolean {
  for (const link of chainOf(error)) if (isInfrastructureLink(link)) return true;
  return false;
}

/**
 * True when a run's terminal `error` came from the run's storage failing (a `StorageError` in the
 * chain whose own cause is the infrastructure's) — memory's save inside the commit phase, for
 * one — and not from anything of the run's own (a tool, a processor calling some other service).
 *
 * @example
 * ```ts
 * const blip = new StorageError({ operation: 'saveMessages', cause: Object.assign(new Error('x'), { code: '57P01' }) });
 * isStorageInfrastructureError(new ProcessorError('memory', 'processOutputResult', 'save failed', { cause: blip })); // true
 * ```
 */
export function isStorageInfrastructureError(error: unknown): boolean {
  for (const link of chainOf(error)) if (StorageError.isInstance(link) && isInfrastructureError(link)) return true;
  return false;
}

/** The first delay of {@link infrastructureBackoffMs}, in ms. */
export const INFRASTRUCTURE_BACKOFF_BASE_MS = 100;
/** The longest delay of {@link infrastructureBackoffMs}, in ms. */
export const INFRASTRUCTURE_BACKOFF_MAX_MS = 5_000;

/**
 * The pause before retry `retry` (0 first) after an infrastructure failure: exponential from
 * 100 ms, capped at 5 s, jittered ("equal jitter": between half and all of it) so workers that
 * lost the database together do not come back together.
 *
 * @example
 * ```ts
 * infrastructureBackoffMs(0, () => 0.5); // 75
 * infrastructureBackoffMs(20);           // between 2,500 and 5,000
 * ```
 */
export function infrastructureBackoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(INFRASTRUCTURE_BACKOFF_MAX_MS, INFRASTRUCTURE_BACKOFF_BASE_MS * 2 ** Math.min(Math.max(0, retry), 16));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
