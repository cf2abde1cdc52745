/**
 * The processor contract: the `Processor` interface with its nine optional hooks, each hook's
 * argument object and result, exactly as the processor specification lists them.
 *
 * rxagent fills every listed argument for real. Beyond the specification's lists, every hook also
 * receives `state`, `abortSignal`, `writer` and `runId` (the reference implementation leaves some
 * of them undefined in some hooks; rxagent never does).
 */
import type { JsonValue } from './json-codec.js';
import type { Observable } from 'rxjs';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { MessageList } from '../message-list/message-list.js';
import type { MastraDBMessage } from '../message-list/types.js';
import type { ChunkType } from './chunk-types.js';

import type { AbortFunction, ProcessorState, ProcessorViolation, ModelInput, CallSettings, StructuredOutputOptions, StepResult, OutputResult, CachedLLMStepResponse, ProcessorContext } from './processor-context.js';
import type { ProcessInputArgs, ProcessInputResult, ProcessInputStepArgs, ProcessInputStepResult, ProcessLLMRequestArgs, ProcessLLMRequestResult, ProcessLLMResponseArgs, ProcessLLMResponseResult, ProcessAPIErrorArgs, ProcessAPIErrorResult, ProcessOutputStreamArgs, ProcessOutputStepArgs, ProcessToolResultArgs, ProcessOutputResultArgs, ProcessorMessageResult } from './hook-types.js';

export type { AbortFunction, ProcessorState, ProcessorViolation, ModelInput, CallSettings, StructuredOutputOptions, StepResult, OutputResult, CachedLLMStepResponse, ProcessorContext } from './processor-context.js';
export type { ProcessInputArgs, ProcessInputResult, ProcessInputStepArgs, ProcessInputStepResult, ProcessLLMRequestArgs, ProcessLLMRequestResult, ProcessLLMResponseArgs, ProcessLLMResponseResult, ProcessAPIErrorArgs, ProcessAPIErrorResult, ProcessOutputStreamArgs, ProcessOutputStepArgs, ProcessToolResultArgs, ProcessOutputResultArgs, ProcessorMessageResult } from './hook-types.js';

/**
 * A hook result: now, as a promise, or as an Observable whose first value it is (an Observable that
 * completes empty counts as `undefined`).
 *
 * @example
 * ```ts
 * import { of, delay } from 'rxjs';
 * import type { HookReturn, ProcessInputResult } from 'rxagent';
 * const later: HookReturn<ProcessInputResult | undefined> = of(undefined).pipe(delay(10));
 * ```
 */
export type HookReturn<T> = T | Promise<T> | Observable<T>;

/**
 * How a processor's `state` goes into a run snapshot and back (see `Processor.durableState`).
 *
 * @example
 * ```ts
 * import type { DurableStateOption } from 'rxagent';
 * const seenIds: DurableStateOption = {
 *   snapshot: (state) => ({ seen: [...(state['seen'] as Set<string>)] }),
 *   restore: (json) => ({ seen: new Set((json as { seen: string[] }).seen) }),
 * };
 * ```
 */
export type DurableStateOption =
  | 'json'
  | 'reset'
  | false
  | {
      /** The processor cannot run durably, and why (what `submit()`'s `NotDurableError` says). */
      notDurable: string;
    }
  | {
      /** The state as JSON, for the snapshot. */
      snapshot(state: ProcessorState): JsonValue;
      /** The state again, from what `snapshot` made. */
      restore(json: JsonValue): ProcessorState;
    };

/**
 * A processor: an object with an `id` and any of the nine hooks. A class instance or a plain
 * object literal both work.
 *
 * A hook returns its result, a promise of it, or an RxJS `Observable` (or interop observable) of it:
 * the Observable's first value is the result (it is unsubscribed then; completing without a value
 * counts as returning `undefined`), its error is a throw. An Observable is timed by its own
 * scheduler, so a `delay` inside it runs on a `TestScheduler`'s virtual time in marble tests.
 * Arrays keep their meaning (messages), never "values of an Observable".
 *
 * @example
 * ```ts
 * import { delay, of } from 'rxjs';
 * import type { Processor } from 'rxagent';
 * export const shout: Processor<'shout'> = {
 *   id: 'shout',
 *   processOutputStream: ({ part }) =>
 *     part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part,
 * };
 * // an Observable result: each part half a second later (virtual time under a TestScheduler)
 * export const slow: Processor<'slow'> = { id: 'slow', processOutputStream: ({ part }) => of(part).pipe(delay(500)) };
 * ```
 */
export interface Processor<TId extends string = string, TTripwireMetadata = unknown> {
  /** The processor's id: names it in tripwires, errors and state. */
  readonly id: TId;
  /** A human-readable name. */
  readonly name?: string;
  /** What the processor does. */
  readonly description?: string;
  /** Position in the merged processor list of the run (set by rxagent). */
  processorIndex?: number;
  /** When true, `processOutputStream` also receives `data-*` chunks. Default false. */
  processDataParts?: boolean;
  /**
   * When true, the processor's `processLLMRequest` may answer requests (`{ response }`, a cache):
   * it must then be the last processor that hooks `processLLMRequest` — one after it could change
   * the request the answer was looked up (and stored) for. Placed before one, every request is
   * refused before any hook runs: a `ProcessorError` naming both, nothing looked up or stored.
   * `ResponseCache` sets it. Default false (an unmarked processor's `{ response }` is refused the
   * same way when it comes, after its lookup).
   *
   * @example
   * ```ts
   * const cache: Processor = { id: 'my-cache', answersRequests: true, processLLMRequest: ({ prompt }) => lookUp(prompt) };
   * ```
   */
  answersRequests?: boolean;
  /**
   * Called on every violation (abort, or a built-in's warn strategy); its throws are swallowed.
   * `undefined` is accepted (a class may declare the field and leave it unset).
   */
  onViolation?: ((violation: ProcessorViolation) => void | Promise<void>) | undefined;
  /**
   * How the processor's `state` survives a durable run's takeover (a run snapshot): `'json'`
   * (default: it must be plain JSON — else the snapshot fails with a `DurableStateError` naming the
   * path), `'reset'` (it restores empty), `false` or `{ notDurable: 'why' }` (the processor
   * cannot run durably: refused at submit with a `NotDurableError` naming it and saying why), or
   * your own `{ snapshot, restore }`.
   */
  durableState?: DurableStateOption | undefined;

  /** Once per run, before the first step: sees the new input (`messages`), the system messages and the list. Return the list, the messages to keep, `{ messages, systemMessages }` or nothing. `abort({ retry })` is a plain abort here. */
  processInput?(args: ProcessInputArgs<TTripwireMetadata>): HookReturn<ProcessInputResult | undefined | void>;
  /** Before every model attempt of every step: may change the step's model, tools, tool choice, messages, system messages, settings (return the fields to change). `abort({ retry })` is a plain abort here. */
  processInputStep?(
    args: ProcessInputStepArgs<TTripwireMetadata>,
  ): HookReturn<ProcessInputStepResult | MessageList | MastraDBMessage[] | undefined | void>;
  /** After the prompt is built, before the provider call: return `{ prompt }` to rewrite it for this call only, or `{ response }` to answer from a cache. `abort({ retry })` is a plain abort here. */
  processLLMRequest?(args: ProcessLLMRequestArgs<TTripwireMetadata>): HookReturn<ProcessLLMRequestResult>;
  /** After a step's stream ended and its message was built (`fromCache` for a cached answer). Returns nothing; `abort(…, { retry: true })` re-runs the step. */
  processLLMResponse?(args: ProcessLLMResponseArgs<TTripwireMetadata>): HookReturn<ProcessLLMResponseResult>;
  /** When the model call fails (thrown, or an `error` stream part): return `{ retry: true }` to call the model again (the first processor asking wins). */
  processAPIError?(args: ProcessAPIErrorArgs<TTripwireMetadata>): HookReturn<ProcessAPIErrorResult | undefined | void>;
  /** Each chunk of the model's stream, in order: return it, a rewritten chunk, or `null`/`undefined` to drop it (lifecycle chunks cannot be dropped). `abort(…, { retry: true })` re-runs the step. */
  processOutputStream?(args: ProcessOutputStreamArgs<TTripwireMetadata>): HookReturn<ChunkType | null | undefined>;
  /** After each step, before its tools run: sees the step's text, tool calls and finish reason. Return the list, messages or nothing (`[]` = no change); `abort(…, { retry: true })` re-runs the step. */
  processOutputStep?(args: ProcessOutputStepArgs<TTripwireMetadata>): ProcessorMessageResult;
  /** After each tool that succeeded, before its result is committed; change the result with `messageList.updateToolInvocation`. `abort(…, { retry: true })` re-runs the step. */
  processToolResult?(args: ProcessToolResultArgs<TTripwireMetadata>): ProcessorMessageResult;
  /** Once, when the run finished, before its `finish` chunk: sees the reply and the run's result. An abort here removes the reply (`text: ''`, nothing saved). */
  processOutputResult?(args: ProcessOutputResultArgs<TTripwireMetadata>): ProcessorMessageResult;
}

type WithHook<K extends keyof Processor> = Processor & Required<Pick<Processor, K>>;

/**
 * A processor with at least one input-side hook: `processInput`, `processInputStep`,
 * `processLLMRequest` or `processLLMResponse`.
 *
 * @example
 * ```ts
 * import type { InputProcessor } from 'rxagent';
 * const trim: InputProcessor = { id: 'trim', processInput: ({ messages }) => messages };
 * ```
 */
export type InputProcessor =
  | WithHook<'processInput'>
  | WithHook<'processInputStep'>
  | WithHook<'processLLMRequest'>
  | WithHook<'processLLMResponse'>;

/**
 * A processor with at least one output-side hook: `processOutputStream`, `processOutputStep`,
 * `processOutputResult` or `processToolResult`.
 *
 * @example
 * ```ts
 * import type { OutputProcessor } from 'rxagent';
 * const pass: OutputProcessor = { id: 'pass', processOutputStream: ({ part }) => part };
 * ```
 */
export type OutputProcessor =
  | WithHook<'processOutputStream'>
  | WithHook<'processOutputStep'>
  | WithHook<'processOutputResult'>
  | WithHook<'processToolResult'>;

/**
 * A processor with `processAPIError`.
 *
 * @example
 * ```ts
 * import type { ErrorProcessor } from 'rxagent';
 * const retryOnce: ErrorProcessor = { id: 'retry-once', processAPIError: ({ retryCount }) => ({ retry: retryCount === 0 }) };
 * ```
 */
export type ErrorProcessor = WithHook<'processAPIError'>;

/** The call options rxagent builds for the provider (AI SDK `LanguageModelV4CallOptions`). */
export type ModelCallOptions = LanguageModelV4CallOptions;

/**
 * A hook of a processor typed against the reference implementation's own types
 * (`@mastra/core/processors`): a function rxagent calls with its own arguments, which carry every
 * field the reference's arguments do (see {@link ForeignProcessor}).
 *
 * @example
 * ```ts
 * import type { ForeignHook } from 'rxagent';
 * const hook: ForeignHook = async ({ part }: { part: unknown }) => part;
 * ```
 */
// `Function` (no call signature) on purpose: a hook typed `(args: never) => unknown` would give an
// inline object literal in a processor list two different contextual signatures (rxagent's and
// this one), and its parameters would lose their types.
export type ForeignHook = Function;

/**
 * A processor whose hooks are typed with the reference implementation's types (a class that
 * `implements Processor` from `@mastra/core/processors`, unchanged). Its argument types name the
 * reference's own `MessageList`, `RequestContext` and chunk classes, which no other class can
 * satisfy (they have private members), so it cannot be a {@link Processor}; rxagent's processor
 * lists and operators accept it as it is ({@link ProcessorLike}) and call its hooks with rxagent's
 * arguments, which carry the fields the reference lists for each hook. Its hooks are checked when
 * the run starts, as every processor's are (a misspelt hook is a `TypeError`).
 *
 * @example
 * ```ts
 * import type { Processor as ReferenceProcessor, ProcessOutputStreamArgs } from '@mastra/core/processors';
 * import type { ChunkType } from '@mastra/core/stream';
 * import { Agent } from 'rxagent';
 * class Shout implements ReferenceProcessor<'shout'> {
 *   readonly id = 'shout' as const;
 *   async processOutputStream({ part }: ProcessOutputStreamArgs): Promise<ChunkType> { return part; }
 * }
 * new Agent({ id: 'a', instructions: 'Be brief.', model, outputProcessors: [new Shout()] });
 * ```
 */
export interface ForeignProcessor {
  /** The processor's id. */
  readonly id: string;
  /** Its `processInput`. */
  readonly processInput?: ForeignHook | undefined;
  /** Its `processInputStep`. */
  readonly processInputStep?: ForeignHook | undefined;
  /** Its `processLLMRequest`. */
  readonly processLLMRequest?: ForeignHook | undefined;
  /** Its `processLLMResponse`. */
  readonly processLLMResponse?: ForeignHook | undefined;
  /** Its `processAPIError`. */
  readonly processAPIError?: ForeignHook | undefined;
  /** Its `processOutputStream`. */
  readonly processOutputStream?: ForeignHook | undefined;
  /** Its `processOutputStep`. */
  readonly processOutputStep?: ForeignHook | undefined;
  /** Its `processToolResult`. */
  readonly processToolResult?: ForeignHook | undefined;
  /** Its `processOutputResult`. */
  readonly processOutputResult?: ForeignHook | undefined;
}

/**
 * What a processor list holds: rxagent {@link Processor}s (object literals get their hooks'
 * argument types from it) and processors typed with the reference's types ({@link ForeignProcessor}).
 *
 * @example
 * ```ts
 * import type { ProcessorLike } from 'rxagent';
 * const list: ProcessorLike[] = [{ id: 'pass', processOutputStream: ({ part }) => part }];
 * ```
 */
export type ProcessorLike = Processor | ForeignProcessor;

/**
 * The list as rxagent runs it (internal: not exported from an entry point). The hooks of a
 * {@link ForeignProcessor} are called with rxagent's arguments, which have every field its own
 * types list, so it runs as a {@link Processor}.
 *
 * @example
 * ```ts
 * const runnable = asProcessors([referenceTypedProcessor]);
 * ```
 */
export function asProcessors(list: readonly ProcessorLike[]): readonly Processor[] {
  return list as readonly Processor[];
}
