/** A chat transport that survives a dropped response: it reconnects and splices the rest in. */
import { DefaultChatTransport, type HttpChatTransportInitOptions, type UIMessage, type UIMessageChunk } from 'ai';
import { RUN_ID_HEADER, decodeRunIdHeader, encodeRunIdHeader } from '../storage/index.js';
import { TransportLimitError } from './errors/transport-limit-error.js';

/**
 * Options of {@link DurableChatTransport}: those of the AI SDK's `DefaultChatTransport` (minus
 * `resumeStreamIsReplay`, always `false` here) and the reconnect policy.
 *
 * @example
 * ```ts
 * import type { DurableChatTransportOptions } from 'rxagent/ai-sdk';
 * const options: DurableChatTransportOptions<UIMessage> = { api: '/api/chat', maxReconnects: 8 };
 * ```
 */
export type DurableChatTransportOptions<M extends UIMessage> = HttpChatTransportInitOptions<M> & {
  /** Reconnect tries per dropped response (a reconnect that delivers an event resets the count). Default 8. */
  maxReconnects?: number;
  /**
   * Reconnects of one stream in all, whether or not they delivered events: past this many
   * without `[DONE]` the stream errors naming it (a server that drops every response after an
   * event no longer keeps the client reconnecting for ever) with a `TransportLimitError`. An
   * integer ≥ 0. Default 100.
   */
  maxTotalReconnects?: number;
  /**
   * The most bytes the transport holds of one SSE event not yet ended (a blank line): past it the
   * stream errors naming it (a `TransportLimitError`) and the response is cancelled (a server that
   * never ends an event no longer fills the client's memory). An integer ≥ 1. Default 16 MiB
   * (16,777,216).
   */
  maxEventBytes?: number;
  /** The first pause before a reconnect, in ms, doubled per try up to `maxDelayMs`. Default 250. */
  initialDelayMs?: number;
  /** The longest pause between tries, in ms. Default 4000. */
  maxDelayMs?: number;
  /**
   * Where `useChat`'s stop goes: when the stream is stopped before its end, the transport POSTs
   * here (with `x-rxagent-run-id` and the run's token) so the run itself stops, not only this
   * connection. A function of the chat id, a URL, or `false` (only the connection closes).
   * Default `${api}/${chatId}/stop`.
   */
  stopApi?: string | ((chatId: string) => string) | false;
};

/** What a response stream of one chat knows: its run, the run's token and the last SSE id it delivered. */
interface StreamState {
  chatId: string;
  runId: string | undefined;
  token?: string | undefined;
  lastId: string | undefined;
  /** Set once the stream reached `[DONE]` (a stop after it stops nothing). */
  ended?: boolean;
}

/** The header of a run's signed token (`RUN_TOKEN_HEADER` of `rxagent/durable`). */
const TOKEN_HEADER = 'x-rxagent-run-token';

const DONE = 'data: [DONE]';
const resolveValue = async <T>(value: T | (() => T | PromiseLike<T>) | PromiseLike<T> | undefined): Promise<T | undefined> =>
  typeof value === 'function' ? await (value as () => T | PromiseLike<T>)() : await value;
function headerRecord(headers: HeadersInit | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  if (headers !== undefined) new Headers(headers).forEach((value, name) => (record[name] = value));
  return record;
}
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `useChat`'s transport for durable runs (served by `resumeUIMessageStreamResponse`): it keeps the
 * run id (`x-rxagent-run-id`, decoded when it came encoded, and sent back encoded the same way:
 * see `encodeRunIdHeader` of `rxagent/durable`) and the last SSE `id` of the response, and when the connection
 * drops before `data: [DONE]` it GETs `${api}/${chatId}/stream` with `Last-Event-ID` and
 * `x-rxagent-run-id` (pausing 0.25 → 4 s, 8 tries per drop, 100 reconnects per stream in all) and
 * splices the rest into the same stream (an event longer than `maxEventBytes`, 16 MiB, or more
 * than `maxTotalReconnects` reconnects error it with a `TransportLimitError` naming the limit):
 * the client sees one uninterrupted message. `resumeStreamIsReplay` is `false`: a resume
 * continues after what this transport delivered (or replays the run when it delivered nothing).
 * `prepareReconnectToStreamRequest` still applies to reconnects. A run token the server sends
 * (`x-rxagent-run-token`) goes back on every reconnect and stop. When `useChat`'s stop is pressed
 * before the stream ended — on the first response or on a resumed one — the transport POSTs
 * `stopApi` (default `${api}/${chatId}/stop`) so the run itself stops.
 *
 * @example
 * ```ts
 * import { useChat } from '@ai-sdk/react';
 * import { DurableChatTransport } from 'rxagent/ai-sdk';
 * const chat = useChat({ transport: new DurableChatTransport({ api: '/api/chat' }), resume: true });
 * ```
 */
export class DurableChatTransport<M extends UIMessage> extends DefaultChatTransport<M> {
  readonly #maxReconnects: number;
  readonly #initialDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #maxTotalReconnects: number;
  readonly #maxEventBytes: number;
  readonly #userFetch: typeof globalThis.fetch | undefined;
  readonly #stopApi: string | ((chatId: string) => string) | false | undefined;
  /** Per chat: the stream state of its latest response. */
  readonly #streams = new Map<string, StreamState>();
  /** The state the next response (of `sendMessages` / `reconnectToStream`) belongs to. */
  readonly #next: { opening?: StreamState | undefined };

  constructor(options: DurableChatTransportOptions<M> = {}) {
    const { maxReconnects = 8, initialDelayMs = 250, maxDelayMs = 4000, maxTotalReconnects = 100, maxEventBytes = 16 * 2 ** 20, stopApi, ...transport } = options;
    const next: { opening?: StreamState | undefined } = {};
    const userFetch = transport.fetch;
    super({
      ...transport,
      resumeStreamIsReplay: false,
      // Records the run id of each response (the header the durable endpoints send).
      fetch: async (input, init) => {
        const response = await (userFetch ?? globalThis.fetch)(input, init);
        const runId = decodeRunIdHeader(response.headers.get(RUN_ID_HEADER));
        const token = response.headers.get(TOKEN_HEADER);
        if (next.opening !== undefined && runId !== undefined) next.opening.runId = runId;
        if (next.opening !== undefined && token !== null) next.opening.token = token;
        return response;
      },
    });
    this.#next = next;
    this.#userFetch = userFetch;
    if (stopApi !== undefined && stopApi !== false && typeof stopApi !== 'string' && typeof stopApi !== 'function') {
      throw new TypeError(`DurableChatTransport: stopApi must be a URL, a function of the chat id, or false (got ${typeof stopApi})`);
    }
    this.#stopApi = stopApi;
    for (const [name, value] of [['maxReconnects', maxReconnects], ['initialDelayMs', initialDelayMs], ['maxDelayMs', maxDelayMs], ['maxTotalReconnects', maxTotalReconnects]] as const) {
      if (!Number.isInteger(value) || value < 0) throw new RangeError(`DurableChatTransport: ${name} must be an integer ≥ 0 (got ${String(value)})`);
    }
    if (!Number.isSafeInteger(maxEventBytes) || maxEventBytes < 1) {
      throw new RangeError(`DurableChatTransport: maxEventBytes must be an integer ≥ 1 (got ${String(maxEventBytes)})`);
    }
    this.#maxTotalReconnects = maxTotalReconnects;
    this.#maxEventBytes = maxEventBytes;
    this.#maxReconnects = maxReconnects;
    this.#initialDelayMs = initialDelayMs;
    this.#maxDelayMs = maxDelayMs;
  }

  /** Sends the chat's messages (as `DefaultChatTransport` does) and starts following the run it answers with. */
  override sendMessages(options: Parameters<DefaultChatTransport<M>['sendMessages']>[0]): Promise<ReadableStream<UIMessageChunk>> {
    const state: StreamState = { chatId: options.chatId, runId: undefined, lastId: undefined };
    this.#streams.set(options.chatId, state);
    this.#next.opening = state;
    this.#stopOnAbort(state, options.abortSignal);
    return super.sendMessages(options);
  }

  /** Reconnects to the chat's run, asking for the chunks after the last one this transport received. */
  override reconnectToStream(options: Parameters<DefaultChatTransport<M>['reconnectToStream']>[0]): Promise<ReadableStream<UIMessageChunk> | null> {
    const known = this.#streams.get(options.chatId);
    const state: StreamState = known ?? { chatId: options.chatId, runId: undefined, lastId: undefined };
    state.ended = false;
    this.#streams.set(options.chatId, state);
    this.#next.opening = state;
    this.#stopOnAbort(state, (options as { abortSignal?: AbortSignal }).abortSignal);
    const headers = { ...headerRecord(options.headers as HeadersInit | undefined), ...this.#resumeHeaders(state) };
    return super.reconnectToStream({ ...options, headers });
  }

  /** The response's UI chunks, with the run's reconnections spliced in (no chunk twice, none lost). */
  protected override processResponseStream(stream: ReadableStream<Uint8Array>): ReadableStream<UIMessageChunk> {
    const state = this.#next.opening ?? { chatId: '', runId: undefined, lastId: undefined };
    this.#next.opening = undefined;
    return super.processResponseStream(this.#spliced(stream, state));
  }

  #resumeHeaders(state: StreamState): Record<string, string> {
    return {
      ...(state.lastId === undefined ? {} : { 'last-event-id': state.lastId }),
      ...this.#runHeaders(state),
    };
  }

  #runHeaders(state: StreamState): Record<string, string> {
    return {
      ...(state.runId === undefined ? {} : { [RUN_ID_HEADER]: encodeRunIdHeader(state.runId) }),
      ...(state.token === undefined ? {} : { [TOKEN_HEADER]: state.token }),
    };
  }

  /** When `signal` (useChat's stop) aborts before the stream ended, POSTs the stop endpoint for its run. */
  #stopOnAbort(state: StreamState, signal: AbortSignal | undefined): void {
    if (signal === undefined || this.#stopApi === false) return;
    signal.addEventListener(
      'abort',
      () => {
        if (state.ended === true) return;
        void this.#stop(state).catch(() => undefined);
      },
      { once: true },
    );
  }

  /** POST `stopApi` with the run's id and token (and the transport's headers and credentials). */
  async #stop(state: StreamState): Promise<void> {
    const api = this.#stopApi;
    const url =
      typeof api === 'function' ? api(state.chatId) : typeof api === 'string' ? api : `${this.api.replace(/\/$/, '')}/${encodeURIComponent(state.chatId)}/stop`;
    const credentials = await resolveValue(this.credentials);
    const headers = { ...headerRecord(await resolveValue(this.headers)), ...this.#runHeaders(state) };
    const response = await (this.#userFetch ?? globalThis.fetch)(url, { method: 'POST', headers, ...(credentials === undefined ? {} : { credentials }) });
    await response.body?.cancel().catch(() => undefined);
  }

  /**
   * The response's bytes, complete SSE events only, followed — when the connection drops before
   * `[DONE]` — by the rest from a reconnect (a partial event at the cut is dropped: the server
   * sends it again after the last complete id).
   */
  #spliced(first: ReadableStream<Uint8Array>, state: StreamState): ReadableStream<Uint8Array> {
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let reader = first.getReader();
    let buffer = '';
    // bytes received since the last event ended (bounded by maxEventBytes), and reconnects in all
    let pending = 0;
    let reconnects = 0;
    let done = false;
    const abort = new AbortController();
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        for (let tries = 0; ; ) {
          let part: ReadableStreamReadResult<Uint8Array>;
          try {
            part = await reader.read();
          } catch {
            part = { done: true, value: undefined };
          }
          if (!part.done || buffer.endsWith('\r')) {
            // SSE's line ends are LF, CRLF or CR (a proxy may rewrite them): read as LF. A CR that ends
            // the bytes so far may be half a CRLF: held back until the next bytes, or the body's end.
            if (!part.done) {
              buffer += decoder.decode(part.value, { stream: true });
              pending += part.value.byteLength;
            }
            const held = !part.done && buffer.endsWith('\r') ? '\r' : '';
            const complete = this.#takeEvents(buffer.slice(0, buffer.length - held.length).replace(/\r\n?/g, '\n'), state);
            buffer = complete.rest + held;
            if (complete.events !== '') {
              controller.enqueue(encoder.encode(complete.events));
              // an event ended in these bytes: what is held is what came after it
              pending = encoder.encode(buffer).byteLength;
            }
            if (!complete.done && pending > this.#maxEventBytes) {
              done = true;
              controller.error(new TransportLimitError('maxEventBytes', this.#maxEventBytes, state.chatId));
              abort.abort();
              await reader.cancel().catch(() => undefined);
              return;
            }
            if (complete.done) {
              done = true;
              state.ended = true;
              controller.close();
              await reader.cancel().catch(() => undefined);
            }
            // Progress: the next drop gets its full count of tries again.
            if (complete.events !== '') tries = 0;
            if (complete.events !== '' || done) return;
            if (!part.done) continue;
          }
          // The body ended without [DONE]: the connection dropped. Reconnect after the last id.
          buffer = '';
          pending = 0;
          if (done) return;
          if (tries >= this.#maxReconnects) {
            controller.error(new Error(`DurableChatTransport: the response for chat ${state.chatId} dropped and ${tries} reconnects failed`));
            return;
          }
          if (reconnects >= this.#maxTotalReconnects) {
            controller.error(new TransportLimitError('maxTotalReconnects', this.#maxTotalReconnects, state.chatId));
            return;
          }
          await sleep(Math.min(this.#initialDelayMs * 2 ** tries, this.#maxDelayMs));
          // cancelled while it waited (the user left, or stopped): no reconnect carries the run's token out
          if (abort.signal.aborted) return;
          tries += 1;
          reconnects += 1;
          const next = await this.#reconnect(state, abort.signal).catch((error: unknown) => error as Error);
          if (next === null) {
            controller.close();
            return;
          }
          if (next instanceof ReadableStream) {
            reader = next.getReader();
          } else if ((next as { fatal?: boolean }).fatal === true) {
            controller.error(next);
            return;
          }
        }
      },
      cancel: async () => {
        abort.abort();
        await reader.cancel().catch(() => undefined);
      },
    });
  }

  /** Complete events of `text` (ids noted), what is left, and whether `[DONE]` came. */
  #takeEvents(text: string, state: StreamState): { events: string; rest: string; done: boolean } {
    let events = '';
    let start = 0;
    for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n', start)) {
      const event = text.slice(start, end + 2);
      start = end + 2;
      if (event.startsWith(DONE) || event.includes(`\n${DONE}`)) return { events: events + event, rest: '', done: true };
      const id = /^id: ?(.*)$/m.exec(event)?.[1];
      if (id !== undefined) state.lastId = id;
      events += event;
    }
    return { events, rest: text.slice(start), done: false };
  }

  /** GET `${api}/${chatId}/stream` with the cursor headers: a body, `null` (204: nothing to resume), or an error. */
  async #reconnect(state: StreamState, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | null> {
    const baseHeaders = { ...headerRecord(await resolveValue(this.headers)) };
    const body = (await resolveValue(this.body)) as Record<string, unknown> | undefined;
    const credentials = await resolveValue(this.credentials);
    const prepared = await this.prepareReconnectToStreamRequest?.({
      api: this.api,
      id: state.chatId,
      body,
      headers: baseHeaders,
      credentials,
      requestMetadata: undefined,
    });
    const url = prepared?.api ?? `${this.api.replace(/\/$/, '')}/${encodeURIComponent(state.chatId)}/stream`;
    const headers = { ...(prepared?.headers === undefined ? baseHeaders : headerRecord(prepared.headers)), ...this.#resumeHeaders(state) };
    const response = await (this.#userFetch ?? globalThis.fetch)(url, {
      method: 'GET',
      headers,
      ...((prepared?.credentials ?? credentials) === undefined ? {} : { credentials: prepared?.credentials ?? credentials }),
      signal,
    });
    if (response.status === 204) return null;
    if (!response.ok || response.body === null) {
      const error = new Error(`DurableChatTransport: reconnecting chat ${state.chatId} failed with HTTP ${response.status}`);
      // A request the server refuses (unknown run, bad cursor) will not improve by retrying.
      if (response.status >= 400 && response.status < 500) Object.assign(error, { fatal: true });
      throw error;
    }
    const runId = decodeRunIdHeader(response.headers.get(RUN_ID_HEADER));
    if (runId !== undefined) state.runId = runId;
    const token = response.headers.get(TOKEN_HEADER);
    if (token !== null) state.token = token;
    return response.body;
  }
}
