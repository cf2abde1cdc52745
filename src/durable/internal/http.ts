/** HTTP framing shared by the durable readers: status codes of journal errors, SSE headers. */
import { JournalCursorError, JournalSchemaError, RunNotFoundError } from '../../storage/index.js';

/** The status a journal error answers with: 404 (410 expired), 400, 409; anything else 500. */
export function statusOf(error: unknown): number {
  if (RunNotFoundError.isInstance(error)) return error.reason === 'expired' ? 410 : 404;
  if (JournalCursorError.isInstance(error)) return 400;
  if (JournalSchemaError.isInstance(error)) return 409;
  return 500;
}

/** `{ error: { name, message } }` with the error's status. */
export function errorResponse(error: unknown): Response {
  const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
  return Response.json({ error: { name, message } }, { status: statusOf(error) });
}

/** Headers of an SSE response for a run (`x-rxagent-run-id` names it). */
export function sseHeaders(runId: string, extra?: HeadersInit): Headers {
  const headers = new Headers(extra);
  headers.set('content-type', 'text/event-stream');
  headers.set('cache-control', 'no-cache');
  headers.set('connection', 'keep-alive');
  headers.set('x-accel-buffering', 'no');
  headers.set('x-rxagent-run-id', runId);
  return headers;
}
