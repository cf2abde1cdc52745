/**
 * A model call through `doGenerate`, as the same events a `doStream` call emits: `call-info`, then
 * the answer as stream parts (each text and reasoning block as one start/delta/end, every other
 * content part as it is, then `finish`). `generate()` takes this path when nothing reads the
 * stream (see `generateWith` in the agent's call options): the results and hooks are those of a
 * streamed answer; only the granularity of the deltas differs (one per block).
 */
import { Observable } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4GenerateResult, LanguageModelV4StreamPart, LanguageModelV4Usage } from '@ai-sdk/provider';
import { callMetadataOf, invalidResponse, providerFailure, type ModelLike } from './checked-stream.js';
import { messageOf, partProblem } from './checked-part.js';
import { InvalidModelResponseError } from './errors/invalid-model-response-error.js';
import { CallAbort } from './internal/call-abort.js';
import type { CallInfo, ModelEvent } from './model-events.js';

/** One content part as stream parts: text and reasoning as a start/delta/end bracket (no delta when empty). */
function contentParts(content: LanguageModelV4Content, index: number, parts: LanguageModelV4StreamPart[]): void {
  if (content.type === 'text') {
    const id = `text-${index}`;
    parts.push({ type: 'text-start', id });
    if (content.text !== '') parts.push({ type: 'text-delta', id, delta: content.text });
    parts.push({
      type: 'text-end',
      id,
      ...(content.citations === undefined ? {} : { citations: content.citations }),
      ...(content.providerMetadata === undefined ? {} : { providerMetadata: content.providerMetadata }),
    });
    return;
  }
  if (content.type === 'reasoning') {
    const id = `reasoning-${index}`;
    parts.push({ type: 'reasoning-start', id });
    if (content.text !== '') parts.push({ type: 'reasoning-delta', id, delta: content.text });
    parts.push({ type: 'reasoning-end', id, ...(content.providerMetadata === undefined ? {} : { providerMetadata: content.providerMetadata }) });
    return;
  }
  parts.push(content);
}

/** A V4 usage whose every count is unknown (what `fromV4Usage` makes of a usage that is no object). */
const unknownUsage = (): LanguageModelV4Usage => ({
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
});

/** The parts of `result` (an object), its fields read once; a field's getter may throw. */
function resultParts(result: object, model: ModelLike): LanguageModelV4StreamPart[] {
  const { content, finishReason, usage, providerMetadata, response, warnings } = result as Partial<LanguageModelV4GenerateResult>;
  if (!Array.isArray(content)) throw invalidResponse(model, 'doGenerate() resolved without a content array.');
  // a usage that is no object is unknown as a whole, as a streamed finish's (`fromV4Usage`)
  if (typeof finishReason !== 'object' || finishReason === null) throw invalidResponse(model, 'doGenerate() resolved without finishReason.');
  // warnings the provider left out are none; anything else is checked as a stream-start's
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: warnings === undefined ? [] : warnings }];
  const id: unknown = response?.id;
  const timestamp: unknown = response?.timestamp;
  const modelId: unknown = response?.modelId;
  if (id !== undefined || timestamp !== undefined || modelId !== undefined) {
    parts.push({
      type: 'response-metadata',
      ...(id === undefined ? {} : { id }),
      ...(timestamp === undefined ? {} : { timestamp }),
      ...(modelId === undefined ? {} : { modelId }),
    } as LanguageModelV4StreamPart);
  }
  content.forEach((part: unknown, index) => {
    if (typeof part !== 'object' || part === null || typeof (part as { type?: unknown }).type !== 'string') {
      throw invalidResponse(model, `doGenerate()'s content[${index}] is not a content part ({ type, … }).`);
    }
    contentParts(part as LanguageModelV4Content, index, parts);
  });
  parts.push({ type: 'finish', finishReason, usage: typeof usage === 'object' && usage !== null ? usage : unknownUsage(), ...(providerMetadata === undefined ? {} : { providerMetadata }) });
  return parts;
}

/**
 * A `doGenerate` result as the stream parts a streamed answer would have sent: `stream-start`
 * (warnings), `response-metadata` (when the provider named the response), the content in order,
 * `finish`. A result that is not `{ content: [...], finishReason }` (a `usage` that is no object is
 * unknown as a whole, as a streamed `finish`'s), holds a part without
 * a string `type`, throws where it is read, or makes a part a stream could not send either (see
 * `partProblem`: an id that is not a string, metadata that is not JSON…) is an
 * `InvalidModelResponseError` naming `model`.
 *
 * @example
 * ```ts
 * generateResultParts({ content: [{ type: 'text', text: 'Hi' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }, model);
 * // stream-start, text-start, text-delta 'Hi', text-end, finish
 * ```
 */
export function generateResultParts(result: unknown, model: ModelLike): LanguageModelV4StreamPart[] {
  if (typeof result !== 'object' || result === null) throw invalidResponse(model, `doGenerate() resolved with ${result === null ? 'null' : typeof result}, not a result object.`);
  let parts: LanguageModelV4StreamPart[];
  try {
    parts = resultParts(result, model);
  } catch (error) {
    if (InvalidModelResponseError.isInstance(error)) throw error;
    throw invalidResponse(model, `reading doGenerate()'s result threw: ${messageOf(error)}`, error);
  }
  for (const part of parts) {
    const problem = partProblem(part);
    if (problem !== undefined) throw invalidResponse(model, `doGenerate()'s answer makes ${problem}.`);
  }
  return parts;
}

/** The `call-info` of a `doGenerate` result: its request, and its response's headers. */
function callInfoOf(result: object, model: ModelLike): CallInfo {
  const { request, response } = callMetadataOf(result, model, 'doGenerate()');
  let headers: unknown;
  try {
    headers = (response as { headers?: unknown } | undefined)?.headers;
  } catch (error) {
    throw invalidResponse(model, `reading doGenerate()'s result.response.headers threw: ${messageOf(error)}`, error);
  }
  return { type: 'call-info', request, response: typeof headers === 'object' && headers !== null ? { headers: headers as Record<string, string> } : undefined };
}

/**
 * One model call through `doGenerate` as a cold Observable of the events a streamed call emits
 * (`call-info`, then {@link generateResultParts}), all at once when the provider answers.
 * Unsubscribing before the answer aborts the call's signal; a thrown or rejected `doGenerate` or a
 * malformed result is the error notification (the provider's error unchanged, e.g. `APICallError`).
 *
 * ```
 * provider:  ------r           (r = the doGenerate result)
 * result:    ------(isdef|)    (i = call-info, s = stream-start, d = text-delta, …, f = finish)
 * ```
 *
 * @example
 * ```ts
 * generateCall(model, { prompt }).subscribe((event) => console.log(event.type));
 * ```
 */
export function generateCall(model: LanguageModelV4, options: LanguageModelV4CallOptions): Observable<ModelEvent> {
  return new Observable<ModelEvent>((subscriber) => {
    const abort = new CallAbort(options);
    let answered = false;
    const fail = (error: unknown): void => {
      answered = true;
      abort.release();
      subscriber.error(providerFailure(model, error));
    };
    const answer = (result: unknown): void => {
      if (subscriber.closed) return;
      answered = true;
      abort.release();
      let parts: LanguageModelV4StreamPart[];
      let info: CallInfo;
      try {
        parts = generateResultParts(result, model);
        info = callInfoOf(result as object, model);
      } catch (error) {
        subscriber.error(error);
        return;
      }
      subscriber.next(info);
      for (const part of parts) {
        if (subscriber.closed) return;
        subscriber.next(part);
      }
      subscriber.complete();
    };
    try {
      Promise.resolve(model.doGenerate(abort.callOptions)).then(answer, (error: unknown) => {
        if (!subscriber.closed) fail(error);
      });
    } catch (error) {
      fail(error);
    }
    return () => {
      if (!answered) abort.cut();
    };
  });
}
