/** `rxagent/operators`: one RxJS operator per processor hook, plus the run context helpers. */
export { processInput } from './process-input.js';
export { processInputStep, type StepInput } from './process-input-step.js';
export { processLLMRequest, type LLMRequest } from './process-llm-request.js';
export { processLLMResponse, type LLMResponse } from './process-llm-response.js';
export { processOutputStream } from './process-output-stream.js';
export { processOutputStep, type StepOutput } from './process-output-step.js';
export { processToolResult, type ToolResultEvent } from './process-tool-result.js';
export { processOutputResult } from './process-output-result.js';
export {
  retryOnAPIError,
  DEFAULT_API_ERROR_RETRIES,
  type RetryOnAPIErrorOptions,
} from './retry-on-api-error.js';
export { retryOnTripwire, type RetryOnTripwireOptions } from './retry-on-tripwire.js';
export { tripwireToChunk, toTripwireChunk } from './tripwire-to-chunk.js';
export { ofChunkType } from './of-chunk-type.js';
export { createRunContext, assignProcessorIndexes, assertDataChunk, type RunContext, type RunContextInit } from './run-context.js';
