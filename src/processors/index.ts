/**
 * `rxagent/processors`: the built-in processors. Each is a plain `Processor` — put it in an
 * agent's `inputProcessors` / `outputProcessors` / `errorProcessors`, or run it standalone through
 * the operators of `rxagent/operators`. See docs/processors.md for the hooks, options and costs.
 */

// Input normalisation and pattern filters (no model)
export { UnicodeNormalizer, type UnicodeNormalizerOptions } from './unicode-normalizer.js';
export {
  REGEX_PRESETS,
  RegexFilterProcessor,
  type RegexFilterChannel,
  type RegexFilterOptions,
  type RegexFilterPhase,
  type RegexFilterStrategy,
  type RegexMatch,
  type RegexPreset,
  type RegexRedaction,
  type RegexRule,
} from './regex-filter.js';

// Budgets, stream shaping, prompt shaping, tools (no model)
export { BatchPartsProcessor, type BatchPartsOptions, type BatchPartsState } from './batch-parts.js';
export {
  TokenLimiterProcessor,
  TokenLimiterProcessor as TokenLimiter,
  type TokenCountMode,
  type TokenLimiterOptions,
  type TokenLimitStrategy,
} from './token-limiter.js';
export { ToolCallFilter, type ToolCallFilterOptions } from './tool-call-filter.js';
export {
  TOOL_SEARCH_TOOL_NAMES,
  ToolSearchProcessor,
  type ToolSearchOptions,
  type ToolSearchResult,
} from './tool-search.js';

// Error recovery and caching (no model)
export {
  StreamErrorRetryProcessor,
  isBadRequestError,
  isRetryableOpenAIResponsesStreamError,
  isRetryableProviderError,
  retryAfterMs,
  isECONNRESETError,
  type RetryDelay,
  type RetryDelayArgs,
  type StreamErrorRetryMatcher,
  type StreamErrorRetryMatcherConfig,
  type StreamErrorRetryMatcherEntry,
  type StreamErrorRetryOptions,
} from './stream-error-retry.js';
export { PrefillErrorHandler, isPrefillRejection } from './prefill-error-handler.js';
export {
  InMemoryResponseCacheStore,
  ResponseCache,
  responseCacheKey,
  type ResponseCacheKeyInput,
  type ResponseCacheOptions,
  type ResponseCacheStore,
} from './response-cache.js';

// Model-backed guardrails and helpers: shared option types
export type { ErrorStrategy, ModelBackedOptions, CategoryScores } from './internal/model-backed.js';
export { DEFAULT_WINDOW_SIZE, type GuardChannel, type StreamMode } from './internal/checked-stream.js';
export { DEFAULT_JUDGE_INPUT_CHARS, DEFAULT_WINDOW_SCHEDULE } from './internal/judged-spans.js';
export {
  DEFAULT_JUDGE_DEADLINE_MS,
  DEFAULT_MAX_CONCURRENT_JUDGE_CALLS,
  DEFAULT_MAX_JUDGE_CALLS,
  type FailOpenInfo,
  type GuardErrorStrategy,
  type GuardJudgeOptions,
  type JudgeCall,
  type JudgeFailure,
  type JudgeFailureKind,
} from './internal/guard-judge.js';

export {
  DEFAULT_MODERATION_CATEGORIES,
  ModerationProcessor,
  type ModerationAnswer,
  type ModerationOptions,
  type ModerationStrategy,
} from './moderation.js';
export {
  DEFAULT_INJECTION_TYPES,
  PromptInjectionDetector,
  type PromptInjectionAnswer,
  type PromptInjectionDetectionEvent,
  type PromptInjectionOptions,
  type PromptInjectionStrategy,
} from './prompt-injection-detector.js';
export {
  DEFAULT_PII_TYPES,
  PIIDetector,
  type PIIDetection,
  type PIIDetectorOptions,
  type PIIRedactionMethod,
  type PIIStrategy,
} from './pii-detector.js';
export {
  LanguageDetector,
  type LanguageAnswer,
  type LanguageDetectorOptions,
  type LanguageStrategy,
} from './language-detector.js';
export {
  SystemPromptScrubber,
  type SystemPromptLeak,
  type SystemPromptRedactionMethod,
  type SystemPromptScrubberOptions,
  type SystemPromptScrubberStrategy,
} from './system-prompt-scrubber.js';
export {
  StructuredOutputProcessor,
  type StructuredOutputErrorStrategy,
  type StructuredOutputProcessorOptions,
} from './structured-output.js';
export {
  ModelSelectionProcessor,
  type ModelChoice,
  type ModelCriteriaChoice,
  type ModelSelectionDecision,
  type ModelSelectionOptions,
} from './model-selection.js';
