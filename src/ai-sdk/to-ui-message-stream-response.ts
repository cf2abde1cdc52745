/** An rxagent run as an HTTP `Response` carrying the UI message stream as server-sent events. */
import { createUIMessageStreamResponse } from 'ai';
import type { Observable } from 'rxjs';
import type { ChunkType } from '../contract/index.js';
import { toUIMessageStream, type ToUIMessageStreamOptions } from './to-ui-message-stream.js';

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
  /** Send an SSE comment after this many idle milliseconds (proxies close quiet connections). */
  keepAliveMs?: number;
  /** Receives a copy of the SSE text stream (logging, resumable streams). */
  consumeSseStream?: (options: { stream: ReadableStream<string> }) => PromiseLike<void> | void;
}

/**
 * A `Response` streaming the run as the AI SDK UI message stream protocol: `data: <chunk JSON>`
 * server-sent events, `data: [DONE]` at the end, and the `x-vercel-ai-ui-message-stream: v1`
 * header — what an unchanged `useChat` client expects from its `/api/chat` endpoint. Built on the
 * AI SDK's own `createUIMessageStreamResponse`. Cancelling the body (client disconnect)
 * unsubscribes the run.
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
  return createUIMessageStreamResponse({
    stream: toUIMessageStream(chunks$, streamOptions),
    ...(status === undefined ? {} : { status }),
    ...(statusText === undefined ? {} : { statusText }),
    ...(headers === undefined ? {} : { headers }),
    ...(keepAliveMs === undefined ? {} : { keepAliveMs }),
    ...(consumeSseStream === undefined ? {} : { consumeSseStream }),
  });
}
