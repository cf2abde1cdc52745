/**
 * A model call through `doGenerate`, as the same events a `doStream` call emits: `call-info`, then
 * the answer as stream parts (each text and reasoning block as one start/delta/end, every other
 * content part as it is, then `finish`). `generate()` takes this path when nothing reads the
 * stream (see `generateWith` in the agent's call options): the results and hooks are those of a
 * streamed answer; only the granularity of the deltas differs (one per block).
 */
import { Observable } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4GenerateResult, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { invalidResponse, type ModelLike } from './checked-stream.js';
import { CallAbort } from './internal/call-abort.js';
import type { ModelEvent } from './model-events.js';

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

/**
 * A `doGenerate` result as the stream parts a streamed answer would have sent: `stream-start`
 * (warnings), `response-metadata` (when the provider named the response), the content in order,
 * `finish`. A result that is not `{ content: [...], finishReason, usage }` or holds a part without
 * a string `type` is an `InvalidModelResponseError` naming `model`.
 *
 * @example
 * ```ts
 * generateResultParts({ content: [{ type: 'text', text: 'Hi' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }, model);
 * // stream-start, text-start, text-delta 'Hi', text-end, finish
 * ```
 */
export function generateResultParts(result: unknown, model: ModelLike): LanguageModelV4StreamPart[] {
  if (typeof result !== 'object' || result === null) throw invalidResponse(model, `doGenerate() resolved with ${result === null ? 'null' : typeof result}, not a result object.`);
  const { content, finishReason, usage, providerMetadata, response, warnings } = result as Partial<LanguageModelV4GenerateResult>;
  if (!Array.isArray(content)) throw invalidResponse(model, 'doGenerate() resolved without a content array.');
  if (typeof finishReason !== 'object' || finishReason === null || typeof usage !== 'object' || usage === null) {
    throw invalidResponse(model, 'doGenerate() resolved without finishReason and usage.');
  }
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: Array.isArray(warnings) ? warnings : [] }];
  if (response?.id !== undefined || response?.timestamp !== undefined || response?.modelId !== undefined) {
    parts.push({
      type: 'response-metadata',
      ...(response.id === undefined ? {} : { id: response.id }),
      ...(response.timestamp === undefined ? {} : { timestamp: response.timestamp }),
      ...(response.modelId === undefined ? {} : { modelId: response.modelId }),
    });
  }
  content.forEach((part: unknown, index) => {
    if (typeof part !== 'object' || part === null || typeof (part as { type?: unknown }).type !== 'string') {
      throw invalidResponse(model, `doGenerate()'s content[${index}] is not a content part ({ type, … }).`);
    }
    contentParts(part as LanguageModelV4Content, index, parts);
  });
  parts.push({ type: 'finish', finishReason, usage, ...(providerMetadata === undefined ? {} : { providerMetadata }) });
  return parts;
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
      subscriber.error(error);
    };
    const answer = (result: LanguageModelV4GenerateResult): void => {
      if (subscriber.closed) return;
      answered = true;
      abort.release();
      let parts: LanguageModelV4StreamPart[];
      try {
        parts = generateResultParts(result, model);
      } catch (error) {
        subscriber.error(error);
        return;
      }
      subscriber.next({ type: 'call-info', request: result.request, response: result.response?.headers === undefined ? undefined : { headers: result.response.headers } });
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
