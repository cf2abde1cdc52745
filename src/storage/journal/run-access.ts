/**
 * Who may read, resume or cancel a run: every reader and `cancel` take a {@link RunAccess}. A run
 * the caller may not see answers exactly as an unknown run does (`RunNotFoundError`, HTTP 404),
 * so run ids cannot be probed. What a client may see of an entry: {@link clientEntry}.
 */
import { chunkProblem, clientSafeChunk } from '../../contract/client-safe-chunk.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import { MalformedJournalEntryError } from './errors/malformed-journal-entry-error.js';
import { MissingAuthorizationError } from './errors/missing-authorization-error.js';
import { RunNotFoundError } from './errors/run-not-found-error.js';
import { storageIdProblem } from '../internal/ids.js';
import type { JournalEntry, RunJournal, RunRecord } from './types.js';

/**
 * Decides whether `request` may use `run`: compare the run's owner (`run.resourceId`,
 * `run.threadId`) with who the request is (a session, a signed run token…). `false` (or a throw)
 * refuses: the caller answers as for an unknown run.
 *
 * @example
 * ```ts
 * import type { RunAuthorize } from 'rxagent/durable';
 * const authorize: RunAuthorize = async (run, request) => run.resourceId === (await sessionOf(request))?.userId;
 * ```
 */
export type RunAuthorize = (run: RunRecord, request: Request | undefined) => boolean | Promise<boolean>;

/**
 * The authorization every run reader and `cancel` require: an `authorize` check of the run
 * against the `request`, or an explicit `unsafeNoAuthorization: true` (a reader no client
 * reaches: a test, an admin tool). Leaving both out is a `MissingAuthorizationError`.
 *
 * @example
 * ```ts
 * import { runTokenAuthorization, type RunAccess } from 'rxagent/durable';
 * const access: RunAccess = { request, authorize: runTokenAuthorization({ secret }) };
 * ```
 */
export type RunAccess =
  | {
      /** Checks the run against the request (see {@link RunAuthorize}). */
      authorize: RunAuthorize;
      /** The request being answered (what `authorize` looks at). */
      request?: Request | undefined;
      /** Not with `authorize`. */
      unsafeNoAuthorization?: never;
    }
  | {
      /** Anyone holding the run id may use it: only for callers no client reaches. */
      unsafeNoAuthorization: true;
      /** The request being answered (readers take their cursor from it). */
      request?: Request | undefined;
      /** Not with `unsafeNoAuthorization`. */
      authorize?: never;
    };

/** Throws `MissingAuthorizationError` unless `access` is a {@link RunAccess}. */
export function assertRunAccess(what: string, access: unknown): asserts access is RunAccess {
  if (typeof access !== 'object' || access === null) throw new MissingAuthorizationError({ what });
  const { authorize, unsafeNoAuthorization } = access as { authorize?: unknown; unsafeNoAuthorization?: unknown };
  if (authorize !== undefined && unsafeNoAuthorization !== undefined) {
    throw new MissingAuthorizationError({ what, problem: 'give either authorize or unsafeNoAuthorization, not both' });
  }
  if (authorize !== undefined && typeof authorize !== 'function') {
    throw new MissingAuthorizationError({ what, problem: `authorize must be a function (got ${typeof authorize})` });
  }
  if (unsafeNoAuthorization !== undefined && unsafeNoAuthorization !== true) {
    throw new MissingAuthorizationError({ what, problem: 'unsafeNoAuthorization must be exactly true' });
  }
  if (authorize === undefined && unsafeNoAuthorization === undefined) throw new MissingAuthorizationError({ what });
}

/**
 * The run, when it exists and `access` allows the request to use it; `RunNotFoundError` for an
 * unknown run and for a refused one alike (an `authorize` that throws refuses; a run whose row this
 * build cannot read, `MalformedJournalEntryError`, cannot be authorized: the same answer), and
 * `RunNotFoundError { reason: 'expired' }` (HTTP 410) for an allowed run whose chunks retention removed.
 */
export async function authorizedRun(journal: RunJournal, runId: string, access: RunAccess): Promise<RunRecord> {
  // an id no store can hold (NUL, too long, a lone surrogate, empty) names no run: the unknown run's answer, not the store's TypeError
  if (storageIdProblem(runId) !== undefined) throw new RunNotFoundError({ runId });
  let run: RunRecord | null;
  try {
    run = await journal.getRun(runId);
  } catch (error) {
    // a run row this build cannot read cannot be authorized: a caller who must be authorized gets the unknown run's answer
    if (MalformedJournalEntryError.isInstance(error) && access.unsafeNoAuthorization !== true) throw new RunNotFoundError({ runId });
    throw error;
  }
  if (run === null) throw new RunNotFoundError({ runId });
  if (access.unsafeNoAuthorization === true) return expiredOr(run);
  let allowed: boolean;
  try {
    allowed = (await access.authorize(run, access.request)) === true;
  } catch {
    allowed = false;
  }
  if (!allowed) throw new RunNotFoundError({ runId });
  return expiredOr(run);
}

function expiredOr(run: RunRecord): RunRecord {
  if (run.expiredAt !== undefined) throw new RunNotFoundError({ runId: run.runId, reason: 'expired' });
  return run;
}

/**
 * The chunk of a journal entry read back, checked: a `MalformedJournalEntryError` naming the run and
 * the seq for a row that is not JSON, not a chunk, missing a field its kind needs, or of a type this
 * build does not know. What every reader of stored chunks (the readers, a takeover) reads them with.
 *
 * @example
 * ```ts
 * const chunk = checkedEntryChunk(runId, entry); // throws for a row of another build or an edited one
 * ```
 */
export function checkedEntryChunk(runId: string, entry: JournalEntry): ChunkType {
  let chunk: ChunkType;
  try {
    chunk = entry.chunk;
  } catch (error) {
    throw new MalformedJournalEntryError({ runId, seq: entry.seq, problem: `not JSON (${error instanceof Error ? error.name : 'Error'})` });
  }
  const problem = chunkProblem(chunk);
  if (problem !== undefined) throw new MalformedJournalEntryError({ runId, seq: entry.seq, problem });
  return chunk;
}

/**
 * An entry as a client may get it: its chunk checked (`MalformedJournalEntryError` for a row that
 * is not JSON, not a chunk, missing a field, or of an unknown type) and its JSON text — the
 * stored bytes, except for `error` / `tool-error` chunks, whose error is in the client-safe form.
 */
export function clientEntry(runId: string, entry: JournalEntry): { chunk: ChunkType; json: string } {
  const chunk = checkedEntryChunk(runId, entry);
  const safe = clientSafeChunk(chunk);
  if (safe === chunk) return { chunk, json: entry.json };
  try {
    return { chunk: safe, json: JSON.stringify(safe) };
  } catch (error) {
    throw new MalformedJournalEntryError({ runId, seq: entry.seq, problem: `cannot be written back (${error instanceof Error ? error.name : 'Error'})` });
  }
}
