/**
 * Checks on what a provider hands back from `doStream`, so a broken provider becomes one
 * `InvalidModelResponseError` naming it and the problem — never a `TypeError` deep in the loop or
 * an unhandled rejection.
 */
import { InvalidModelResponseError } from './errors/invalid-model-response-error.js';

/** The model fields used to name it in an error (read defensively: they may be getters). */
export interface ModelLike {
  readonly provider?: unknown;
  readonly modelId?: unknown;
}

function field(model: ModelLike, key: 'provider' | 'modelId'): string | undefined {
  try {
    const value = model[key];
    return typeof value === 'string' && value !== '' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** An `InvalidModelResponseError` for `model` and `problem`. */
export function invalidResponse(model: ModelLike, problem: string, cause?: unknown): InvalidModelResponseError {
  const modelId = field(model, 'modelId');
  return new InvalidModelResponseError({
    provider: field(model, 'provider') ?? 'unknown provider',
    ...(modelId === undefined ? {} : { modelId }),
    problem,
    ...(cause === undefined ? {} : { cause }),
  });
}

function shape(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** `result.stream` when `result` is `{ stream: <something with getReader()> }`; else throws. */
export function streamOf<T>(result: unknown, model: ModelLike): ReadableStream<T> {
  if (typeof result !== 'object' || result === null) {
    throw invalidResponse(model, `doStream() resolved with ${shape(result)}, not { stream: ReadableStream }.`);
  }
  let stream: unknown;
  try {
    stream = (result as { stream?: unknown }).stream;
  } catch (error) {
    throw invalidResponse(model, 'reading doStream()\'s result.stream threw.', error);
  }
  if (typeof stream !== 'object' || stream === null || typeof (stream as { getReader?: unknown }).getReader !== 'function') {
    const what = stream === undefined ? 'an object without a stream' : `{ stream: ${shape(stream)} without getReader() }`;
    throw invalidResponse(model, `doStream() resolved with ${what}, not { stream: ReadableStream }.`);
  }
  return stream as ReadableStream<T>;
}

/** `stream.getReader()`, with a throw or a reader without `read()` reported as the provider's fault. */
export function readerOf<T>(stream: ReadableStream<T>, model: ModelLike): ReadableStreamDefaultReader<T> {
  let reader: unknown;
  try {
    reader = stream.getReader();
  } catch (error) {
    throw invalidResponse(model, `the stream's getReader() threw: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  if (typeof reader !== 'object' || reader === null || typeof (reader as { read?: unknown }).read !== 'function') {
    throw invalidResponse(model, `the stream's getReader() returned ${shape(reader)} without read().`);
  }
  return reader as ReadableStreamDefaultReader<T>;
}

/**
 * Checks one `read()` result: `{ done: true }` or `{ done: false, value: <part object with a string type> }`.
 * One `typeof` check per part on the hot path.
 */
export function checkedRead<T>(next: unknown, model: ModelLike): ReadableStreamReadResult<T> {
  if (typeof next !== 'object' || next === null) {
    throw invalidResponse(model, `the stream's read() resolved with ${shape(next)}.`);
  }
  const result = next as ReadableStreamReadResult<T>;
  if (result.done) return result;
  const value = result.value as unknown;
  if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') {
    throw invalidResponse(model, `the stream sent ${shape(value)} where a stream part ({ type, … }) was expected.`);
  }
  return result;
}

/** Cancels `reader` ignoring whatever a broken reader throws or rejects with. */
export function cancelQuietly(reader: { cancel?: (reason?: unknown) => unknown } | undefined, reason?: unknown): void {
  if (reader === undefined) return;
  try {
    const pending = reader.cancel?.(reason);
    if (pending !== null && typeof pending === 'object' && typeof (pending as PromiseLike<unknown>).then === 'function') {
      (pending as PromiseLike<unknown>).then(undefined, () => undefined);
    }
  } catch {
    // a reader whose cancel throws: nothing more to release
  }
}
