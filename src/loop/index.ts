/** The agent loop: `Agent`, its options and results, and the model seam. */
export { Agent } from './agent.js';
export type {
  AgentCallOptions,
  AgentConfig,
  AgentInput,
  AgentInstructions,
  AgentMemory,
  AgentMemoryCall,
  DynamicArgument,
  GenerateResult,
  PrepareStepFunction,
  StreamCallOptions,
} from './agent-types.js';
export { AgentOutput } from './consumers/agent-output.js';
export { RunAbortedError, type RunAbortedErrorOptions } from './run/run-aborted-error.js';
export { AgentRunError } from './run/agent-run-error.js';
export { hasToolCall, stepCountIs, type StopCondition, type StopConditionOptions } from './step/stop-condition.js';
export { StopConditionError, type StopConditionErrorOptions } from './step/stop-condition-error.js';
export {
  resolveModel,
  type AnyLanguageModel,
  type ModelRegistry,
  type ProviderLike,
  ModelCallError,
  type ModelCallErrorOptions,
  type ModelCallErrorSource,
  InvalidModelResponseError,
  type InvalidModelResponseErrorOptions,
} from '../model/index.js';
export { ToolExecutionError, type ToolExecutionErrorOptions } from './tools/tool-execution-error.js';

// Not re-exported by `rxagent`. The AI SDK interop reuses the loop's own code: run pacing and the
// option error for `toUIMessageStream`; the attempt (the step-output kernel, the output chain,
// `finish` at the end of the output, the response into the list, post-model hooks, `step-finish`)
// for `processorsMiddleware`.
export { pacedRunOf } from './consumers/paced-run.js';
export { optionError, validateRunArguments } from './run/validate-options.js';
export { CustomOutlet } from './data/custom-outlet.js';
export { closeBrackets } from './run/close-brackets.js';
export { createRunState, type RunState } from './data/run-state.js';
export type { StepEnvironment } from './step/step-environment.js';
export { isStepEnd, runAttempt } from './step/attempt.js';
export { stepAt } from './data/run-position.js';
export { createOutputChain } from './step/output-chain.js';
export { createRun, type RunWiring } from './run/create-run.js';
export { agentConfig, runAgent } from './agent.js';
export { isChunk, isRunEnd, type DurableRunItem, type RunItem } from './run/run-events.js';
export { withoutCommitPoints } from './data/commit-points.js';
export { isCommitPoint, type LedgerToolCall, type RunCommitPoint, type RunDurability, type ToolBegin, type ToolLedger } from './data/run-durability.js';
export { snapshotRun, restoreRun, reviveChunk, RUN_SNAPSHOT_FORMAT, type RunSnapshot, type RunPosition } from './data/run-snapshot.js';
export { DurableStateError } from './data/durable-state-error.js';
export { RunSnapshotError } from './data/run-snapshot-error.js';
