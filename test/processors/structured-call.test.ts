import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelResolutionError } from '../../src/contract/errors/model-resolution-error.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { parseJsonAnswer, resolveProcessorModel, structuredCall, StructuredCallError } from '../../src/processors/internal/structured-call.js';
import { mockModelV2, mockModelV3 } from '../../src/testing/mock-model-legacy.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { failingModel, judgeModel, modelStreaming } from './support/harness.js';

const schema = z.object({ ok: z.boolean() });
const answering = (text: string) => ({ parts: [...textParts(text, { chunkSize: 3 }), finishPart('stop')] });

describe('structuredCall', () => {
  it('parses plain JSON, a ```json fence, and an object inside prose', () => {
    expect(parseJsonAnswer('{"ok": true}')).toEqual({ ok: true });
    expect(parseJsonAnswer('```json\n{"ok": false}\n```')).toEqual({ ok: false });
    expect(parseJsonAnswer('```\n{"ok": false}\n```')).toEqual({ ok: false });
    expect(parseJsonAnswer('Sure — here it is: {"ok": true} Hope that helps.')).toEqual({ ok: true });
    expect(parseJsonAnswer('no json here')).toBeUndefined();
  });

  it('sends a system + user prompt at temperature 0 with a JSON response format, and validates the answer', async () => {
    const model = judgeModel(() => '{"ok": true}');
    expect(await structuredCall({ model, system: 'judge', prompt: 'text', schema })).toEqual({ ok: true });
    const call = model.calls[0];
    expect(call?.prompt.map((message) => message.role)).toEqual(['system', 'user']);
    expect(call?.temperature).toBe(0);
    expect(call?.responseFormat).toEqual(expect.objectContaining({ type: 'json', schema: expect.objectContaining({ type: 'object' }) }));
  });

  it('fails with kind "malformed" for non-JSON or a wrong shape, and "model" for a failing call or an error part', async () => {
    const kindOf = (promise: Promise<unknown>) => promise.then(() => 'resolved', (error: unknown) => (error instanceof StructuredCallError ? error.kind : 'other'));
    expect(await kindOf(structuredCall({ model: judgeModel(() => 'nope'), system: '', prompt: '', schema }))).toBe('malformed');
    expect(await kindOf(structuredCall({ model: judgeModel(() => '{"ok": "yes"}'), system: '', prompt: '', schema }))).toBe('malformed');
    expect(await kindOf(structuredCall({ model: failingModel(), system: '', prompt: '', schema }))).toBe('model');
    expect(await kindOf(structuredCall({ model: modelStreaming([{ type: 'error', error: 'overloaded' }]), system: '', prompt: '', schema }))).toBe('model');
  });

  it('model-backed processors accept V2 and V3 models and "provider/model" ids with a registry', async () => {
    const v2 = mockModelV2(answering('{"categories": {"violence": 0.99}}'));
    const v3 = mockModelV3(answering('{"categories": {"violence": 0.99}}'));
    for (const model of [v2, v3]) {
      const moderation = new ModerationProcessor({ model });
      const verdict = await moderation.moderate({}, 'text');
      expect('flagged' in verdict ? verdict.flagged : verdict).toEqual(['violence']);
    }
    expect(v2.calls).toHaveLength(1);
    expect(v3.calls).toHaveLength(1);
    const byId = judgeModel(() => '{"ok": true}');
    expect(resolveProcessorModel('judges/small', { judges: () => byId })).toBe(byId);
  });

  it('a string model without a registry fails when the processor is built', () => {
    expect(() => new ModerationProcessor({ model: 'openai/gpt-4.1-nano' })).toThrow(ModelResolutionError);
  });
});
