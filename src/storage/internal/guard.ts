import { RxAgentError } from '../../errors/rxagent-error.js';
import { StorageError, type StorageOperation } from '../errors/storage-error.js';

/**
 * Runs a storage operation, turning backend failures into `StorageError` while letting
 * rxagent's own typed errors (invalid message, missing thread, …) and the reason of the
 * operation's aborted `signal` through unchanged.
 */
export async function guard<T>(operation: StorageOperation, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await task();
  } catch (error) {
    if (RxAgentError.isInstance(error)) throw error;
    if (signal?.aborted === true && error === signal.reason) throw error;
    throw new StorageError({ operation, cause: error });
  }
}

/** The error every operation of a closed store rejects with. */
export function closedError(operation: StorageOperation): StorageError {
  return new StorageError({ operation, message: 'the store is closed' });
}

const tails = new Map<string, Promise<void>>();

/** Resolves on the next turn of the event loop (after pending I/O callbacks). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs tasks one at a time per key (a promise queue). A failed task does not block the next.
 * Keys are shared across instances within the process, so two stores on one SQLite file
 * never wait on each other's write lock while holding the event loop.
 *
 * Each task starts on a new turn of the event loop: the embedded SQLite driver is
 * synchronous, so a long queue would otherwise run as one chain of microtasks, starving I/O
 * in this process and leaving other processes no gap to take the file's write lock.
 */
export function runExclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const result = previous.then(nextTurn).then(task);
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return result;
}
