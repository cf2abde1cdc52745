import { describe, expect, it } from 'vitest';
import * as processors from '../../src/processors/index.js';

describe('rxagent/processors barrel', () => {
  it('exports every built-in processor under its reference id', () => {
    const ids = [
      [processors.UnicodeNormalizer, 'unicode-normalizer'],
      [processors.BatchPartsProcessor, 'batch-parts'],
      [processors.ToolCallFilter, 'tool-call-filter'],
      [processors.StreamErrorRetryProcessor, 'stream-error-retry-processor'],
    ] as const;
    for (const [Processor, id] of ids) expect(new Processor().id).toBe(id);
    expect(new processors.RegexFilterProcessor({ presets: 'urls' }).id).toBe('regex-filter');
    expect(new processors.TokenLimiter({ limit: 10 })).toBeInstanceOf(processors.TokenLimiterProcessor);
    expect(new processors.ToolSearchProcessor({ tools: {} }).id).toBe('tool-search');
  });

  it('keeps its export list stable (hand-curated)', () => {
    expect(Object.keys(processors).sort()).toMatchInlineSnapshot(`
      [
        "BatchPartsProcessor",
        "DEFAULT_INJECTION_TYPES",
        "DEFAULT_JUDGE_DEADLINE_MS",
        "DEFAULT_JUDGE_INPUT_CHARS",
        "DEFAULT_MAX_CONCURRENT_JUDGE_CALLS",
        "DEFAULT_MAX_JUDGE_CALLS",
        "DEFAULT_MODERATION_CATEGORIES",
        "DEFAULT_PII_TYPES",
        "DEFAULT_WINDOW_SCHEDULE",
        "DEFAULT_WINDOW_SIZE",
        "InMemoryResponseCacheStore",
        "LanguageDetector",
        "ModelSelectionProcessor",
        "ModerationProcessor",
        "PIIDetector",
        "PrefillErrorHandler",
        "PromptInjectionDetector",
        "REGEX_PRESETS",
        "RegexFilterProcessor",
        "ResponseCache",
        "StreamErrorRetryProcessor",
        "StructuredOutputProcessor",
        "SystemPromptScrubber",
        "TOOL_SEARCH_TOOL_NAMES",
        "TokenLimiter",
        "TokenLimiterProcessor",
        "ToolCallFilter",
        "ToolSearchProcessor",
        "UnicodeNormalizer",
        "isBadRequestError",
        "isECONNRESETError",
        "isPrefillRejection",
        "isRetryableOpenAIResponsesStreamError",
        "isRetryableProviderError",
        "responseCacheKey",
        "retryAfterMs",
      ]
    `);
  });
});
