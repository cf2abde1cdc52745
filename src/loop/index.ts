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
} from './agent-types.js';
export { AgentOutput } from './output/agent-output.js';
export { RunAbortedError, type RunAbortedErrorOptions } from './run/run-aborted-error.js';
export { AgentRunError } from './run/agent-run-error.js';
export type { PrepareStepFunction } from './run/run-environment.js';
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
