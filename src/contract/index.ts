/** The processor contract: types, chunks, errors, request and tracing context. */
export type {
  AbortFunction,
  CachedLLMStepResponse,
  CallSettings,
  DurableStateOption,
  ErrorProcessor,
  ForeignHook,
  ForeignProcessor,
  HookReturn,
  InputProcessor,
  ModelCallOptions,
  ModelInput,
  OutputProcessor,
  OutputResult,
  ProcessAPIErrorArgs,
  ProcessAPIErrorResult,
  ProcessInputArgs,
  ProcessInputResult,
  ProcessInputStepArgs,
  ProcessInputStepResult,
  ProcessLLMRequestArgs,
  ProcessLLMRequestResult,
  ProcessLLMResponseArgs,
  ProcessLLMResponseResult,
  ProcessOutputResultArgs,
  ProcessOutputStepArgs,
  ProcessOutputStreamArgs,
  ProcessToolResultArgs,
  Processor,
  ProcessorContext,
  ProcessorLike,
  ProcessorMessageResult,
  ProcessorState,
  ProcessorViolation,
  StepResult,
  StructuredOutputOptions,
} from './processor-types.js';
export type {
  AgentChunk,
  AgentChunkKind,
  CachedLLMStepChunk,
  ChunkFrom,
  ChunkOfType,
  ChunkPayloads,
  ChunkType,
  DataChunkType,
  RxFinishReason,
  TerminalChunk,
  ToolCallInfo,
  ToolResultInfo,
  TripwirePayload,
} from './chunk-types.js';
export type { MemoryFence } from './memory-types.js';
export * from './chunk-guards.js';
export { currentAttemptParts } from './current-attempt-parts.js';
export { asProcessors } from './processor-types.js';
export { TripWire, isForeignTripWire, toTripWire, type ForeignTripWire, type TripWireOptions } from './errors/trip-wire.js';
export { ProcessorError, type ProcessorHookName } from './errors/processor-error.js';
export { ModelResolutionError } from './errors/model-resolution-error.js';
export { JsonEncodingError } from './errors/json-encoding-error.js';
export { InvalidProcessorOptionError } from './errors/invalid-processor-option-error.js';
export { encodeJson, findNonJson, toJsonValue, type JsonValue, type NonJsonAt } from './json-codec.js';
export { RequestContext, type ReadableRequestContext } from './request-context.js';
export type { TracingContext, ProcessorHookEvent, JudgeCallEvent } from './tracing-context.js';
export type { ProcessorStreamWriter } from './stream-writer.js';
export type { ProcessorSignal, ProcessorSignalInput, SendSignalFunction, SignalTextPart } from './signal-types.js';
export type {
  AgentFunctionTool,
  AgentProviderTool,
  AgentTool,
  AgentToolChoice,
  AgentToolExecutionOptions,
  AgentToolSet,
  MastraCompatibleTool,
  ToolExecute,
  ToolObserve,
} from './tool-types.js';
export type {
  LanguageModelV1,
  LanguageModelV1CallOptions,
  LanguageModelV1GenerateResult,
  LanguageModelV1Message,
  LanguageModelV1FunctionTool,
  LanguageModelV1MessagePart,
  LanguageModelV1Mode,
  LanguageModelV1RawResponse,
  LanguageModelV1Request,
  LanguageModelV1ResponseFormat,
  LanguageModelV1ResponseMetadata,
  LanguageModelV1StreamPart,
  LanguageModelV1StreamResult,
  LanguageModelV1ToolCall,
  LanguageModelV1Usage,
} from './language-model-v1.js';
export { FOLLOW_UP_CHUNKS_KEY, REPROCESS_PART_KEY } from './stream-follow-up.js';

// Shared with the built-in processors, the testing kit and the AI SDK interop (which import the
// contract through this file only); not re-exported by `rxagent`.
export { makeChunk } from './make-chunk.js';
export { terminalChunk, type RunEnding } from './terminal-chunk.js';
export { DemandGate } from './demand-gate.js';
export { RUN_FINISHED, RUN_UNFINISHED, endedWithFinish } from './run-ending.js';
export { tripwirePayload } from './tripwire-payload.js';
export { toolDescription } from './tool-description.js';
export { isObservableResult } from './maybe-async.js';
export { defaultAbortReason, notifyViolation } from './violation.js';
export { PROCESSOR_HOOKS, checkHookNames } from './processor-checks.js';
export { hasHook, isHooked } from './has-hook.js';
export { warnOnce } from './warn-once.js';
export { closestKey } from './closest-key.js';
export { sentCallOptions } from './sent-call-options.js';
export { MAX_TIMER_MS, isTimerDelay } from './timer-delay.js';
export { CLIENT_ERROR_MESSAGE, chunkProblem, clientSafeChunk, clientSafeError } from './client-safe-chunk.js';
export { readOnlyStreamParts } from './stream-parts-view.js';
export { RxAgentError, hasMarker } from '../errors/rxagent-error.js';
export { isReadableError, jsonOrString, thrownMessage } from '../errors/thrown-message.js';
export { commitIdIncarnation } from './commit-message-ids.js';
