/** `rxagent/operators`: one RxJS operator per processor hook, plus the run context helpers. */
export { processInput, runProcessInput } from './process-input.js';
export { processInputStep, runProcessInputStep, type StepInput } from './process-input-step.js';
export { processLLMRequest, runProcessLLMRequest, type LLMRequest } from './process-llm-request.js';
export { processLLMResponse, runProcessLLMResponse, type LLMResponse } from './process-llm-response.js';
export { processOutputStream } from './process-output-stream.js';
export { processOutputStep, runProcessOutputStep, type StepOutput } from './process-output-step.js';
export { processToolResult, runProcessToolResult, type ToolResultEvent } from './process-tool-result.js';
export { processOutputResult, runProcessOutputResult } from './process-output-result.js';
export {
  retryOnAPIError,
  askProcessAPIError,
  apiErrorBudget,
  DEFAULT_API_ERROR_RETRIES,
  type RetryOnAPIErrorOptions,
} from './retry-on-api-error.js';
export { retryOnTripwire, type RetryOnTripwireOptions } from './retry-on-tripwire.js';
export { tripwireToChunk, toTripwireChunk } from './tripwire-to-chunk.js';
export { ofChunkType } from './of-chunk-type.js';
export { createRunContext, assignProcessorIndexes, assertDataChunk, type RunContext, type RunContextInit } from './run-context.js';
