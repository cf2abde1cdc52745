import { readFileSync } from 'node:fs';

/**
 * One request a {@link replayFetch} function answered.
 *
 * @example
 * ```ts
 * expect(replay.requests[0]?.body).toMatchObject({ model: 'gpt-4.1', stream: true });
 * ```
 */
export interface ReplayRequest {
  /** The source's URL. */
  url: string;
  /** The HTTP method. */
  method: string;
  /** HTTP headers. */
  headers: Record<string, string>;
  /** The body parsed as JSON when it is JSON text, else as sent. */
  body: unknown;
  /** The request's abort signal, to assert that a run aborted the provider request. */
  signal: AbortSignal | undefined;
}

/**
 * Options of {@link replayFetch}.
 *
 * @example
 * ```ts
 * const options: ReplayFetchOptions = { delayMs: 5, headers: { 'x-request-id': 'req_1' } };
 * ```
 */
export interface ReplayFetchOptions {
  /** HTTP status. Default 200. With 400 and above the lines are sent as one JSON body. */
  status?: number;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Wait this long before each event (real time). Default 0: events are served on demand. */
  delayMs?: number;
}

/**
 * A `fetch` that replays a recording, plus what it was asked.
 *
 * @example
 * ```ts
 * const replay: ReplayFetch = replayFetch(lines);
 * replay.requests.length; // 0 until the provider calls it
 * ```
 */
export type ReplayFetch = typeof globalThis.fetch & {
  /** Every request answered so far, in order. */
  readonly requests: ReplayRequest[];
};

/**
 * Splits recorded chunks into SSE payload lines: one JSON payload per non-empty line.
 *
 * @example
 * ```ts
 * toEventLines('{"a":1}\n\n{"b":2}\n'); // ['{"a":1}', '{"b":2}']
 * ```
 */
export function toEventLines(chunks: string | readonly string[]): string[] {
  const text = typeof chunks === 'string' ? chunks : chunks.join('\n');
  return text.split('\n').map((line) => line.replace(/\r$/, '')).filter((line) => line.trim() !== '');
}

/**
 * Creates a `fetch` that answers every request with a recorded provider stream as
 * server-sent events: each non-empty line becomes `data: <line>\n\n`, then `data: [DONE]\n\n`
 * (the format of the AI SDK's `*.chunks.txt` fixtures). Give it to the real provider package,
 * so the recording goes through the provider's own parsing into V4 stream parts. The body is
 * produced one event per read and is errored when the request's signal aborts.
 *
 * @example
 * ```ts
 * import { createOpenAI } from '@ai-sdk/openai';
 * import { loadFixture, replayFetch } from 'rxagent/testing';
 * const replay = replayFetch(loadFixture('fixtures/openai-text.chunks.txt'));
 * const model = createOpenAI({ apiKey: 'test', fetch: replay }).chat('gpt-4.1-nano');
 * ```
 */
export function replayFetch(chunks: string | readonly string[], options: ReplayFetchOptions = {}): ReplayFetch {
  const lines = toEventLines(chunks);
  const requests: ReplayRequest[] = [];
  const status = options.status ?? 200;
  const encoder = new TextEncoder();

  const replay = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = await describeRequest(input, init);
    requests.push(request);
    const { signal } = request;
    if (signal?.aborted) throw signal.reason;

    if (status >= 400) {
      return new Response(lines.join('\n'), {
        status,
        headers: { 'content-type': 'application/json', ...options.headers },
      });
    }

    if (!asksForStream(request)) {
      throw new TypeError(
        `replayFetch replays a streamed response, and the request to ${request.url} asks for a non-streamed one (its body has no stream: true). ` +
          "An agent's generate() calls the provider's doGenerate when no output processor reads the stream: pass generateWith: 'doStream' to replay a recording through generate().",
      );
    }
    const events = [...lines.map((line) => `data: ${line}\n\n`), 'data: [DONE]\n\n'];
    let index = 0;
    let onAbort: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>(
      {
        start(controller) {
          onAbort = () => controller.error(signal?.reason);
          signal?.addEventListener('abort', onAbort, { once: true });
        },
        async pull(controller) {
          if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
          if (signal?.aborted) return;
          const event = events[index++];
          if (event === undefined) {
            if (onAbort) signal?.removeEventListener('abort', onAbort);
            controller.close();
            return;
          }
          controller.enqueue(encoder.encode(event));
        },
        cancel() {
          if (onAbort) signal?.removeEventListener('abort', onAbort);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, {
      status,
      headers: {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        ...options.headers,
      },
    });
  };
  return Object.assign(replay, { requests });
}

async function describeRequest(input: string | URL | Request, init: RequestInit | undefined): Promise<ReplayRequest> {
  const request = input instanceof Request ? input : undefined;
  const rawBody = init?.body ?? (request ? await request.clone().text() : undefined);
  const headers: Record<string, string> = {};
  new Headers(init?.headers ?? request?.headers).forEach((value, key) => {
    headers[key] = value;
  });
  return {
    url: request ? request.url : input.toString(),
    method: init?.method ?? request?.method ?? 'GET',
    headers,
    body: parseBody(rawBody),
    signal: init?.signal ?? request?.signal ?? undefined,
  };
}

/**
 * Whether a provider request asks for a stream: `stream: true` in its JSON body (OpenAI, Anthropic,
 * Groq, Mistral, …) or a streaming endpoint in its URL (Google's `:streamGenerateContent`,
 * Bedrock's `converse-stream`). A request without a JSON object body is taken as asking for one.
 */
function asksForStream(request: ReplayRequest): boolean {
  const { body, url } = request;
  if (typeof body !== 'object' || body === null) return true;
  return (body as { stream?: unknown }).stream === true || /stream/i.test(url);
}

function parseBody(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/**
 * Reads a `*.chunks.txt` recording: its non-empty lines, one SSE payload each.
 *
 * @example
 * ```ts
 * import { loadFixture, replayFetch } from 'rxagent/testing';
 * const replay = replayFetch(loadFixture('test/fixtures/anthropic-text.chunks.txt'));
 * ```
 */
export function loadFixture(path: string): string[] {
  return toEventLines(readFileSync(path, 'utf8'));
}
