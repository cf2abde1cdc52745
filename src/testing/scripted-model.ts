/**
 * `scriptedModel`: a deterministic, offline `LanguageModelV4` that answers from rules — for demos,
 * examples and tests that need a believable conversation (text, tool calls, answers from tool
 * results) without a provider. Streams word by word, optionally paced on an RxJS scheduler.
 */
import { asyncScheduler, concatMap, from, lastValueFrom, of, timer, map, toArray, type SchedulerLike, type Observable } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { OBSERVABLE_STREAM } from '../model/index.js';
import { finishPart, textParts, toolCallParts } from './model-parts.js';
import { foldParts } from './internal/mock-internals.js';

/** What a rule sees of the request. */
export interface ScriptContext {
  /** Text of the last user message. */
  userText: string;
  /** Results of the tool calls answered since the last user message, in order. */
  toolResults: Array<{
    /** The name of the tool. */
    toolName: string;
    /** What the tool returned. */
    output: unknown;
  }>;
  /** Text of the system messages. */
  systemText: string;
  /** The prompt sent to the model. */
  prompt: LanguageModelV4Prompt;
  /** 0 for the first call of this model, 1 for the second, … */
  callIndex: number;
}

/** A rule's reply: text, tool calls, or both (tool calls end the step with `tool-calls`). */
export interface ScriptReply {
  /** The text. */
  text?: string;
  /** Reasoning text the reply starts with. */
  reasoning?: string;
  /** The tool calls made. */
  toolCalls?: Array<{
    /** The name of the tool. */
    toolName: string;
    /** The tool call's arguments (parsed input). */
    args: unknown;
  }>;
}

/** One rule: when `match` (a pattern on the user text, or a predicate) holds, `reply`. */
export interface ScriptRule {
  /** A pattern tested on the last user message's text (only before any tool result came back), or a predicate. */
  match: RegExp | ((context: ScriptContext) => boolean);
  /** The reply, or a function of the request that makes it. */
  reply: ScriptReply | ((context: ScriptContext) => ScriptReply);
}

/** Options of `scriptedModel`. */
export interface ScriptedModelOptions {
  /** The rules, tried in order; the first match answers. */
  rules: ScriptRule[];
  /** Reply when no rule matches. */
  fallback?: ScriptReply | ((context: ScriptContext) => ScriptReply);
  /** The model's id. Default `'scripted'`. */
  modelId?: string;
  /** Delay between streamed words, ms (0: synchronous). */
  wordDelayMs?: number;
  /** The scheduler for delays (virtual time in tests). */
  scheduler?: SchedulerLike;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
}

/** Reads the request the way rules see it. */
export function scriptContext(prompt: LanguageModelV4Prompt, callIndex: number): ScriptContext {
  let lastUser = -1;
  prompt.forEach((message, index) => {
    if (message.role === 'user') lastUser = index;
  });
  const toolResults: ScriptContext['toolResults'] = [];
  for (const message of prompt.slice(lastUser + 1)) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const output = part.output as { type: string; value?: unknown };
      toolResults.push({ toolName: part.toolName, output: output.value ?? output });
    }
  }
  const lastUserMessage = lastUser >= 0 ? prompt[lastUser] : undefined;
  return {
    userText: lastUserMessage === undefined ? '' : textOf(lastUserMessage.content),
    toolResults,
    systemText: prompt.filter((message) => message.role === 'system').map((message) => textOf(message.content)).join('\n'),
    prompt,
    callIndex,
  };
}

function partsOf(reply: ScriptReply, callIndex: number): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (reply.reasoning) {
    parts.push({ type: 'reasoning-start', id: `r${callIndex}` });
    for (const word of reply.reasoning.split(/(?<=\s)/)) parts.push({ type: 'reasoning-delta', id: `r${callIndex}`, delta: word });
    parts.push({ type: 'reasoning-end', id: `r${callIndex}` });
  }
  if (reply.text) parts.push(...textParts(reply.text, { id: `t${callIndex}` }));
  reply.toolCalls?.forEach((call, index) =>
    parts.push(...toolCallParts(call.toolName, call.args, { toolCallId: `call_${callIndex}_${index}` })),
  );
  const outputTokens = Math.ceil((reply.text ?? '').length / 4);
  parts.push(finishPart(reply.toolCalls?.length ? 'tool-calls' : 'stop', { inputTokens: 20, outputTokens }));
  return parts;
}

/**
 * A rule-driven offline model.
 *
 * @example
 * ```ts
 * import { scriptedModel } from 'rxagent/testing';
 * const model = scriptedModel({
 *   rules: [
 *     { match: /order (\d+)/, reply: ({ userText }) => ({ toolCalls: [{ toolName: 'lookupOrder', args: { id: /order (\d+)/.exec(userText)?.[1] } }] }) },
 *     { match: ({ toolResults }) => toolResults.length > 0, reply: ({ toolResults }) => ({ text: `Found: ${JSON.stringify(toolResults[0]?.output)}` }) },
 *   ],
 *   fallback: { text: 'How can I help?' },
 * });
 * ```
 */
export function scriptedModel(options: ScriptedModelOptions): LanguageModelV4 & {
  /** Every call made, in order. */
  readonly calls: LanguageModelV4CallOptions[];
} {
  const calls: LanguageModelV4CallOptions[] = [];
  const scheduler = options.scheduler ?? asyncScheduler;
  const answer = (callOptions: LanguageModelV4CallOptions): Observable<LanguageModelV4StreamPart> => {
    const callIndex = calls.push(callOptions) - 1;
    const context = scriptContext(callOptions.prompt, callIndex);
    const rule = options.rules.find((candidate) =>
      candidate.match instanceof RegExp ? candidate.match.test(context.userText) && context.toolResults.length === 0 : candidate.match(context),
    );
    const chosen = rule?.reply ?? options.fallback ?? { text: "I'm an offline model: no rule matched." };
    const reply = typeof chosen === 'function' ? chosen(context) : chosen;
    const parts = partsOf(reply, callIndex);
    const delay = options.wordDelayMs ?? 0;
    if (delay <= 0) return from(parts);
    return from(parts).pipe(concatMap((part) => (part.type === 'text-delta' ? timer(delay, scheduler).pipe(map(() => part)) : of(part))));
  };
  return {
    specificationVersion: 'v4',
    provider: 'rxagent-offline',
    modelId: options.modelId ?? 'scripted',
    supportedUrls: {},
    calls,
    [OBSERVABLE_STREAM]: answer,
    async doStream(callOptions) {
      const parts$ = answer(callOptions);
      let subscription: { unsubscribe(): void } | undefined;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          subscription = parts$.subscribe({
            next: (part) => controller.enqueue(part),
            error: (error: unknown) => controller.error(error),
            complete: () => controller.close(),
          });
        },
        cancel() {
          subscription?.unsubscribe();
        },
      });
      return { stream };
    },
    async doGenerate(callOptions) {
      return foldParts(await lastValueFrom(answer(callOptions).pipe(toArray())));
    },
  } as LanguageModelV4 & { readonly calls: LanguageModelV4CallOptions[] };
}
