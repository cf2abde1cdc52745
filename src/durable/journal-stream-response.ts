/** A run's journal as server-sent events, from any instance: `id: <seq>`, `data: <chunk JSON>`. */
import type { Subscription } from 'rxjs';
import {
  JournalCursorError,
  JournalSchemaError,
  assertRunAccess,
  authorizedRun,
  clientEntry,
  type JournalEntry,
  type RunAccess,
  type RunJournal,
} from '../storage/index.js';
import { errorBody, errorResponse, sseHeaders } from './internal/http.js';
import { optionError } from '../loop/index.js';
import { MAX_TIMER_MS, isTimerDelay } from '../contract/index.js';

/**
 * Options of {@link journalStreamResponse}: who may read the run (an `authorize` check of the
 * run against the `request`, or `unsafeNoAuthorization: true`; see `RunAccess`), the cursor,
 * headers and keep-alive.
 *
 * @example
 * ```ts
 * import { runTokenAuthorization, type JournalStreamResponseOptions } from 'rxagent/durable';
 * const options: JournalStreamResponseOptions = { request, authorize: runTokenAuthorization({ secret }), keepAliveMs: 15_000 };
 * ```
 */
export type JournalStreamResponseOptions = RunAccess & {
  /**
   * Serve entries after this seq (an integer from 0 to the run's `lastSeq`, as a number or its
   * decimal text). `null`/`undefined`: the `request`'s `Last-Event-ID` header or `?after=`
   * parameter, else 0 (the whole run).
   */
  after?: string | number | null;
  /** Extra response headers. */
  headers?: HeadersInit;
  /**
   * Send an SSE comment after this many idle milliseconds (proxies close quiet connections): above
   * 0 and at most 2^31 − 1 (a longer delay fires every millisecond); anything else is a `TypeError`.
   */
  keepAliveMs?: number;
};

/** The cursor of a request: `after`, else `Last-Event-ID`, else `?after=`. */
export function requestCursor(after: string | number | null | undefined, request: Request | undefined): string | number | null {
  if (after !== undefined && after !== null) return after;
  if (request === undefined) return null;
  const header = request.headers.get('last-event-id');
  if (header !== null && header !== '') return header;
  return new URL(request.url, 'http://localhost').searchParams.get('after');
}

/** A decimal cursor checked against the run (`JournalCursorError` for anything else). */
function seqCursor(runId: string, after: string | number | null, lastSeq: number): number {
  if (after === null || after === '') return 0;
  const seq = typeof after === 'number' ? after : /^\d{1,15}$/.test(after) ? Number(after) : Number.NaN;
  if (!Number.isSafeInteger(seq) || seq < 0 || seq > lastSeq) throw new JournalCursorError({ runId, after, lastSeq });
  return seq;
}

/**
 * The run's chunks as a `Response` of server-sent events (`id: <seq>\ndata: <chunk JSON>\n\n`),
 * from any instance, for a caller `options` authorizes: history first (pages of at most 256 KiB,
 * read only as fast as the client takes them), then live until the terminal chunk. Each `data`
 * is the JSON text the journal holds, except that an `error` / `tool-error` chunk's error is in
 * its client-safe form (`{ name, message: 'An error occurred.' }`: no provider bodies, URLs,
 * headers or stacks; the journal keeps the full error). A client that reconnects with
 * `Last-Event-ID` gets the rest. Bad requests are answered before the first byte with
 * `{ error: { name, message } }`: 404 `RunNotFoundError` — an unknown run and a run `authorize`
 * refuses alike — (410 when expired), 400 `JournalCursorError`, 409 `JournalSchemaError`. A row
 * the reader cannot serve (`MalformedJournalEntryError`) or a read failure after the first byte
 * ends the stream with an SSE `event: error`. Without `authorize` or `unsafeNoAuthorization` the
 * promise rejects with `MissingAuthorizationError`, with a `keepAliveMs` no timer can wait for
 * (`Infinity`, past 2^31 − 1, 0, `NaN`) with a `TypeError`, before anything is read. Error answers
 * carry `cache-control: no-store` (a 404 of a run not created yet is not kept by a cache).
 *
 * @example
 * ```ts
 * import { journalStreamResponse, runTokenAuthorization } from 'rxagent/durable';
 * const authorize = runTokenAuthorization({ secret: process.env.RUN_TOKEN_SECRET! });
 * // GET /runs/:runId/events?token=…
 * export const GET = (request: Request, runId: string) => journalStreamResponse(journal, runId, { request, authorize });
 * ```
 */
export async function journalStreamResponse(journal: RunJournal, runId: string, options: JournalStreamResponseOptions): Promise<Response> {
  assertRunAccess('journalStreamResponse', options);
  checkKeepAlive(options.keepAliveMs);
  let after: number;
  let headers: Headers;
  try {
    const run = await authorizedRun(journal, runId, options);
    if (run.format > journal.format) throw new JournalSchemaError({ found: run.format, known: journal.format, runId });
    after = seqCursor(runId, requestCursor(options.after, options.request), run.lastSeq);
    // before anything is read: extra headers a Headers cannot take fail here, not with a reader subscribed
    headers = sseHeaders(runId, options.headers);
  } catch (error) {
    return errorResponse(error);
  }
  const stream = entryStream(journal, runId, after, (entry) => `id: ${entry.seq}\ndata: ${clientEntry(runId, entry).json}\n\n`, options.keepAliveMs);
  return new Response(stream, { status: 200, headers });
}

/** `keepAliveMs` is a delay a timer can wait for, or absent: a `TypeError` naming it otherwise. */
function checkKeepAlive(keepAliveMs: unknown): void {
  if (keepAliveMs === undefined) return;
  if (!isTimerDelay(keepAliveMs)) {
    throw optionError(`journalStreamResponse: options.keepAliveMs must be a number of milliseconds above 0 and at most ${MAX_TIMER_MS} (got ${typeof keepAliveMs === 'number' ? String(keepAliveMs) : typeof keepAliveMs})`);
  }
}

/** How many bytes may wait unread in a response before the next journal page waits. */
const BUFFERED_BYTES = 256 * 1024;

/**
 * A byte stream of `read$` entries with backpressure: the next page (at most
 * {@link BUFFERED_BYTES} of rows) is asked for only when the client has taken what was sent. The
 * entries of one page go out as one piece (framed text, encoded once). An error after the first
 * byte — a read failure, or `frame` refusing an entry — ends the stream with an SSE
 * `event: error` carrying `{ error: { name, message } }`; it never throws out of the reader.
 */
export function entryStream(
  journal: RunJournal,
  runId: string,
  after: number,
  frame: (entry: JournalEntry) => string,
  keepAliveMs?: number,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let subscription: Subscription | undefined;
  let waiting: (() => void) | undefined;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let lastWrite = Date.now();
  // set by the end of the stream, and by the client's cancel: nothing is enqueued after either
  let closed = false;
  const stop = (): void => {
    closed = true;
    subscription?.unsubscribe();
    clearInterval(keepAlive);
    waiting?.();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const ready = (): Promise<void> | undefined =>
          (controller.desiredSize ?? 1) > 0 ? undefined : new Promise<void>((resolve) => (waiting = resolve));
        // Entries of one page arrive in one synchronous burst: framed into one text, sent once.
        let pending = '';
        const send = (): void => {
          if (pending === '' || closed) return;
          controller.enqueue(encoder.encode(pending));
          pending = '';
        };
        const close = (): void => {
          if (closed) return;
          send();
          closed = true;
          clearInterval(keepAlive);
          controller.close();
        };
        const fail = (error: unknown): void => {
          if (closed) return;
          pending += `event: error\ndata: ${JSON.stringify(errorBody(error))}\n\n`;
          subscription?.unsubscribe();
          close();
        };
        subscription = journal.read$(runId, { after, ready, maxPageBytes: BUFFERED_BYTES }).subscribe({
          next: (entry) => {
            if (closed) return;
            let framed: string;
            try {
              framed = frame(entry);
            } catch (error) {
              fail(error);
              return;
            }
            lastWrite = Date.now();
            if (pending === '') queueMicrotask(send);
            pending += framed;
          },
          error: fail,
          complete: close,
        });
        if (keepAliveMs !== undefined && keepAliveMs > 0) {
          keepAlive = setInterval(() => {
            if (!closed && Date.now() - lastWrite >= keepAliveMs) controller.enqueue(encoder.encode(': keep-alive\n\n'));
          }, keepAliveMs);
          keepAlive.unref?.();
        }
      },
      pull() {
        const resume = waiting;
        waiting = undefined;
        resume?.();
      },
      cancel: stop,
    },
    { highWaterMark: BUFFERED_BYTES, size: (piece) => piece.byteLength },
  );
}
