/** An rxagent run as an HTTP `Response` carrying the UI message stream as server-sent events. */
import { createUIMessageStreamResponse } from 'ai';
import type { Observable } from 'rxjs';
import type { ChunkType } from '../contract/index.js';
import { toUIMessageStream, type ToUIMessageStreamOptions } from './to-ui-message-stream.js';
import { optionError } from '../loop/index.js';
import { keepAliveInterval, withKeepAlive } from './internal/keep-alive.js';

/**
 * The response options of {@link toUIMessageStreamResponse}: `ResponseInit` (status, headers…),
 * the AI SDK's SSE options, and the stream options of `toUIMessageStream`.
 *
 * @example
 * ```ts
 * import type { UIMessageStreamResponseOptions } from 'rxagent/ai-sdk';
 * const init: UIMessageStreamResponseOptions = { headers: { 'x-run': 'demo' }, keepAliveMs: 15_000 };
 * ```
 */
export interface UIMessageStreamResponseOptions extends ResponseInit, ToUIMessageStreamOptions {
  /**
   * Send an SSE comment (`: keep-alive`) every this many milliseconds while the run streams, so a
   * proxy does not close a connection that is quiet during a long tool; `false` sends none. Above 0
   * and at most 2^31 − 1. Default 15,000. The timer is cleared when the body ends or is cancelled.
   */
  keepAliveMs?: number | false;
  /** Receives a copy of the SSE text stream (logging, resumable streams). */
  consumeSseStream?: (options: { stream: ReadableStream<string> }) => PromiseLike<void> | void;
}

/**
 * A `Response` streaming the run as the AI SDK UI message stream protocol: `data: <chunk JSON>`
 * server-sent events, `data: [DONE]` at the end, and the `x-vercel-ai-ui-message-stream: v1`
 * header — what an unchanged `useChat` client expects from its `/api/chat` endpoint. Built on the
 * AI SDK's own `createUIMessageStreamResponse`. Cancelling the body (client disconnect)
 * unsubscribes the run. An init no `Response` can carry — a header name or value a header cannot
 * hold (CR, LF, NUL, past Latin-1: a chat id from the body put in a header), a `status` outside
 * 200–599 or one without a body (204, 205, 304), a `statusText` with CR/LF, a `keepAliveMs` no
 * timer can wait for — is a `TypeError` naming the option (not the value), thrown before the run
 * is subscribed. A `: keep-alive` comment goes out every `keepAliveMs` (15 s by default; `false`:
 * none), as `resumeUIMessageStreamResponse` sends it.
 *
 * @example
 * ```ts
 * import { fromUIMessages, toUIMessageStreamResponse } from 'rxagent/ai-sdk';
 * export async function POST(request: Request): Promise<Response> {
 *   const { messages } = await request.json();
 *   return toUIMessageStreamResponse(agent.stream$(fromUIMessages(messages), { abortSignal: request.signal }));
 * }
 * ```
 */
export function toUIMessageStreamResponse(chunks$: Observable<ChunkType>, init: UIMessageStreamResponseOptions = {}): Response {
  const { status, statusText, headers, keepAliveMs, consumeSseStream, ...streamOptions } = init;
  const keepAlive = checkResponseInit(status, statusText, headers, keepAliveMs);
  const stream = toUIMessageStream(chunks$, streamOptions);
  // a consumeSseStream that throws: its error, and the run it started is not left running unread
  let thrown: { error: unknown } | undefined;
  const consume =
    consumeSseStream === undefined
      ? undefined
      : (options: { stream: ReadableStream<string> }): PromiseLike<void> | void => {
          try {
            return consumeSseStream(options);
          } catch (error) {
            thrown = { error };
            void options.stream.cancel(error).catch(() => undefined);
          }
        };
  const response = createUIMessageStreamResponse({
    stream,
    ...(status === undefined ? {} : { status }),
    ...(statusText === undefined ? {} : { statusText }),
    ...(headers === undefined ? {} : { headers }),
    ...(consume === undefined ? {} : { consumeSseStream: consume }),
  });
  if (thrown !== undefined) {
    // both branches of the SSE copy cancelled: the run is unsubscribed
    void response.body?.cancel(thrown.error).catch(() => undefined);
    throw thrown.error;
  }
  if (keepAlive === false || response.body === null) return response;
  // the keep-alive the resumed response sends too (one interval timer, nothing per chunk)
  return new Response(withKeepAlive(response.body, keepAlive), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** Statuses a body cannot go with. */
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([204, 205, 304]);
/** The longest delay a timer can wait for. */

/**
 * `TypeError` (naming the option, not the value: it may be a client's) for an init no `Response`
 * can carry; else the keep-alive interval (`false`: none).
 */
function checkResponseInit(status: unknown, statusText: unknown, headers: HeadersInit | undefined, keepAliveMs: unknown): number | false {
  if (status !== undefined && (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599 || NULL_BODY_STATUSES.has(status))) {
    throw optionError('toUIMessageStreamResponse: init.status must be an integer from 200 to 599 that a body can go with (not 204, 205 or 304).');
  }
  const keepAlive = keepAliveInterval('toUIMessageStreamResponse: init', keepAliveMs);
  try {
    new Headers(headers);
  } catch {
    throw optionError('toUIMessageStreamResponse: init.headers cannot be sent: a name that is not a token, or a value with CR, LF, NUL or characters past Latin-1 (encode values that come from a request).');
  }
  if (statusText !== undefined) {
    try {
      new Response(null, { statusText: statusText as string });
    } catch {
      throw optionError('toUIMessageStreamResponse: init.statusText must be a reason phrase (no CR, LF or characters past Latin-1).');
    }
  }
  return keepAlive;
}
