/** The Agent's configuration, call options and results. */
import type { LanguageModelUsage } from 'ai';
import type { SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { InboundMessage, CoreSystemMessage } from '../message-list/types.js';
import type { RxFinishReason, ToolCallInfo, ToolResultInfo, TripwirePayload, ChunkType } from '../contract/chunk-types.js';
import type { CallSettings, ModelInput, ProcessInputStepArgs, ProcessInputStepResult, Processor, ProcessorLike, StepResult, StructuredOutputOptions } from '../contract/processor-types.js';
import type { RequestContext } from '../contract/request-context.js';
import type { AgentToolChoice, AgentToolSet } from '../contract/tool-types.js';
import type { TracingContext } from '../contract/tracing-context.js';
import type { DemandGate } from '../contract/demand-gate.js';
import type { ModelRegistry } from '../model/resolve-model.js';
import type { StopCondition } from './step/stop-condition.js';

/** `prepareStep`: runs after the input processors' `processInputStep`, with the last word. */
export type PrepareStepFunction = (
  args: ProcessInputStepArgs,
) => ProcessInputStepResult | undefined | void | Promise<ProcessInputStepResult | undefined | void>;

/** A value, or a function of the call's `requestContext` returning it (sync or async). */
export type DynamicArgument<T> = T | ((args: { requestContext: RequestContext }) => T | Promise<T>);

/** System instructions: text, system messages, or a list of either. */
export type AgentInstructions = string | CoreSystemMessage | ReadonlyArray<string | CoreSystemMessage>;

/** What an agent call runs on: a prompt string, a message, or messages (AI SDK or stored shapes). */
export type AgentInput = InboundMessage | ReadonlyArray<InboundMessage>;

export type { AgentMemory, AgentMemoryCall, AgentMemoryProcessors } from '../contract/memory-types.js';
import type { AgentMemory, AgentMemoryCall } from '../contract/memory-types.js';

/** Options of one `stream$()` / `stream()` / `generate()` call. Processor arrays replace the agent's. */
export interface AgentCallOptions {
  /** System instructions for this call: replace the agent's. */
  instructions?: AgentInstructions;
  /** Input processors for this call: replace the agent's (memory's stay). */
  inputProcessors?: ProcessorLike[];
  /** Output processors for this call: replace the agent's (memory's stay). */
  outputProcessors?: ProcessorLike[];
  /** Error processors (`processAPIError`) for this call: replace the agent's. */
  errorProcessors?: ProcessorLike[];
  /** How many times processors may reject a step with `abort(…, { retry: true })` (and API errors be retried) in one run. */
  maxProcessorRetries?: number;
  /**
   * A processor hook (async) that has not settled after this many milliseconds fails closed: the
   * run ends with a `ProcessorError` naming the processor, the hook and the timeout. Default: no limit.
   */
  processorTimeoutMs?: number;
  /** Values for processors and tools (`threadId`, `resourceId`, your own); the run reads through it and never writes into it. */
  requestContext?: RequestContext;
  /** The memory thread of this call: `{ thread, resource }` (the agent needs `memory`). */
  memory?: AgentMemoryCall;
  /** Cancels the run: the provider request, tools and hooks get it; the run ends with an `abort` chunk. */
  abortSignal?: AbortSignal;
  /** How the model may use tools. */
  toolChoice?: AgentToolChoice;
  /** The names of the tools the model may call (all when unset). */
  activeTools?: string[];
  /** Call settings (temperature, maxOutputTokens, …). */
  modelSettings?: CallSettings;
  /** Provider-specific options (by provider name). */
  providerOptions?: SharedV4ProviderOptions;
  /** Structured output: the zod schema of the object to produce. */
  structuredOutput?: StructuredOutputOptions;
  /** Most model steps of this call (default: the agent's `maxSteps`, else 5 — or no limit when `stopWhen` is set). */
  maxSteps?: number;
  /**
   * When the loop stops going on after a tool step (see {@link StopCondition}): checked after each
   * step whose tool calls ran, with the run's steps; any condition met ends the loop. Replaces the
   * default limit of 5 steps — give `maxSteps` too (or `stepCountIs(n)` in the list) for a hard cap.
   */
  stopWhen?: StopCondition | readonly StopCondition[];
  /** Called before each step (after the input processors' `processInputStep`) with the step's input; returns changes to it. */
  prepareStep?: PrepareStepFunction;
  /** Tracing of the run (spans of processor hooks). */
  tracingContext?: TracingContext;
  /** The run id (default: generated). */
  runId?: string;
  /**
   * The provider method `generate()` calls. `'doGenerate'` (the default): `doGenerate` when no
   * output processor has `processOutputStream` — the same results and hooks, each text and
   * reasoning block then one delta in `chunks` — else `doStream`. `'doStream'`: always
   * `doStream` (a proxy or an HTTP recording that only streams). `stream()` and `stream$()`
   * always stream.
   */
  generateWith?: 'doGenerate' | 'doStream';
}

/**
 * Options of one `stream$()` call: the call options, and the demand gate of the consumer that
 * paces the run.
 *
 * @example
 * ```ts
 * import { DemandGate } from 'rxagent';
 * import { toUIMessageStream } from 'rxagent/ai-sdk';
 * const demand = new DemandGate();
 * const stream = toUIMessageStream(agent.stream$('Hi', { demand }).pipe(map(redact)), { demand });
 * ```
 */
export interface StreamCallOptions extends AgentCallOptions {
  /**
   * The gate of the consumer that paces this run: while anyone holds it, the run stops reading
   * the provider. Give the same gate to the consumer (`toUIMessageStream(chunks$, { demand })`)
   * when operators stand between the run and it; one gate per subscription (a second subscriber
   * of the same Observable would be paced by the first one's reader). Default: a gate of the run's
   * own that nobody holds — unless the run is handed as it is to a consumer that paces it.
   */
  demand?: DemandGate;
}

/** An Agent's configuration. */
export interface AgentConfig {
  /** The agent's id (in chunks, memory and telemetry). */
  id: string;
  /** A human-readable name. */
  name?: string;
  /** What the agent is for. */
  description?: string;
  /** System instructions: a string, system messages, or a function of `{ requestContext }` returning them. */
  instructions?: DynamicArgument<AgentInstructions>;
  /** The model: a `LanguageModelV1`–`V4` object, a `'provider/model'` id (with `providers`), or a function of `{ requestContext }` returning one. */
  model: DynamicArgument<ModelInput>;
  /** Resolves `'provider/model'` ids: an AI SDK provider registry or a record of providers. */
  providers?: ModelRegistry;
  /** Tools by name (an object, or a function of `{ requestContext }` returning one). */
  tools?: DynamicArgument<AgentToolSet>;
  /** Memory threads (`new Memory({ storage })`); calls then pass `memory: { thread, resource }`. */
  memory?: AgentMemory;
  /** Input processors: an array, or a function of `{ requestContext }` returning one. */
  inputProcessors?: DynamicArgument<ProcessorLike[]>;
  /** Output processors: an array, or a function of `{ requestContext }` returning one. */
  outputProcessors?: DynamicArgument<ProcessorLike[]>;
  /** Error processors (`processAPIError`): an array, or a function of `{ requestContext }` returning one. */
  errorProcessors?: DynamicArgument<ProcessorLike[]>;
  /** How many times processors may reject a step with `abort(…, { retry: true })` (and API errors be retried) in one run. */
  maxProcessorRetries?: number;
  /**
   * A processor hook (async) that has not settled after this many milliseconds fails closed: the
   * run ends with a `ProcessorError` naming the processor, the hook and the timeout. Default: no limit.
   */
  processorTimeoutMs?: number;
  /** Most model steps per call (default 5, or no limit when `stopWhen` is set). */
  maxSteps?: number;
  /** The agent's stop conditions (a call's `stopWhen` replaces them); see {@link AgentCallOptions.stopWhen}. */
  stopWhen?: StopCondition | readonly StopCondition[];
  /** Most tool calls of one step run at once (default 8). */
  toolConcurrency?: number;
  /** Call options every call starts from (a call's own options win). */
  defaultOptions?: AgentCallOptions;
  /** Id and clock sources (inject for deterministic tests). */
  generateId?: () => string;
  /** The clock for message timestamps (default `() => new Date()`). */
  now?: () => Date;
}

/** What `generate()` resolves with. */
export interface GenerateResult {
  /** The run's id. */
  runId: string;
  /** The accepted text of every step (`''` after a tripwire). */
  text: string;
  /** Why the run ended (`'other'` after a tripwire). */
  finishReason: RxFinishReason;
  /** Token usage of every model call of the run. */
  usage: LanguageModelUsage;
  /** Each step's result (a rejected retry attempt is a step of its own). */
  steps: StepResult[];
  /** The tool calls of every accepted step. */
  toolCalls: ToolCallInfo[];
  /** The tool results of every accepted step. */
  toolResults: ToolResultInfo[];
  /** Set when a processor aborted the run. */
  tripwire?: TripwirePayload;
  /** The structured output object (with `structuredOutput`). */
  object?: unknown;
  /**
   * The run's chunks, in order. When the answer came through `doGenerate` (see `generateWith`),
   * each text or reasoning block is one delta and tool calls come whole.
   */
  chunks: ChunkType[];
}
