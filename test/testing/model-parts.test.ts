import { describe, expect, it } from 'vitest';
import {
  finishPart,
  reasoningParts,
  splitText,
  streamStartPart,
  textParts,
  toolCallParts,
  usage,
} from '../../src/testing/model-parts.js';

describe('model part builders', () => {
  it('textParts: start, one delta per word (spaces kept), end', () => {
    expect(textParts('Hello world')).toEqual([
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Hello' },
      { type: 'text-delta', id: 'text-1', delta: ' world' },
      { type: 'text-end', id: 'text-1' },
    ]);
  });

  it('textParts with chunkSize and id', () => {
    const parts = textParts('Hello world', { chunkSize: 4, id: 'b' });
    expect(parts.map((part) => (part.type === 'text-delta' ? part.delta : part.type))).toEqual([
      'text-start',
      'Hell',
      'o wo',
      'rld',
      'text-end',
    ]);
    expect(parts.every((part) => 'id' in part && part.id === 'b')).toBe(true);
  });

  it('splitText keeps every character; empty text gives no deltas', () => {
    const text = '  leading, trailing \n\n and more  ';
    expect(splitText(text).join('')).toBe(text);
    expect(splitText('')).toEqual([]);
    expect(textParts('').map((part) => part.type)).toEqual(['text-start', 'text-end']);
    expect(() => splitText('abc', 0)).toThrow(RangeError);
  });

  it('reasoningParts mirrors textParts', () => {
    expect(reasoningParts('Think.').map((part) => part.type)).toEqual(['reasoning-start', 'reasoning-delta', 'reasoning-end']);
  });

  it('toolCallParts: streamed JSON input and the tool-call part', () => {
    expect(toolCallParts('weather', { city: 'Paris' }, { chunkSize: 8 })).toEqual([
      { type: 'tool-input-start', id: 'call-weather', toolName: 'weather' },
      { type: 'tool-input-delta', id: 'call-weather', delta: '{"city":' },
      { type: 'tool-input-delta', id: 'call-weather', delta: '"Paris"}' },
      { type: 'tool-input-end', id: 'call-weather' },
      { type: 'tool-call', toolCallId: 'call-weather', toolName: 'weather', input: '{"city":"Paris"}' },
    ]);
    expect(toolCallParts('search', '{"q":1}', { toolCallId: 'c9', streamInput: false, providerExecuted: true })).toEqual([
      { type: 'tool-call', toolCallId: 'c9', toolName: 'search', input: '{"q":1}', providerExecuted: true },
    ]);
  });

  it('finishPart: reason and simple token counts become V4 shapes', () => {
    expect(finishPart('tool-calls', { inputTokens: 10, outputTokens: 5, reasoningTokens: 2, cachedInputTokens: 4 })).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage: {
        inputTokens: { total: 10, noCache: undefined, cacheRead: 4, cacheWrite: undefined },
        outputTokens: { total: 5, text: undefined, reasoning: 2 },
      },
    });
    const full = usage({ inputTokens: 1 });
    expect(finishPart({ unified: 'stop', raw: 'end_turn' }, full)).toEqual({
      type: 'finish',
      finishReason: { unified: 'stop', raw: 'end_turn' },
      usage: full,
    });
    expect(finishPart().finishReason.unified).toBe('stop');
  });

  it('streamStartPart', () => {
    expect(streamStartPart()).toEqual({ type: 'stream-start', warnings: [] });
  });
});
