/**
 * `rxagent/testing`: what users need to test their processors and agents — a marble
 * `TestScheduler` wired to vitest/jest `expect`, chunk builders, `runProcessor` for one hook,
 * mock models (V4, V3, V2) whose streams can be marble diagrams, model stream part helpers, a
 * replay `fetch` that feeds recorded provider HTTP streams through the real provider packages, and
 * the processor conformance kit (`expectConformance`: live, retried, restored, taken over).
 */
export { createTestScheduler, normalizeErrors, type ComparableError, type ExpectLike } from './test-scheduler.js';
export {
  chunk,
  createChunkBuilders,
  testUsage,
  TEST_RUN_ID,
  DEFAULT_TEXT_ID,
  DEFAULT_REASONING_ID,
  type ChunkBuilders,
  type StepFinishInit,
  type ToolResultInit,
  type TripwireInit,
  type UsageCounts,
} from './chunk-builders.js';
export {
  runProcessor,
  type HookArgs,
  type HookResult,
  type RequiredHookArgs,
  type RunProcessorArgs,
  type RunProcessorResult,
} from './run-processor.js';
export { mockModel, type MockModel, type MockModelCall, type MockModelOptions } from './mock-model.js';
export { mockModelV2, mockModelV3, type MockModelV2, type MockModelV3 } from './mock-model-legacy.js';
// the key of a model's Observable stream (what `mockModel` streams through), and the bound on what it
// may send while the run's consumer does not read
export { OBSERVABLE_STREAM, OBSERVABLE_STREAM_MAX_HELD, type ObservableStreamFunction } from '../model/index.js';
export {
  finishPart,
  reasoningParts,
  splitText,
  streamStartPart,
  textParts,
  toolCallParts,
  usage,
  type SimpleUsage,
  type TextPartsOptions,
  type ToolCallPartsOptions,
} from './model-parts.js';
export {
  loadFixture,
  replayFetch,
  toEventLines,
  type ReplayFetch,
  type ReplayFetchOptions,
  type ReplayRequest,
} from './replay-model.js';
export { scriptedModel, scriptContext, type ScriptContext, type ScriptReply, type ScriptRule, type ScriptedModelOptions } from './scripted-model.js';
export { checkProcessor, expectConformance, DEFAULT_CONVERSATIONS } from './conformance.js';
export { ConformanceError } from './conformance-error.js';
export type {
  ConformanceCause,
  ConformanceFinding,
  ConformanceMode,
  ConformanceOptions,
  ConformanceReport,
  Conversation,
  ConversationStep,
  ConversationToolCall,
  ProcessorFactoryContext,
  ProcessorUnderTest,
} from './conformance-types.js';
