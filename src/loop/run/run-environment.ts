/** Everything one run's steps share: the run context, the processors, the step defaults. */
import type { LanguageModelV4, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { MessageList } from '../../message-list/message-list.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import type { CallSettings, Processor, ProcessInputStepArgs, ProcessInputStepResult, StructuredOutputOptions } from '../../contract/processor-types.js';
import type { AgentToolChoice, AgentToolSet } from '../../contract/tool-types.js';
import type { StepEnvironment } from '../step/step-environment.js';
import type { StopCondition } from './stop-condition.js';

/** `prepareStep`: runs after the input processors' `processInputStep`, with the last word. */
export type PrepareStepFunction = (
  args: ProcessInputStepArgs,
) => ProcessInputStepResult | undefined | void | Promise<ProcessInputStepResult | undefined | void>;

/** A run's shared state: what its steps need (`StepEnvironment`) and the run's defaults. */
export interface RunEnvironment extends StepEnvironment {
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
  readonly toolConcurrency: number;
  /** `stopWhen`, as a list (empty: none; the loop then stops at `maxSteps`). */
  readonly stopWhen: readonly StopCondition[];
  /** Untagged system messages after `processInput`: every step starts from these. */
  initialSystemMessages: CoreSystemMessage[];
  /** Memory's save for runs that end in a tripwire. */
  readonly memoryOnTripwire: ((messageList: MessageList) => Promise<void>) | undefined;
  /** Aborted when the run ends (unsubscribe, abort, end): the signal hooks and tools receive. */
  readonly abortController: AbortController;
  /** Stops following the caller's `abortSignal` (called when the run ends). */
  readonly releaseCallerSignal: () => void;
}
