/** A journaled run as the AI SDK's UI message stream response, resumable on any instance. */
import { clientSafeError } from '../contract/index.js';
import {
  JournalCursorError,
  JournalSchemaError,
  MalformedJournalEntryError,
  RUN_ID_HEADER,
  RunNotFoundError,
  assertRunAccess,
  encodeRunIdHeader,
  type RunAccess,
  type RunJournal,
} from '../storage/index.js';
import { journalUIEvents, planResume, uiEventStream, type ResumePlan } from './internal/journal-ui-events.js';
import type { ResumeUIMessageStreamOptions } from './resume-ui-message-stream.js';
import { keepAliveInterval, withKeepAlive } from './internal/keep-alive.js';

/**
 * Options of {@link resumeUIMessageStreamResponse}: the cursor and encoder options, and headers.
 *
 * @example
 * ```ts
 * import type { ResumeUIMessageStreamResponseOptions } from 'rxagent/ai-sdk';
 * const options: ResumeUIMessageStreamResponseOptions = { request, authorize, after: request.headers.get('last-event-id') };
 * ```
 */
export type ResumeUIMessageStreamResponseOptions = ResumeUIMessageStreamOptions & {
  /** Extra response headers. */
  headers?: HeadersInit;
  /**
   * Send an SSE comment (`: keep-alive`) every this many milliseconds, so a proxy does not close the
   * connection while the run is quiet (a long tool); `false` sends none. Above 0 and at most
   * 2^31 − 1 (else a `TypeError` naming it, before anything is read). Default 15,000, as
   * `toUIMessageStreamResponse`. The timer is cleared when the body ends or is cancelled.
   */
  keepAliveMs?: number | false;
};

function statusOf(error: unknown): number {
  if (RunNotFoundError.isInstance(error)) return error.reason === 'expired' ? 410 : 404;
  if (JournalCursorError.isInstance(error)) return 400;
  if (JournalSchemaError.isInstance(error)) return 409;
  return 500;
}

/**
 * A `Response` streaming the run's UI message chunks as `useChat` expects (`data: <chunk JSON>`,
 * `data: [DONE]`, header `x-vercel-ai-ui-message-stream: v1`), each event with `id: <seq>:<k>`
 * and the response with `x-rxagent-run-id` (an id a header cannot carry as it is goes encoded:
 * read it with `decodeRunIdHeader` of `rxagent/durable`). Without a cursor it replays the run from its first
 * chunk, byte for byte what the first response sent, keep-alive comments aside (what
 * `useChat({ resume: true })` expects);
 * with `after` (the client's `Last-Event-ID`) it sends exactly the rest. Only for a caller
 * `options` authorizes (`authorize(run, request)`, or `unsafeNoAuthorization: true`; neither:
 * `MissingAuthorizationError`). Bad requests are answered before the first byte with
 * `{ error: { name, message } }`: 404 `RunNotFoundError` — an unknown run and a refused one
 * alike —, 400 `JournalCursorError`, 409 `JournalSchemaError`. A read failure mid-stream ends the
 * body without `[DONE]`, so a `DurableChatTransport` reconnects; a row it cannot serve
 * (`MalformedJournalEntryError`) ends it with an `error` chunk and `[DONE]` (reconnecting would
 * meet the same row). A `: keep-alive` comment goes out every `keepAliveMs` (15 s by default;
 * `false`: none), so a proxy keeps a connection open while the run is quiet.
 *
 * @example
 * ```ts
 * import { resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
 * import { RUN_ID_HEADER, decodeRunIdHeader, runTokenAuthorization } from 'rxagent/durable';
 * const authorize = runTokenAuthorization({ secret: process.env.RUN_TOKEN_SECRET! });
 * // GET /api/chat/:id/stream
 * const runId = decodeRunIdHeader(request.headers.get(RUN_ID_HEADER)) ?? (await journal.activeRun(chatId))?.runId;
 * return runId ? resumeUIMessageStreamResponse(journal, runId, { request, authorize, after: request.headers.get('last-event-id') }) : new Response(null, { status: 204 });
 * ```
 */
export async function resumeUIMessageStreamResponse(
  journal: RunJournal,
  runId: string,
  options: ResumeUIMessageStreamResponseOptions,
): Promise<Response> {
  assertRunAccess('resumeUIMessageStreamResponse', options);
  const { after, headers: extra, authorize, unsafeNoAuthorization, request, keepAliveMs, ...encoderOptions } = options;
  const keepAlive = keepAliveInterval('resumeUIMessageStreamResponse: options', keepAliveMs);
  const access = { authorize, unsafeNoAuthorization, request } as RunAccess;
  let plan: ResumePlan;
  let headers: Headers;
  try {
    plan = await planResume(journal, runId, after, access);
    // before anything is read: extra headers a Headers cannot take fail here, not with a reader subscribed
    headers = new Headers(extra);
    headers.set('content-type', 'text/event-stream');
    headers.set('cache-control', 'no-cache');
    headers.set('connection', 'keep-alive');
    headers.set('x-vercel-ai-ui-message-stream', 'v1');
    headers.set('x-accel-buffering', 'no');
    headers.set(RUN_ID_HEADER, encodeRunIdHeader(runId));
  } catch (error) {
    const own = RunNotFoundError.isInstance(error) || JournalCursorError.isInstance(error) || JournalSchemaError.isInstance(error);
    // never stored (a 404 of a run not created yet, cached, would hide it once it is), never sniffed
    return Response.json(
      { error: own ? { name: error.name, message: error.message } : clientSafeError(error) },
      { status: statusOf(error), headers: { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } },
    );
  }
  const encoder = new TextEncoder();
  const body = uiEventStream(
    async () => plan,
    (resolved, ready) => journalUIEvents(journal, runId, resolved, encoderOptions, ready),
    (events) => [encoder.encode(events.map((event) => `id: ${event.id}\ndata: ${JSON.stringify(event.chunk)}\n\n`).join(''))],
    {
      onComplete: () => [encoder.encode('data: [DONE]\n\n')],
      // a row no reader can serve: an error chunk and [DONE] (a reconnect would meet it again); a read failure: close, the client reconnects
      onError: (error) =>
        MalformedJournalEntryError.isInstance(error)
          ? { pieces: [encoder.encode(`data: ${JSON.stringify({ type: 'error', errorText: clientSafeError(error).message })}\n\ndata: [DONE]\n\n`)], then: 'close' }
          : 'close',
      size: (piece) => piece.byteLength,
      runId,
    },
  );
  return new Response(withKeepAlive(body, keepAlive), { status: 200, headers });
}
