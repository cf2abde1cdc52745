/**
 * Every built-in processor passes the conformance kit (issue 34 §5): driven through the default
 * conversations live, retried, restored at every commit point and taken over after a crash at
 * every commit and flush, each gives the live run's chunks, messages and state. Judges answer from
 * the judged text only (cheap mock models), so every mode gets the same verdicts.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Processor } from 'rxagent';
import {
  BatchPartsProcessor,
  LanguageDetector,
  ModelSelectionProcessor,
  ModerationProcessor,
  PIIDetector,
  PrefillErrorHandler,
  PromptInjectionDetector,
  RegexFilterProcessor,
  ResponseCache,
  StreamErrorRetryProcessor,
  StructuredOutputProcessor,
  SystemPromptScrubber,
  TokenLimiterProcessor,
  ToolCallFilter,
  ToolSearchProcessor,
  UnicodeNormalizer,
} from 'rxagent/processors';
import { checkProcessor, type ProcessorUnderTest } from 'rxagent/testing';
import { judgeModel } from '../processors/support/harness.js';

/** Judges answering from the judged text only. */
const judges = {
  moderation: () => judgeModel(() => '{"categories": {"violence": 0.02, "hate": 0}}'),
  injection: () => judgeModel(() => '{"categories": {"injection": 0.01}}'),
  pii: () => judgeModel(({ prompt }) => JSON.stringify({ detections: prompt.includes('A-17') ? [{ type: 'order-number', value: 'A-17', confidence: 0.95 }] : [] })),
  language: () => judgeModel(() => '{"language": "en", "confidence": 0.99}'),
  scrubber: () => judgeModel(({ prompt }) => (prompt.split('Response passage')[1]?.includes('Lisbon') ? JSON.stringify({ detections: [{ value: 'Lisbon', confidence: 0.9 }] }) : '{"detections": []}')),
  router: () => judgeModel(() => '{"choice": "main", "confidence": 0.9}'),
  structurer: () => judgeModel(() => '{"summary": "ok"}'),
};

/** Each processor class `rxagent/processors` exports, as a factory (a new instance per run, as each process of a deployment makes its own). */
const BUILT_INS: Record<string, ProcessorUnderTest> = {
  UnicodeNormalizer: () => new UnicodeNormalizer(),
  RegexFilterProcessor: () => new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' }),
  BatchPartsProcessor: () => new BatchPartsProcessor({ batchSize: 3 }),
  TokenLimiterProcessor: () => new TokenLimiterProcessor({ limit: 100_000, outputLimit: 30 }),
  ToolCallFilter: () => new ToolCallFilter(),
  ToolSearchProcessor: () =>
    new ToolSearchProcessor({ tools: { refund: { description: 'Refunds an order', inputSchema: z.object({ order: z.string() }), execute: async () => ({ ok: true }) } } }),
  StreamErrorRetryProcessor: () => new StreamErrorRetryProcessor({ maxRetries: 2, delayMs: 1 }),
  PrefillErrorHandler: () => new PrefillErrorHandler(),
  ResponseCache: () => new ResponseCache(),
  ModerationProcessor: () => new ModerationProcessor({ model: judges.moderation(), streamMode: 'window', windowSchedule: [40, 80] }),
  PromptInjectionDetector: () => new PromptInjectionDetector({ model: judges.injection() }),
  PIIDetector: () => new PIIDetector({ model: judges.pii(), streamMode: 'window', windowSchedule: [40, 80], redactionMethod: 'placeholder' }),
  LanguageDetector: () => new LanguageDetector({ model: judges.language(), targetLanguages: ['en'] }),
  SystemPromptScrubber: () => new SystemPromptScrubber({ model: judges.scrubber(), streamMode: 'window', windowSchedule: [40, 80], redactionMethod: 'placeholder' }),
  StructuredOutputProcessor: () => new StructuredOutputProcessor({ schema: z.object({ summary: z.string() }), model: judges.structurer() }),
  ModelSelectionProcessor: ({ model }) => new ModelSelectionProcessor({ model: judges.router(), choices: [{ id: 'main', model, description: 'the agent' }] }),
};

describe('the conformance kit on every built-in processor', () => {
  it.each(Object.keys(BUILT_INS))('%s conforms: the same output, messages and state live, retried, restored and taken over', async (name) => {
    const report = await checkProcessor(BUILT_INS[name]!);
    expect(report.text).toMatch(/ conforms: /);
    expect(report.ok).toBe(true);
    expect(report.runs).toBeGreaterThan(20);
  });

  it('covers every processor class rxagent/processors exports', async () => {
    const exports: Record<string, unknown> = await import('rxagent/processors');
    const classes = Object.entries(exports).filter(
      ([, value]) => typeof value === 'function' && value.prototype !== undefined && Object.getOwnPropertyNames(value.prototype).some((key) => key.startsWith('process')),
    );
    const names = new Set(classes.map(([, value]) => (value as { name: string }).name));
    expect([...names].sort()).toEqual(Object.keys(BUILT_INS).sort());
  });
});
