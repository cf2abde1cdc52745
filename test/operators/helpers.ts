/** Shared helpers of the operator specs (messages, lists, a controllable promise). */
import { Observable } from 'rxjs';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { MessageList } from '../../src/message-list/message-list.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { createRunContext, type RunContext, type RunContextInit } from '../../src/operators/run-context.js';
import type { ModelInput } from '../../src/contract/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';

let clock = Date.UTC(2026, 0, 1);

/** A stored text message. */
export function textMessage(id: string, role: MastraDBMessage['role'], text: string): MastraDBMessage {
  clock += 1000;
  return { id, role, createdAt: new Date(clock), content: { format: 2, parts: [{ type: 'text', text }], content: text } };
}

/** A user message. */
export const user = (id: string, text: string): MastraDBMessage => textMessage(id, 'user', text);
/** An assistant message. */
export const assistant = (id: string, text: string): MastraDBMessage => textMessage(id, 'assistant', text);

/** The text of a stored message (its text parts joined). */
export function textOf(message: MastraDBMessage): string {
  return message.content.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** A list with `input` messages (and optional system messages). */
export function listWith(input: MastraDBMessage[], options: { response?: MastraDBMessage[]; system?: string[] } = {}): MessageList {
  const list = new MessageList();
  for (const text of options.system ?? []) list.addSystem(text);
  if (input.length > 0) list.add(input, 'input');
  if (options.response !== undefined && options.response.length > 0) list.add(options.response, 'response', { merge: false });
  return list;
}

/** `[id, text]` of every message of a view, for compact assertions. */
export function idsAndTexts(messages: readonly MastraDBMessage[]): Array<[string, string]> {
  return messages.map((message) => [message.id, textOf(message)]);
}

/** A test model resolver: strings become mock models with that id. */
export function resolveTestModel(model: ModelInput): LanguageModelV4 {
  if (typeof model === 'string') return mockModel({ modelId: model });
  if (model.specificationVersion === 'v4') return model;
  throw new Error(`unexpected model ${model.modelId}`);
}

/** A run context whose string models resolve to mock models. */
export function testContext(init: RunContextInit = {}): RunContext {
  return createRunContext({ runId: 'test-run', resolveModel: resolveTestModel, ...init });
}

/** A promise with its resolve/reject exposed. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** Makes a `Deferred`. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending promise callbacks run. */
export async function flushMicrotasks(rounds = 5): Promise<void> {
  for (let round = 0; round < rounds; round++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Everything an Observable does, recorded as it happens. */
export interface Recording<T> {
  values: T[];
  error: unknown;
  completed: boolean;
}

/** Subscribes and records `next`/`error`/`complete` (returns the recording and the subscription). */
export function record<T>(source: Observable<T>): Recording<T> & { unsubscribe(): void } {
  const recording: Recording<T> = { values: [], error: undefined, completed: false };
  const subscription = source.subscribe({
    next: (value) => recording.values.push(value),
    error: (error: unknown) => {
      recording.error = error;
    },
    complete: () => {
      recording.completed = true;
    },
  });
  return Object.assign(recording, { unsubscribe: () => subscription.unsubscribe() });
}

/** The error an Observable ends with (fails when it does not error). */
export function errorOf<T>(source: Observable<T>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    source.subscribe({
      error: resolve,
      complete: () => reject(new Error('expected an error, the observable completed')),
    });
  });
}

/** An assistant message holding pending tool calls (`state: 'call'`). */
export function toolCallMessage(id: string, calls: Array<{ toolCallId: string; toolName: string; args?: unknown }>): MastraDBMessage {
  clock += 1000;
  return {
    id,
    role: 'assistant',
    createdAt: new Date(clock),
    content: {
      format: 2,
      parts: calls.map((call) => ({
        type: 'tool-invocation' as const,
        toolInvocation: { state: 'call' as const, toolCallId: call.toolCallId, toolName: call.toolName, args: call.args ?? {} },
      })),
    },
  };
}

/** The tool invocation of `toolCallId` in the list (state and result), if any. */
export function toolInvocationIn(list: MessageList, toolCallId: string): { state: string; result?: unknown } | undefined {
  for (const message of list.get.all.db()) {
    for (const part of message.content.parts) {
      if (part.type === 'tool-invocation' && part.toolInvocation.toolCallId === toolCallId) {
        return { state: part.toolInvocation.state, result: part.toolInvocation.result };
      }
    }
  }
  return undefined;
}
