import { describe, expect, it } from 'vitest';
import { lastValueFrom, take, toArray } from 'rxjs';
import {
  UnsupportedFunctionalityError,
  type LanguageModelV3,
  type LanguageModelV3StreamPart,
  type LanguageModelV4CallOptions,
} from '@ai-sdk/provider';
import { adaptV3 } from '../../src/model/from-v3.js';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';
import { streamModel } from '../../src/model/stream-model.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { mockModelV3 } from '../../src/testing/mock-model-legacy.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { collect, partsOf, userPrompt } from './helpers.js';
import { sharedRun } from './shared-run.js';

describe('adaptV3', () => {
  it('V3 and V4 mock models give the same run (doStream path and fast path)', async () => {
    const expected = await collect(mockModel({ parts: sharedRun }));
    expect(expected).toEqual(sharedRun);

    const v3 = mockModelV3({ parts: sharedRun });
    expect(await collect(adaptV3(v3))).toEqual(expected);

    const { [OBSERVABLE_STREAM]: _fastPath, ...v3WithoutFastPath } = mockModelV3({ parts: sharedRun });
    expect(await collect(adaptV3(v3WithoutFastPath))).toEqual(expected);
  });

  it('is a V4 model with the original provider, model id and supported URLs', () => {
    const urls = { 'image/*': [/^https:/] };
    const model = adaptV3(mockModelV3({ provider: 'acme', modelId: 'acme-1', supportedUrls: urls }));
    expect(model.specificationVersion).toBe('v4');
    expect(model.provider).toBe('acme');
    expect(model.modelId).toBe('acme-1');
    expect(model.supportedUrls).toBe(urls);
  });

  it('converts V4 call options and prompt down to V3 and reports what V3 cannot express', async () => {
    const v3 = mockModelV3({ parts: [...textParts('ok'), finishPart()] });
    const options: LanguageModelV4CallOptions = {
      reasoning: 'high',
      temperature: 0.3,
      tools: [{ type: 'provider', id: 'acme.search', name: 'search', args: {} }],
      prompt: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'file', mediaType: 'image/png', data: { type: 'data', data: new Uint8Array([1, 2]) } },
            { type: 'file', mediaType: 'image/png', data: { type: 'url', url: new URL('https://x.test/a.png') } },
            { type: 'file', mediaType: 'text/plain', data: { type: 'text', text: 'inline doc' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'calling' },
            { type: 'custom', kind: 'acme.marker' },
            { type: 'tool-call', toolCallId: 'c1', toolName: 'look', input: {} },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'look',
              output: {
                type: 'content',
                value: [
                  { type: 'text', text: 'seen' },
                  { type: 'file', mediaType: 'image/jpeg', data: { type: 'data', data: new Uint8Array([255]) } },
                  { type: 'file', mediaType: 'application/pdf', data: { type: 'url', url: new URL('https://x.test/a.pdf') } },
                  { type: 'file', mediaType: 'application/pdf', data: { type: 'reference', reference: { acme: 'file-9' } } },
                ],
              },
            },
            { type: 'tool-approval-response', approvalId: 'a1', approved: true },
          ],
        },
      ],
    };
    const parts = await collect(adaptV3(v3), options);

    const sent = v3.calls[0]!;
    expect(sent).not.toHaveProperty('reasoning');
    expect(sent.temperature).toBe(0.3);
    expect(sent.tools).toEqual(options.tools);
    const [system, user, assistant, tool] = sent.prompt;
    expect(system).toEqual({ role: 'system', content: 'Be brief.' });
    expect(user?.content).toEqual([
      { type: 'file', mediaType: 'image/png', data: new Uint8Array([1, 2]) },
      { type: 'file', mediaType: 'image/png', data: new URL('https://x.test/a.png') },
      { type: 'file', mediaType: 'text/plain', data: new TextEncoder().encode('inline doc') },
    ]);
    expect(assistant?.content).toEqual([
      { type: 'text', text: 'calling' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'look', input: {} },
    ]);
    expect(tool?.content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 'c1',
        toolName: 'look',
        output: {
          type: 'content',
          value: [
            { type: 'text', text: 'seen' },
            { type: 'image-data', data: '/w==', mediaType: 'image/jpeg' },
            { type: 'file-url', url: 'https://x.test/a.pdf' },
            { type: 'file-id', fileId: { acme: 'file-9' } },
          ],
        },
      },
      { type: 'tool-approval-response', approvalId: 'a1', approved: true },
    ]);

    // the conversion warnings arrive in a stream-start part (inserted: the mock sends none)
    expect(parts[0]).toEqual({
      type: 'stream-start',
      warnings: [
        expect.objectContaining({ type: 'unsupported', feature: 'reasoning' }),
        expect.objectContaining({ type: 'compatibility', feature: 'assistant custom part' }),
      ],
    });
    expect(parts.slice(1)).toEqual([...textParts('ok'), finishPart()]);
  });

  it('appends conversion warnings to the model own stream-start part', async () => {
    const v3 = mockModelV3({ parts: [{ type: 'stream-start', warnings: [{ type: 'other', message: 'own' }] }, finishPart()] });
    const parts = await collect(adaptV3(v3), { ...userPrompt(), reasoning: 'low' });
    expect(partsOf(parts, 'stream-start')).toEqual([
      { type: 'stream-start', warnings: [{ type: 'other', message: 'own' }, expect.objectContaining({ feature: 'reasoning' })] },
    ]);
  });

  it('a file given by provider reference is an UnsupportedFunctionalityError notification', async () => {
    const options: LanguageModelV4CallOptions = {
      prompt: [
        { role: 'user', content: [{ type: 'file', mediaType: 'application/pdf', data: { type: 'reference', reference: { acme: 'f1' } } }] },
      ],
    };
    await expect(collect(adaptV3(mockModelV3()), options)).rejects.toSatisfy(UnsupportedFunctionalityError.isInstance);
  });

  it('unsubscribing aborts the V3 call signal and cancels its stream', async () => {
    const { [OBSERVABLE_STREAM]: _fastPath, ...v3 } = mockModelV3({ parts: textParts('a b c d e f g') });
    const model = adaptV3(v3);
    const parts = await lastValueFrom(streamModel(model, userPrompt()).pipe(take(2), toArray()));
    expect(parts).toHaveLength(2);
    expect(v3.abortSignals[0]?.aborted).toBe(true);
  });

  it('reads the V3 stream one part per delivered part (no read-ahead through the adapter)', async () => {
    let pulls = 0;
    const v3: LanguageModelV3 = {
      ...mockModelV3(),
      async doStream() {
        return {
          stream: new ReadableStream<LanguageModelV3StreamPart>(
            {
              pull(controller) {
                pulls += 1;
                if (pulls > 5) controller.close();
                else controller.enqueue({ type: 'text-delta', id: 't', delta: String(pulls) });
              },
            },
            { highWaterMark: 0 },
          ),
        };
      },
    };
    const { [OBSERVABLE_STREAM]: _fastPath, ...plain } = v3 as LanguageModelV3 & { [OBSERVABLE_STREAM]?: unknown };
    const seen: number[] = [];
    await new Promise<void>((resolve, reject) =>
      streamModel(adaptV3(plain), userPrompt()).subscribe({ next: () => seen.push(pulls), error: reject, complete: resolve }),
    );
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });

  it('doGenerate converts the V3 result up (file data, warnings)', async () => {
    const v3 = mockModelV3({
      parts: [
        { type: 'stream-start', warnings: [{ type: 'other', message: 'own' }] },
        ...textParts('Hi'),
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'AA==' } },
        finishPart('stop', { inputTokens: 1, outputTokens: 2 }),
      ],
    });
    const result = await adaptV3(v3).doGenerate({ ...userPrompt(), reasoning: 'high' });
    expect(result.content).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'AA==' } },
    ]);
    expect(result.finishReason).toEqual({ unified: 'stop', raw: undefined });
    expect(result.usage.outputTokens.total).toBe(2);
    expect(result.warnings).toEqual([{ type: 'other', message: 'own' }, expect.objectContaining({ feature: 'reasoning' })]);
  });
});
