/**
 * The provider seam: V2/V3/V4 models resolved to one V4 shape, the model call as an Observable,
 * V4 parts converted into the run's chunks, usage arithmetic and the provider error types.
 * Sits between the contract (`src/contract`, `src/message-list`) and the operators and the loop.
 * Not a package entry: the public names are re-exported by `rxagent` (see `src/loop/index.ts`).
 */
export {
  resolveModel,
  type AnyLanguageModel,
  type ModelInput,
  type ModelRegistry,
  type ProviderLike,
} from './resolve-model.js';
export { adaptV2 } from './from-v2.js';
export { adaptV3 } from './from-v3.js';
export { OBSERVABLE_STREAM, OBSERVABLE_STREAM_MAX_HELD, getObservableStream, observableMaxHeld, type ObservableStreamFunction } from './observable-stream.js';
export { callModel, liveReadOf, streamModel, streamResultParts, ModelRead, type LiveRead, type ModelResponseMeta, type PartSink } from './stream-model.js';
export { replayCall, replayedChunkProblem } from './replay-call.js';
export type { CallInfo, ModelEvent, ReplayedChunk } from './model-events.js';
export {
  modelPartToChunk,
  newStepFacts,
  newToolCallIds,
  runToolCallId,
  toolCallIdsIn,
  unwrapStreamError,
  withFact,
  type StepFacts,
  type ToolCallIds,
} from './model-part-to-chunk.js';
export { addUsage, emptyUsage, fromV4Usage } from './usage.js';
export { providerError } from './provider-error.js';
export { callMetadataOf, cancelQuietly, streamOf } from './checked-stream.js';
export { toToolSchema, validateToolInput, type ToolInputValidation } from './tool-schema.js';
export { ModelCallError, type ModelCallErrorOptions, type ModelCallErrorSource } from './errors/model-call-error.js';
export {
  InvalidModelResponseError,
  type InvalidModelResponseErrorOptions,
} from './errors/invalid-model-response-error.js';
