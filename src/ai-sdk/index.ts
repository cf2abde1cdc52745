/**
 * `rxagent/ai-sdk`: interop with the AI SDK and OpenTelemetry — a run as a UI message stream
 * (`useChat`), `useChat` messages as agent input, processors as language-model middleware for
 * `streamText` / `generateText`, and spans for runs, steps, model calls, tools and processor hooks.
 */
export { toUIMessageStream, type ToUIMessageStreamOptions } from './to-ui-message-stream.js';
export { toUIMessageStreamResponse, type UIMessageStreamResponseOptions } from './to-ui-message-stream-response.js';
export { fromUIMessages, type FromUIMessagesOptions } from './from-ui-messages.js';
export { resumeUIMessageStream, type ResumeUIMessageStreamOptions } from './resume-ui-message-stream.js';
export { resumeUIMessageStreamResponse, type ResumeUIMessageStreamResponseOptions } from './resume-ui-message-stream-response.js';
export { DurableChatTransport, type DurableChatTransportOptions } from './durable-chat-transport.js';
export {
  RETRY_PART_TYPE,
  TRIPWIRE_PART_TYPE,
  type RetryUIData,
  type RxAgentUIDataTypes,
  type RxAgentUIMessage,
  type TripwireUIData,
} from './ui-data-types.js';
export { processorsMiddleware, type ProcessorsMiddlewareOptions } from './processors-middleware.js';
export { DuplicateToolNameError } from './errors/duplicate-tool-name-error.js';
export { TransportLimitError, type TransportLimit } from './errors/transport-limit-error.js';
export { chunkToModelPart } from './chunk-to-model-part.js';
export {
  createRunTelemetry,
  traceRun,
  withTelemetry,
  type RunTelemetry,
  type RunTelemetryOptions,
  type TelemetryAttributeValue,
  type TelemetryAttributes,
  type TelemetryContext,
  type TelemetryTracer,
} from './telemetry.js';
// the AI SDK 4 provider spec (`@ai-sdk/provider@1`), which rxagent accepts as a model and adapts inside
export type {
  LanguageModelV1,
  LanguageModelV1CallOptions,
  LanguageModelV1FunctionTool,
  LanguageModelV1GenerateResult,
  LanguageModelV1Message,
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
} from '../contract/index.js';
