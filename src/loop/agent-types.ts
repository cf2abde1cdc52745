/** The Agent's configuration, call options and results. */
import type { LanguageModelUsage } from 'ai';
import type { SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { InboundMessage, CoreSystemMessage } from '../message-list/types.js';
import type { RxFinishReason, ToolCallInfo, ToolResultInfo, TripwirePayload, ChunkType } from '../contract/chunk-types.js';
import type { CallSettings, ModelInput, ProcessInputStepArgs, ProcessInputStepResult, Processor, StepResult, StructuredOutputOptions } from '../contract/processor-types.js';
import type { RequestContext } from '../contract/request-context.js';
import type { AgentToolChoice, AgentToolSet } from '../contract/tool-types.js';
import type { TracingContext } from '../contract/tracing-context.js';
import type { ModelRegistry } from '../model/resolve-model.js';
import type { StopCondition } from './run/stop-condition.js';

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
  instructions?: AgentInstructions;
  inputProcessors?: Processor[];
  outputProcessors?: Processor[];
  errorProcessors?: Processor[];
  maxProcessorRetries?: number;
  /**
   * A processor hook (async) that has not settled after this many milliseconds fails closed: the
   * run ends with a `ProcessorError` naming the processor, the hook and the timeout. Default: no limit.
   */
  processorTimeoutMs?: number;
  requestContext?: RequestContext;
  memory?: AgentMemoryCall;
  abortSignal?: AbortSignal;
  toolChoice?: AgentToolChoice;
  activeTools?: string[];
  modelSettings?: CallSettings;
  providerOptions?: SharedV4ProviderOptions;
  structuredOutput?: StructuredOutputOptions;
  /** Most model steps of this call (default: the agent's `maxSteps`, else 5 — or no limit when `stopWhen` is set). */
  maxSteps?: number;
  /**
   * When the loop stops going on after a tool step (see {@link StopCondition}): checked after each
   * step whose tool calls ran, with the run's steps; any condition met ends the loop. Replaces the
   * default limit of 5 steps — give `maxSteps` too (or `stepCountIs(n)` in the list) for a hard cap.
   */
  stopWhen?: StopCondition | readonly StopCondition[];
  prepareStep?: PrepareStepFunction;
  tracingContext?: TracingContext;
  /** The run id (default: generated). */
  runId?: string;
}

/** An Agent's configuration. */
export interface AgentConfig {
  id: string;
  name?: string;
  description?: string;
  instructions?: DynamicArgument<AgentInstructions>;
  model: DynamicArgument<ModelInput>;
  /** Resolves `'provider/model'` ids: an AI SDK provider registry or a record of providers. */
  providers?: ModelRegistry;
  tools?: DynamicArgument<AgentToolSet>;
  memory?: AgentMemory;
  inputProcessors?: DynamicArgument<Processor[]>;
  outputProcessors?: DynamicArgument<Processor[]>;
  errorProcessors?: DynamicArgument<Processor[]>;
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
  defaultOptions?: AgentCallOptions;
  /** Id and clock sources (inject for deterministic tests). */
  generateId?: () => string;
  /** The clock for message timestamps (default `() => new Date()`). */
  now?: () => Date;
}

/** What `generate()` resolves with. */
export interface GenerateResult {
  runId: string;
  text: string;
  finishReason: RxFinishReason;
  usage: LanguageModelUsage;
  steps: StepResult[];
  toolCalls: ToolCallInfo[];
  toolResults: ToolResultInfo[];
  /** Set when a processor aborted the run. */
  tripwire?: TripwirePayload;
  object?: unknown;
  /** The run's chunks, in order. */
  chunks: ChunkType[];
}
