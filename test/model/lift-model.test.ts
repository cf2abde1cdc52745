/**
 * `liftModel` (src/model/internal/lift-model.ts): the one adapter behind `adaptV2` and `adaptV3`. A
 * spec version gives only its conversions; identity, the warnings' way into `stream-start`, the
 * doStream path and the Observable fast path are the lift's, the same for every version.
 */
import { describe, expect, it } from 'vitest';
import type { LanguageModelV3, LanguageModelV4, LanguageModelV4StreamPart, SharedV4Warning } from '@ai-sdk/provider';
import { liftModel, type SpecLift } from '../../src/model/internal/lift-model.js';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';
import { mockModelV3 } from '../../src/testing/mock-model-legacy.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { collect, partsOf, userPrompt } from './helpers.js';

const warning: SharedV4Warning = { type: 'other', message: 'converted' };

/** A V3 → V4 lift that upper-cases text deltas and always reports one warning. */
const shouting: SpecLift<LanguageModelV3, LanguageModelV4> = {
  specificationVersion: 'v4',
  callOptions: ({ reasoning: _reasoning, ...options }) => ({ callOptions: options as Parameters<LanguageModelV3['doStream']>[0], warnings: [warning] }),
  result: (result, warnings) => ({ ...result, content: [], warnings: [...result.warnings, ...warnings] }) as Awaited<ReturnType<LanguageModelV4['doGenerate']>>,
  part: (part) => (part.type === 'text-delta' ? { ...part, delta: part.delta.toUpperCase() } : part) as LanguageModelV4StreamPart,
};

describe('liftModel', () => {
  it('passes identity through and reports the lift version', () => {
    const urls = { 'image/*': [/^https:/] };
    const model = liftModel(mockModelV3({ provider: 'acme', modelId: 'acme-1', supportedUrls: urls }), shouting);
    expect([model.specificationVersion, model.provider, model.modelId, model.supportedUrls]).toEqual(['v4', 'acme', 'acme-1', urls]);
  });

  it('converts every part and adds the warnings to stream-start, on the fast path and through doStream alike', async () => {
    const parts = [...textParts('hi there'), finishPart()];
    const fast = await collect(liftModel(mockModelV3({ parts }), shouting));
    const { [OBSERVABLE_STREAM]: _fastPath, ...plain } = mockModelV3({ parts });
    const viaDoStream = await collect(liftModel(plain, shouting));
    expect(viaDoStream).toEqual(fast);
    expect(partsOf(fast, 'text-delta').map((part) => part.delta).join('')).toBe('HI THERE');
    expect(fast[0]).toEqual({ type: 'stream-start', warnings: [warning] });
    expect(partsOf(fast, 'stream-start')).toHaveLength(1);
  });

  it('doGenerate converts the call down and the result up, with the warnings', async () => {
    const v3 = mockModelV3({ parts: [...textParts('ok'), finishPart()] });
    const result = await liftModel(v3, shouting).doGenerate({ ...userPrompt(), reasoning: 'high' });
    expect(result.content).toEqual([]);
    expect(result.warnings).toContainEqual(warning);
    expect(v3.calls.at(-1)).not.toHaveProperty('reasoning');
  });
});
