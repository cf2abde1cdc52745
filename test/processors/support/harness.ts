/** Test support for the built-in processors: stream runners, message builders, judge models. */
import { from, lastValueFrom, toArray, type OperatorFunction } from 'rxjs';
import { APICallError, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { MessageList } from '../../../src/message-list/message-list.js';
import type { MastraDBMessage, MastraMessagePart } from '../../../src/message-list/types.js';
import { processOutputStream } from '../../../src/operators/process-output-stream.js';
import { createRunContext, type RunContext, type RunContextInit } from '../../../src/operators/run-context.js';
import type { ChunkType } from '../../../src/contract/chunk-types.js';
import type { Processor } from '../../../src/contract/processor-types.js';
import { chunk } from '../../../src/testing/chunk-builders.js';
import { mockModel, type MockModel } from '../../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../../src/testing/model-parts.js';

/** The operator under test: `processOutputStream` (which drains the processors' follow-up chunks). */
export function outputStream(processors: readonly Processor[], ctx: RunContext): OperatorFunction<ChunkType, ChunkType> {
  return processOutputStream(processors, ctx);
}

/** Runs `chunks` through `processOutputStream` and collects the output. */
export function runOutputStream(processors: readonly Processor[], chunks: readonly ChunkType[], ctx: RunContext = createRunContext()): Promise<ChunkType[]> {
  return lastValueFrom(from(chunks).pipe(outputStream(processors, ctx), toArray()));
}

/** The text of the `text-delta` chunks, joined. */
export function streamedText(chunks: readonly ChunkType[]): string {
  return chunks.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('');
}

/** `text-start`, one delta per piece, `text-end` (text block `id`). */
export function textBlock(pieces: readonly string[], id = 'text-1'): ChunkType[] {
  return [chunk.textStart(id), ...pieces.map((piece) => chunk.textDelta(piece, id)), chunk.textEnd(id)];
}

let clock = Date.UTC(2026, 0, 1);

/** A stored message with the given parts. */
export function dbMessage(id: string, role: MastraDBMessage['role'], parts: MastraMessagePart[]): MastraDBMessage {
  clock += 1000;
  return { id, role, createdAt: new Date(clock), content: { format: 2, parts } };
}

/** A stored message with one text part. */
export const textMessage = (id: string, role: MastraDBMessage['role'], text: string): MastraDBMessage =>
  dbMessage(id, role, [{ type: 'text', text }]);

/** The text parts of a message, joined. */
export function textOf(message: MastraDBMessage | undefined): string {
  return (message?.content.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** A list holding `input` messages (and optional response messages and system prompts). */
export function listWith(input: MastraDBMessage[], options: { response?: MastraDBMessage[]; system?: string[]; memory?: MastraDBMessage[] } = {}): MessageList {
  const list = new MessageList();
  for (const text of options.system ?? []) list.addSystem(text);
  if (options.memory !== undefined && options.memory.length > 0) list.add(options.memory, 'memory');
  if (input.length > 0) list.add(input, 'input');
  if (options.response !== undefined && options.response.length > 0) list.add(options.response, 'response', { merge: false });
  return list;
}

/** A run context over `messageList`. */
export function contextWith(messageList: MessageList, init: RunContextInit = {}): RunContext {
  return createRunContext({ runId: 'test-run', messageList, ...init });
}

/** A mock judge model answering each call with `answer(callIndex, promptText)` as streamed text. */
export function judgeModel(answer: (call: { index: number; prompt: string; system: string }) => string): MockModel {
  return mockModel({
    modelId: 'judge',
    parts: ({ callIndex, options }) => {
      const system = options.prompt.find((message) => message.role === 'system');
      const user = options.prompt.find((message) => message.role === 'user');
      const prompt =
        user?.role === 'user' ? user.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
      const text = answer({ index: callIndex, prompt, system: system?.role === 'system' ? system.content : '' });
      return [...textParts(text, { chunkSize: 7 }), finishPart('stop')];
    },
  });
}

/**
 * What the AI SDK throws when the judge cannot be reached: `postToApi` wraps undici's
 * `TypeError('fetch failed')` into an `APICallError` without a status, its cause the network error.
 */
export function unreachableJudgeError(): APICallError {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED' });
  return new APICallError({ message: `Cannot connect to API: ${refused.message}`, url: 'https://judge.test', requestBodyValues: {}, cause: refused, isRetryable: true });
}

/** A judge model whose calls all fail with `error` (default: the judge cannot be reached). */
export function failingModel(error: unknown = unreachableJudgeError()): MockModel {
  return mockModel({ modelId: 'failing-judge', error });
}

/** A judge model streaming `parts` (e.g. an `error` part) on every call. */
export function modelStreaming(parts: LanguageModelV4StreamPart[]): MockModel {
  return mockModel({ modelId: 'streaming-judge', parts });
}

/**
 * The ways a judge model can fail, for the error-strategy tests of every model-backed processor:
 * `content` failures (the judged content can cause them: `contentErrorStrategy`, fail closed by
 * default) and `infrastructure` ones (`errorStrategy`: retried within `judgeDeadlineMs`, then fail closed by default).
 */
export const judgeFailures: Record<string, { kind: 'content' | 'infrastructure'; model: () => MockModel }> = {
  'a malformed answer': { kind: 'content', model: () => judgeModel(() => 'Sorry, I cannot answer in JSON.') },
  'an answer of the wrong shape': { kind: 'content', model: () => judgeModel(() => '{"unexpected": true}') },
  'a failing model': { kind: 'infrastructure', model: () => failingModel() },
  // not an outage we can recognise (it was read as one, and let through under errorStrategy 'fail-open')
  "a provider's bug (a TypeError)": { kind: 'content', model: () => failingModel(new TypeError("Cannot read properties of undefined (reading 'choices')")) },
};

/** The contents a judge call quoted (between its `<<<CONTENT-…` markers), in order. */
export function judgedContents(prompt: string): string[] {
  return [...prompt.matchAll(/<<<(CONTENT-[0-9a-f]{16})\n([\s\S]*?)\n\1>>>/g)].map((match) => match[2] as string);
}

/** The user prompt text of a recorded model call. */
export function promptText(call: { prompt: ReadonlyArray<{ role: string; content: unknown }> }): string {
  const user = call.prompt.find((message) => message.role === 'user');
  const content = user?.content;
  return Array.isArray(content) ? content.map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : '')).join('') : '';
}
