/** HTTP framing shared by the durable readers: status codes of journal errors, SSE headers. */
import { clientSafeError } from '../../contract/index.js';
import { JournalCursorError, JournalSchemaError, MalformedJournalEntryError, RUN_ID_HEADER, RunNotFoundError, encodeRunIdHeader } from '../../storage/index.js';

/** The status a journal error answers with: 404 (410 expired), 400, 409; anything else 500. */
export function statusOf(error: unknown): number {
  if (RunNotFoundError.isInstance(error)) return error.reason === 'expired' ? 410 : 404;
  if (JournalCursorError.isInstance(error)) return 400;
  if (JournalSchemaError.isInstance(error)) return 409;
  return 500;
}

/**
 * `{ error: { name, message } }` for a client: the reader's own errors (unknown run, cursor,
 * format, malformed row) with their message, anything else (a storage failure, whose message may
 * quote a connection string) in the client-safe form.
 */
export function errorBody(error: unknown): { error: { name: string; message: string } } {
  const own =
    RunNotFoundError.isInstance(error) || JournalCursorError.isInstance(error) || JournalSchemaError.isInstance(error) || MalformedJournalEntryError.isInstance(error);
  return { error: own ? { name: error.name, message: error.message } : clientSafeError(error) };
}

/** Headers of an error answer: never stored (a 404 of a run not created yet, cached, would hide it once it is), never sniffed. */
export const ERROR_HEADERS: Readonly<Record<string, string>> = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/** {@link errorBody} with the error's status. */
export function errorResponse(error: unknown): Response {
  return Response.json(errorBody(error), { status: statusOf(error), headers: ERROR_HEADERS });
}

/** Headers of an SSE response for a run (`x-rxagent-run-id` names it, encoded when a header cannot carry the id as it is). */
export function sseHeaders(runId: string, extra?: HeadersInit): Headers {
  const headers = new Headers(extra);
  headers.set('content-type', 'text/event-stream');
  headers.set('cache-control', 'no-cache');
  headers.set('connection', 'keep-alive');
  headers.set('x-accel-buffering', 'no');
  headers.set(RUN_ID_HEADER, encodeRunIdHeader(runId));
  return headers;
}
