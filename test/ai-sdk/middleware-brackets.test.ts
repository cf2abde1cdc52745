/**
 * processorsMiddleware closes its brackets with the loop's `closeBrackets()` (issue 14 point 2):
 * a tripwire in the middle of reasoning and tool input ends every open part before the `error`
 * part, and the parts of a well-formed stream pass unchanged.
 */
import { describe, expect, it } from 'vitest';
import { wrapLanguageModel } from 'ai';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { processorsMiddleware } from '../../src/ai-sdk/index.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, reasoningParts, textParts } from '../../src/testing/model-parts.js';

const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'go' }] }];

async function partsOf(stream: ReadableStream<LanguageModelV4StreamPart>): Promise<LanguageModelV4StreamPart[]> {
  const parts: LanguageModelV4StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) return parts;
    parts.push(next.value);
  }
}

const model = () =>
  mockModel({
    parts: [
      ...reasoningParts('Hmm.', { id: 'r1' }).slice(0, 2),
      { type: 'tool-input-start', id: 'call-1', toolName: 'lookup' },
      { type: 'tool-input-delta', id: 'call-1', delta: '{"q":' },
      { type: 'tool-input-delta', id: 'call-1', delta: '"stop"}' },
      { type: 'tool-input-end', id: 'call-1' },
      finishPart('stop'),
    ],
  });

describe('processorsMiddleware brackets', () => {
  it('a tripwire during reasoning and tool input ends both before the error part', async () => {
    const guard: Processor = {
      id: 'guard',
      processOutputStream: ({ part, abort }) => {
        if (part.type === 'tool-call-delta' && part.payload.argsTextDelta.includes('stop')) abort('no stopping');
        return part;
      },
    };
    const wrapped = wrapLanguageModel({ model: model(), middleware: processorsMiddleware({ outputProcessors: [guard] }) });
    const { stream } = await wrapped.doStream({ prompt });
    const parts = await partsOf(stream);
    const types = parts.map((part) => part.type);
    expect(types).toEqual([
      'stream-start',
      'reasoning-start',
      'reasoning-delta',
      'tool-input-start',
      'tool-input-delta',
      'reasoning-end',
      'tool-input-end',
      'error',
      'finish',
    ]);
    const error = (parts[7] as { error: unknown }).error;
    expect(TripWire.isInstance(error)).toBe(true);
    expect(parts[5]).toEqual({ type: 'reasoning-end', id: 'r1' });
    expect(parts[6]).toEqual({ type: 'tool-input-end', id: 'call-1' });
    expect(parts[8]).toMatchObject({ type: 'finish', finishReason: { unified: 'other', raw: 'tripwire' } });
  });

  it('a well-formed stream passes with its own brackets, nothing added', async () => {
    const wrapped = wrapLanguageModel({
      model: mockModel({ parts: [...textParts('Hi', { id: 't' }), finishPart('stop')] }),
      middleware: processorsMiddleware({ outputProcessors: [] }),
    });
    const { stream } = await wrapped.doStream({ prompt });
    const types = (await partsOf(stream)).map((part) => part.type);
    expect(types).toEqual(['stream-start', 'text-start', 'text-delta', 'text-end', 'finish']);
  });
});
