/**
 * What one step needs of its run besides the run's state: the operators' context, the processors,
 * the fenced output chain, the step's defaults, the id and clock sources. The agent's
 * `RunEnvironment` is one; `processorsMiddleware` builds one per model call — both run the same
 * attempt (`attempt.ts`).
 */
import type { Observable } from 'rxjs';
import type { ModelEvent } from '../../model/model-events.js';
import type { StepInput } from '../../operators/process-input-step.js';
import type { RunContext } from '../../operators/run-context.js';
import type { Processor } from '../../contract/processor-types.js';
import type { CustomOutlet } from '../data/custom-outlet.js';
import type { StopCondition } from './stop-condition.js';
import type { RunDurability } from '../data/run-durability.js';
import type { AttemptState, PreparedRequest } from '../data/attempt-state.js';
import type { OutputChain } from './output-chain.js';

/**
 * How an attempt reaches its model: the agent prepares each attempt's request and calls the
 * step's model; the AI SDK middleware prepared the request in `transformParams` and streams the
 * call the AI SDK opened.
 */
export interface ModelAccess {
  /**
   * The request of `attempt` (the agent: `processInputStep`, the prompt with `feedback` — the reason
   * of the attempt a tripwire retry rejected — after the history, `processLLMRequest`): one value.
   */
  prepare(attempt: AttemptState, feedback: string | undefined): Observable<PreparedRequest> | PreparedRequest;
  /** The model call of a prepared request, as its events (a live call, or a cached response replayed). */
  call(attempt: AttemptState, prepared: PreparedRequest): Observable<ModelEvent>;
}

/** A step's view of its run. */
export interface StepEnvironment {
  readonly ctx: RunContext;
  readonly runId: string;
  /** `processLLMRequest`, `processLLMResponse`. */
  readonly inputProcessors: readonly Processor[];
  /** `processOutputStream`, `processOutputStep`, `processToolResult`. */
  readonly outputProcessors: readonly Processor[];
  /** `processInputStep`: the input processors, then `prepareStep`. */
  readonly stepProcessors: readonly Processor[];
  /** `processAPIError`: input, output and error processors, in that order. */
  readonly apiErrorProcessors: readonly Processor[];
  /** API-error retry budget when `maxProcessorRetries` is unset: 10 with error processors, else 0. */
  readonly defaultApiErrorBudget: number;
  /** The run's fenced `processOutputStream` chain (see `output-chain.ts`). */
  readonly chain: OutputChain;
  /** `writer.custom()` chunks written outside `processOutputStream`, drained into the step. */
  readonly outlet: CustomOutlet;
  /** What a step asks the model with before `processInputStep` (the run's defaults). */
  readonly stepDefaults: Omit<StepInput, 'stepNumber'>;
  readonly model: ModelAccess;
  readonly generateId: () => string;
  readonly now: () => Date;
  readonly threadId: string | undefined;
  readonly resourceId: string | undefined;
  readonly maxSteps: number;
  /** `stopWhen`, as a list (empty: none; the loop then stops at `maxSteps`). */
  readonly stopWhen: readonly StopCondition[];
  /** Whether client tool calls run in the step (the agent) or are left to the caller (the middleware). */
  readonly executesTools: boolean;
  /** Most tool calls of one step run at once. */
  readonly toolConcurrency: number;
  /** Durable execution's hooks (commit points, the tool ledger); none for a plain run. */
  readonly durability?: RunDurability | undefined;
}
