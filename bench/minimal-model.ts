/**
 * The benchmark's model: a plain `LanguageModelV4` object whose `doStream` hands out pre-built
 * stream parts through a pull-based `ReadableStream` (highWaterMark 0: a part leaves the model only
 * when someone reads it), and whose `doGenerate` folds the same parts (the reference's
 * `generate()` calls `doGenerate`, rxagent's calls `doStream`). The same object type serves rxagent
 * and the reference, so neither gets a faster path (no `OBSERVABLE_STREAM`).
 *
 * `stats.pulled` counts the parts read out of the model: `pulled - consumed` is how many parts the
 * implementation holds between the provider and the consumer.
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';

/** Parts of one call, chosen from the call's options (e.g. how many tool results the prompt holds). */
export type ModelScript = (options: LanguageModelV4CallOptions) => readonly LanguageModelV4StreamPart[];

/** Counters of one model object. */
export interface ModelStats {
  calls: number;
  pulled: number;
}

/** A minimal V4 model plus its counters. */
export type MinimalModel = LanguageModelV4 & { readonly stats: ModelStats };

type FinishPart = Extract<LanguageModelV4StreamPart, { type: 'finish' }>;

/** A `finish` part. */
export function finishPart(reason: 'stop' | 'tool-calls', outputTokens = 1): FinishPart {
  return {
    type: 'finish',
    finishReason: { unified: reason, raw: reason },
    usage: {
      inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: outputTokens, text: outputTokens, reasoning: undefined },
    },
  };
}

/** A text answer of `deltas` one-character deltas, pre-built once. */
export function textAnswerParts(deltas: number): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't1' }];
  for (let index = 0; index < deltas; index++) parts.push({ type: 'text-delta', id: 't1', delta: 'x' });
  parts.push({ type: 'text-end', id: 't1' }, finishPart('stop', deltas));
  return parts;
}

/** One tool-call step: a `tool-call` of `echo` and a `tool-calls` finish. */
export function toolCallParts(callIndex: number): LanguageModelV4StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'tool-call', toolCallId: `call-${callIndex}`, toolName: 'echo', input: JSON.stringify({ n: callIndex }) },
    finishPart('tool-calls'),
  ];
}

/** Tool results already in the prompt (the step number of a tool loop). */
export function toolResultsInPrompt(options: LanguageModelV4CallOptions): number {
  let count = 0;
  for (const message of options.prompt) if (message.role === 'tool') count += message.content.length;
  return count;
}

/** A script that calls `echo` `steps` times (one call per step), then answers. */
export function toolLoopScript(steps: number): ModelScript {
  const calls = Array.from({ length: steps }, (_, index) => toolCallParts(index));
  const answer = textAnswerParts(1);
  return (options) => calls[toolResultsInPrompt(options)] ?? answer;
}

function foldContent(parts: readonly LanguageModelV4StreamPart[]): { content: LanguageModelV4Content[]; finish: FinishPart } {
  const content: LanguageModelV4Content[] = [];
  let text = '';
  let finish: FinishPart = finishPart('stop');
  for (const part of parts) {
    if (part.type === 'text-delta') text += part.delta;
    else if (part.type === 'tool-call') content.push(part);
    else if (part.type === 'finish') finish = part;
  }
  if (text !== '') content.unshift({ type: 'text', text });
  return { content, finish };
}

/**
 * A V4 model that streams `script(options)` for every call.
 *
 * ```ts
 * const model = minimalModel(() => textAnswerParts(20_000));
 * ```
 */
export function minimalModel(script: ModelScript): MinimalModel {
  const stats: ModelStats = { calls: 0, pulled: 0 };
  return {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'minimal',
    supportedUrls: {},
    stats,
    async doGenerate(options) {
      stats.calls++;
      const parts = script(options);
      stats.pulled += parts.length;
      const { content, finish } = foldContent(parts);
      return { content, finishReason: finish.finishReason, usage: finish.usage, warnings: [] };
    },
    async doStream(options) {
      stats.calls++;
      const parts = script(options);
      let index = 0;
      const stream = new ReadableStream<LanguageModelV4StreamPart>(
        {
          pull(controller) {
            const part = parts[index++];
            if (part === undefined) {
              controller.close();
              return;
            }
            stats.pulled++;
            controller.enqueue(part);
          },
        },
        { highWaterMark: 0 },
      );
      return { stream };
    },
  };
}
