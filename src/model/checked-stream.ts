/**
 * Checks on what a provider hands back from `doStream`, so a broken provider becomes one
 * `InvalidModelResponseError` naming it and the problem — never a `TypeError` deep in the loop or
 * an unhandled rejection.
 */
import { InvalidModelResponseError } from './errors/invalid-model-response-error.js';
import type { Observable } from 'rxjs';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { jsonProblem, messageOf, partProblem } from './checked-part.js';

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

/**
 * An `InvalidModelResponseError` for `model` and `problem`; `cause` is kept when it can be written
 * as JSON (the error reaches the client in an `error` chunk).
 */
export function invalidResponse(model: ModelLike, problem: string, cause?: unknown): InvalidModelResponseError {
  const modelId = field(model, 'modelId');
  return new InvalidModelResponseError({
    provider: field(model, 'provider') ?? 'unknown provider',
    ...(modelId === undefined ? {} : { modelId }),
    problem,
    ...(cause === undefined || jsonProblem(cause) !== undefined ? {} : { cause }),
  });
}

/**
 * What a provider failed with (`doStream`/`doGenerate` threw or rejected, its stream errored), as
 * the run passes it on: the provider's error unchanged (an `APICallError` stays one), unless it
 * cannot be read or written as JSON (a Proxy that throws, a BigInt, a cycle) — then an
 * `InvalidModelResponseError` saying so, without it.
 */
export function providerFailure(model: ModelLike, error: unknown): unknown {
  const problem = jsonProblem(error);
  return problem === undefined ? error : invalidResponse(model, `it failed with an error that ${problem}.`);
}

/**
 * The request and response metadata of a `doStream` or `doGenerate` result (`what` names it), read
 * once: each kept when it is an object. A getter that throws is the provider's fault.
 */
export function callMetadataOf(
  result: object,
  model: ModelLike,
  what: string,
): { request: { url?: string; body?: unknown } | undefined; response: { headers?: Record<string, string> } | undefined } {
  const read = (key: 'request' | 'response'): object | undefined => {
    let value: unknown;
    try {
      value = (result as Record<string, unknown>)[key];
    } catch (error) {
      throw invalidResponse(model, `reading ${what}'s result.${key} threw: ${messageOf(error)}`, error);
    }
    return typeof value === 'object' && value !== null ? value : undefined;
  };
  return { request: read('request'), response: read('response') };
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
  let getReader: unknown;
  try {
    getReader = typeof stream === 'object' && stream !== null ? (stream as { getReader?: unknown }).getReader : undefined;
  } catch (error) {
    throw invalidResponse(model, `reading doStream()'s result.stream.getReader threw: ${messageOf(error)}`, error);
  }
  if (typeof stream !== 'object' || stream === null || typeof getReader !== 'function') {
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
    throw invalidResponse(model, `the stream's getReader() threw: ${messageOf(error)}`, error);
  }
  let read: unknown;
  try {
    read = typeof reader === 'object' && reader !== null ? (reader as { read?: unknown }).read : undefined;
  } catch (error) {
    throw invalidResponse(model, `reading the stream's reader.read threw: ${messageOf(error)}`, error);
  }
  if (typeof read !== 'function') {
    throw invalidResponse(model, `the stream's getReader() returned ${shape(reader)} without read().`);
  }
  return reader as ReadableStreamDefaultReader<T>;
}

/** The problem of a value that is not a part object with a string `type`. */
const notAPart = (value: unknown): string => `the stream sent ${shape(value)} where a stream part ({ type, … }) was expected.`;

/**
 * Checks one `read()` result: `{ done: true }` or `{ done: false, value: <part object with a string type> }`.
 * One `typeof` check per part on the hot path; a getter that throws is the provider's fault.
 */
export function checkedRead<T>(next: unknown, model: ModelLike): ReadableStreamReadResult<T> {
  if (typeof next !== 'object' || next === null) {
    throw invalidResponse(model, `the stream's read() resolved with ${shape(next)}.`);
  }
  const result = next as ReadableStreamReadResult<T>;
  let value: unknown;
  try {
    if (result.done) return result;
    value = result.value;
    if (typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string') return result;
  } catch (error) {
    throw invalidResponse(model, `reading what the stream's read() resolved with threw: ${messageOf(error)}`, error);
  }
  throw invalidResponse(model, notAPart(value));
}

/**
 * What a model's `OBSERVABLE_STREAM` function returned, when it is an Observable (it has
 * `subscribe`: any RxJS copy's); else an `InvalidModelResponseError` naming `model`.
 */
export function checkedObservable<T>(returned: unknown, model: ModelLike): Observable<T> {
  let subscribe: unknown;
  try {
    subscribe = typeof returned === 'object' && returned !== null ? (returned as { subscribe?: unknown }).subscribe : undefined;
  } catch (error) {
    throw invalidResponse(model, `its OBSERVABLE_STREAM function returned an object that throws where it is read (${messageOf(error)}).`);
  }
  if (typeof subscribe !== 'function') throw invalidResponse(model, `its OBSERVABLE_STREAM function returned ${shape(returned)}, not an Observable.`);
  return returned as Observable<T>;
}

/**
 * Checks one value a model's Observable emitted (`OBSERVABLE_STREAM`, of any spec version) as
 * {@link checkedRead} checks one read from its web stream: a part object with a string `type`;
 * a getter or a Proxy that throws while it is read is the model's fault.
 */
export function checkedValue<T>(value: unknown, model: ModelLike): T {
  try {
    if (typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string') return value as T;
  } catch (error) {
    throw invalidResponse(model, `reading a part the stream sent threw: ${messageOf(error)}`, error);
  }
  throw invalidResponse(model, notAPart(value));
}

/**
 * Checks the fields of one V4 part that passed {@link checkedRead} or {@link checkedValue} (see
 * `partProblem`): the one check every V4 part takes where it enters the run, whichever way the
 * model streams it. One `typeof` check per text delta without metadata.
 */
export function checkedPart(part: LanguageModelV4StreamPart, model: ModelLike): LanguageModelV4StreamPart {
  const problem = partProblem(part);
  if (problem !== undefined) throw invalidResponse(model, `the stream sent ${problem}.`);
  return part;
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
