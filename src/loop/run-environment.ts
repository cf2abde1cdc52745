/** Everything one run's steps share: the run context, the processors, the step defaults, the totals. */
import type { LanguageModelUsage } from 'ai';
import type { LanguageModelV4, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { OperatorFunction } from 'rxjs';
import type { MessageList } from '../message-list/message-list.js';
import type { CoreSystemMessage } from '../message-list/types.js';
import type { RunContext } from '../operators/run-context.js';
import type { ChunkType, TripwirePayload } from '../processor/chunk-types.js';
import type { CallSettings, OutputResult, Processor, ProcessInputStepArgs, ProcessInputStepResult, StructuredOutputOptions } from '../processor/processor-types.js';
import type { AgentToolChoice, AgentToolSet } from '../processor/tool-types.js';
import type { CustomOutlet } from './custom-outlet.js';

/** `prepareStep`: runs after the input processors' `processInputStep`, with the last word. */
export type PrepareStepFunction = (
  args: ProcessInputStepArgs,
) => ProcessInputStepResult | undefined | void | Promise<ProcessInputStepResult | undefined | void>;

/** A run's shared state. */
export interface RunEnvironment {
  readonly ctx: RunContext;
  readonly runId: string;
  readonly inputProcessors: readonly Processor[];
  readonly outputProcessors: readonly Processor[];
  /** `processInputStep` chain: input processors then `prepareStep`. */
  readonly stepProcessors: readonly Processor[];
  /** `processAPIError` chain: input, output, error processors in that order. */
  readonly apiErrorProcessors: readonly Processor[];
  /** API-error retry budget when `maxProcessorRetries` is unset: 10 with error processors, else 0. */
  readonly defaultApiErrorBudget: number;
  readonly model: LanguageModelV4;
  readonly tools: AgentToolSet | undefined;
  readonly toolChoice: AgentToolChoice | undefined;
  readonly activeTools: string[] | undefined;
  readonly providerOptions: SharedV4ProviderOptions | undefined;
  readonly modelSettings: CallSettings | undefined;
  readonly structuredOutput: StructuredOutputOptions | undefined;
  readonly maxSteps: number;
  readonly toolConcurrency: number;
  /** The output-processor chain of a step's chunks (fenced: see `output-chain.ts`). */
  readonly chain: OperatorFunction<ChunkType, ChunkType>;
  /** The chain without its fence, and the fence (see `output-chain.ts`): the model phase fuses them. */
  readonly rawChain: OperatorFunction<ChunkType, ChunkType>;
  readonly admit: ((chunk: ChunkType) => boolean) | undefined;
  /** Tool calls the model emitted in the current step (undefined when no hook can rewrite chunks). */
  readonly requestedToolCalls: Map<string, string> | undefined;
  readonly outlet: CustomOutlet;
  readonly generateId: () => string;
  readonly now: () => Date;
  readonly threadId: string | undefined;
  readonly resourceId: string | undefined;
  /** Untagged system messages after `processInput`: every step starts from these. */
  initialSystemMessages: CoreSystemMessage[];
  /**
   * The `finish` chunk as the output processors returned it at the end of the last step's output
   * (see `step.ts`); it goes out last, carrying the run's result. Unset until then.
   */
  finish: ChunkType | undefined;
  /** Whether the last finished step asked for another one. */
  continueLoop: boolean;
  /** Memory's save for runs that end in a tripwire. */
  readonly memoryOnTripwire: ((messageList: MessageList) => Promise<void>) | undefined;
  /** Aborted when the run ends (unsubscribe, abort, end): the signal hooks and tools receive. */
  readonly abortController: AbortController;
  /** Stops following the caller's `abortSignal` (called when the run ends). */
  readonly releaseCallerSignal: () => void;
}
