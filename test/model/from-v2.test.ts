import { describe, expect, it } from 'vitest';
import {
  UnsupportedFunctionalityError,
  type LanguageModelV2,
  type LanguageModelV2StreamPart,
  type LanguageModelV4CallOptions,
  type LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { adaptV2 } from '../../src/model/from-v2.js';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { mockModelV2 } from '../../src/testing/mock-model-legacy.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { collect, finishOf, partsOf, userPrompt } from './helpers.js';
import { sharedRun } from './shared-run.js';

/** V2 has no `usage.raw`: the adapter puts the V2 usage object there. Compare without it. */
const withoutRawUsage = (parts: LanguageModelV4StreamPart[]): LanguageModelV4StreamPart[] =>
  parts.map((part) => {
    if (part.type !== 'finish') return part;
    const { raw: _raw, ...usage } = part.usage;
    return { ...part, usage };
  });

/** A hand-written V2 model streaming the given V2 parts. */
function rawV2Model(parts: LanguageModelV2StreamPart[]): LanguageModelV2 & { calls: unknown[] } {
  const calls: unknown[] = [];
  return {
    specificationVersion: 'v2',
    provider: 'legacy',
    modelId: 'legacy-1',
    supportedUrls: {},
    calls,
    async doGenerate(options) {
      calls.push(options);
      return {
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'tool-result', toolCallId: 'c1', toolName: 'search', result: undefined, providerExecuted: true },
        ],
        finishReason: 'unknown',
        usage: { inputTokens: 4, outputTokens: 2, totalTokens: 6 },
        warnings: [{ type: 'unsupported-setting', setting: 'seed', details: 'no seeds' }],
      };
    },
    async doStream(options) {
      calls.push(options);
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

describe('adaptV2', () => {
  it('V2 and V4 mock models give the same run (doStream path and fast path)', async () => {
    const expected = withoutRawUsage(await collect(mockModel({ parts: sharedRun })));

    const fast = await collect(adaptV2(mockModelV2({ parts: sharedRun })));
    expect(withoutRawUsage(fast)).toEqual(expected);

    const { [OBSERVABLE_STREAM]: _fastPath, ...v2 } = mockModelV2({ parts: sharedRun });
    const viaDoStream = await collect(adaptV2(v2));
    expect(withoutRawUsage(viaDoStream)).toEqual(expected);
    expect(finishOf(viaDoStream).usage.raw).toEqual({
      inputTokens: 12,
      outputTokens: 7,
      totalTokens: 19,
      reasoningTokens: 3,
      cachedInputTokens: 2,
    });
  });

  it('converts V2 finish reasons, usage, tool results and warnings to V4 shapes', async () => {
    const model = adaptV2(
      rawV2Model([
        {
          type: 'stream-start',
          warnings: [
            { type: 'unsupported-setting', setting: 'topK', details: 'ignored' },
            { type: 'unsupported-tool', tool: { type: 'provider-defined', id: 'a.b', name: 'browse', args: {} } },
            { type: 'other', message: 'note' },
          ],
        },
        { type: 'tool-result', toolCallId: 'c1', toolName: 'search', result: null, providerExecuted: true },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'search', result: { when: new Date(0) }, isError: false },
        { type: 'file', mediaType: 'text/plain', data: 'aGk=' },
        { type: 'finish', finishReason: 'unknown', usage: { inputTokens: 5, outputTokens: undefined, totalTokens: 5 } },
      ]),
    );
    const parts = await collect(model);
    expect(parts).toEqual([
      {
        type: 'stream-start',
        warnings: [
          { type: 'unsupported', feature: 'topK', details: 'ignored' },
          { type: 'unsupported', feature: 'tool browse', details: undefined },
          { type: 'other', message: 'note' },
        ],
      },
      { type: 'tool-result', toolCallId: 'c1', toolName: 'search', result: '' },
      { type: 'tool-result', toolCallId: 'c2', toolName: 'search', result: { when: '1970-01-01T00:00:00.000Z' }, isError: false },
      { type: 'file', mediaType: 'text/plain', data: { type: 'data', data: 'aGk=' } },
      {
        type: 'finish',
        finishReason: { unified: 'other', raw: undefined },
        usage: {
          inputTokens: { total: 5, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: undefined, text: undefined, reasoning: undefined },
          raw: { inputTokens: 5, totalTokens: 5 },
        },
      },
    ]);
  });

  it('converts V4 call options down to V2: provider tools, strict tools, approvals, denied outputs', async () => {
    const v2 = mockModelV2({ parts: [...textParts('ok'), finishPart()] });
    const options: LanguageModelV4CallOptions = {
      reasoning: 'medium',
      tools: [
        { type: 'function', name: 'weather', inputSchema: { type: 'object' }, strict: true, providerOptions: { acme: { cache: true } } },
        { type: 'provider', id: 'acme.search', name: 'search', args: { depth: 2 } },
      ],
      prompt: [
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'execution-denied', reason: 'not allowed' } },
            {
              type: 'tool-result',
              toolCallId: 'c2',
              toolName: 'weather',
              output: {
                type: 'content',
                value: [
                  { type: 'text', text: 'sunny' },
                  { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'AAAA' } },
                ],
              },
            },
          ],
        },
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: false }] },
      ],
    };
    const parts = await collect(adaptV2(v2), options);
    const sent = v2.calls[0]!;
    expect(sent.tools).toEqual([
      { type: 'function', name: 'weather', inputSchema: { type: 'object' }, providerOptions: { acme: { cache: true } } },
      { type: 'provider-defined', id: 'acme.search', name: 'search', args: { depth: 2 } },
    ]);
    expect(sent.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'text', value: 'not allowed' } },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'weather',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'sunny' },
                { type: 'media', data: 'AAAA', mediaType: 'image/png' },
              ],
            },
          },
        ],
      },
    ]);
    expect(partsOf(parts, 'stream-start')[0]?.warnings.map((warning) => ('feature' in warning ? warning.feature : warning.message))).toEqual([
      'execution-denied tool output',
      'tool-approval-response',
      'tool weather: strict',
      'reasoning',
    ]);
  });

  it('a URL-only tool output content part is an UnsupportedFunctionalityError notification', async () => {
    const options: LanguageModelV4CallOptions = {
      prompt: [
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'look',
              output: { type: 'content', value: [{ type: 'file', mediaType: 'image/png', data: { type: 'url', url: new URL('https://x.test/i.png') } }] },
            },
          ],
        },
      ],
    };
    await expect(collect(adaptV2(mockModelV2()), options)).rejects.toSatisfy(UnsupportedFunctionalityError.isInstance);
  });

  it('doGenerate converts the V2 result (finish reason, usage, tool results, warnings)', async () => {
    const result = await adaptV2(rawV2Model([])).doGenerate(userPrompt());
    expect(result.content).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'tool-result', toolCallId: 'c1', toolName: 'search', result: '' },
    ]);
    expect(result.finishReason).toEqual({ unified: 'other', raw: undefined });
    expect(result.usage.inputTokens.total).toBe(4);
    expect(result.usage.raw).toEqual({ inputTokens: 4, outputTokens: 2, totalTokens: 6 });
    expect(result.warnings).toEqual([{ type: 'unsupported', feature: 'seed', details: 'no seeds' }]);
  });

  it('is a V4 model with the original provider and model id', () => {
    const model = adaptV2(rawV2Model([]));
    expect(model.specificationVersion).toBe('v4');
    expect(model.provider).toBe('legacy');
    expect(model.modelId).toBe('legacy-1');
  });
});
