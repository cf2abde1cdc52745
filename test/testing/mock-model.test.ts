import { describe, expect, it } from 'vitest';
import { lastValueFrom, NEVER, of, take, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';
import { streamModel } from '../../src/model/stream-model.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { mockModelV2, mockModelV3 } from '../../src/testing/mock-model-legacy.js';
import { finishPart, reasoningParts, textParts, toolCallParts } from '../../src/testing/model-parts.js';

const prompt = { prompt: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Hi' }] }] };

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const parts: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) return parts;
    parts.push(next.value);
  }
}

describe('mockModel', () => {
  it('is a V4 model (provider mock, configurable model id) streaming the given parts', async () => {
    const parts = [...textParts('Hello world'), finishPart('stop')];
    const model = mockModel({ modelId: 'm-1', parts });
    expect(model.specificationVersion).toBe('v4');
    expect(model.provider).toBe('mock');
    expect(model.modelId).toBe('m-1');
    expect(await lastValueFrom(streamModel(model, prompt).pipe(toArray()))).toEqual(parts);
  });

  it('doStream works on its own: a ReadableStream of the parts, with request/response metadata', async () => {
    const parts = [...textParts('Hi'), finishPart()];
    const model = mockModel({ parts, request: { body: { a: 1 } }, response: { headers: { 'x-id': 'r' } } });
    const result = await model.doStream(prompt);
    expect(await readAll(result.stream)).toEqual(parts);
    expect(result.request).toEqual({ body: { a: 1 } });
    expect(result.response).toEqual({ headers: { 'x-id': 'r' } });
  });

  it('records call options and abort signals of every call, through both paths', async () => {
    const model = mockModel({ parts: [finishPart()] });
    await lastValueFrom(streamModel(model, { ...prompt, temperature: 0.5 }).pipe(toArray()));
    await model.doStream({ ...prompt, temperature: 0.7 });
    expect(model.calls.map((call) => call.temperature)).toEqual([0.5, 0.7]);
    expect(model.abortSignals[0]).toBeInstanceOf(AbortSignal);
    expect(model.abortSignals[1]).toBeUndefined();
  });

  it('parts and stream functions get the call index (e.g. a tool call, then the answer)', async () => {
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...toolCallParts('weather', { city: 'Paris' }), finishPart('tool-calls')] : [...textParts('Sunny'), finishPart()],
    });
    const first = await lastValueFrom(streamModel(model, prompt).pipe(toArray()));
    const second = await lastValueFrom(streamModel(model, prompt).pipe(toArray()));
    expect(first.at(-1)).toEqual(finishPart('tool-calls'));
    expect(second.at(-1)).toEqual(finishPart('stop'));

    const streamed = mockModel({ stream: ({ callIndex }) => (callIndex === 0 ? of(finishPart('length')) : [finishPart('stop')]) });
    expect(await lastValueFrom(streamModel(streamed, prompt))).toEqual(finishPart('length'));
    expect(await lastValueFrom(streamModel(streamed, prompt))).toEqual(finishPart('stop'));
  });

  it('without parts or stream it sends a plain stop finish', async () => {
    expect(await lastValueFrom(streamModel(mockModel(), prompt).pipe(toArray()))).toEqual([finishPart('stop')]);
  });

  it('error: doStream throws it; a function fails selected calls only', async () => {
    const error = new Error('overloaded');
    await expect(mockModel({ error }).doStream(prompt)).rejects.toBe(error);
    const flaky = mockModel({ error: ({ callIndex }: { callIndex: number }) => (callIndex === 0 ? error : undefined), parts: textParts('ok') });
    await expect(lastValueFrom(streamModel(flaky, prompt))).rejects.toBe(error);
    expect((await lastValueFrom(streamModel(flaky, prompt).pipe(toArray()))).map((part) => part.type)).toEqual([
      'text-start',
      'text-delta',
      'text-end',
    ]);
    expect(flaky.calls).toHaveLength(2);
  });

  it('doStream honours the abort signal: aborted before → throws, during → the stream errors', async () => {
    const before = new AbortController();
    before.abort(new Error('too late'));
    await expect(mockModel().doStream({ ...prompt, abortSignal: before.signal })).rejects.toThrow('too late');

    const during = new AbortController();
    const model = mockModel({ stream: NEVER });
    const result = await model.doStream({ ...prompt, abortSignal: during.signal });
    const read = result.stream.getReader().read();
    during.abort(new Error('stop now'));
    await expect(read).rejects.toThrow('stop now');
  });

  it('unsubscribing from streamModel aborts the recorded signal (fast path)', async () => {
    const model = mockModel({ parts: textParts('one two three four') });
    await lastValueFrom(streamModel(model, prompt).pipe(take(2), toArray()));
    expect(model.abortSignals[0]?.aborted).toBe(true);
  });

  it('a marble stream runs on virtual time through the fast path', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    const [start, hello, end] = textParts('Hello');
    scheduler.run(({ cold, expectObservable }) => {
      const values = { s: start!, h: hello!, e: end!, f: finishPart() };
      const model = mockModel({ stream: cold('s 9ms h 9ms (ef|)', values) });
      expect(typeof model[OBSERVABLE_STREAM]).toBe('function');
      expectObservable(streamModel(model, prompt)).toBe('s 9ms h 9ms (ef|)', values);
    });
  });

  it('doGenerate folds the stream into content, finish reason, usage and warnings', async () => {
    const model = mockModel({
      parts: [
        { type: 'stream-start', warnings: [{ type: 'other', message: 'w' }] },
        ...reasoningParts('Because.'),
        ...textParts('Hello world'),
        ...toolCallParts('weather', {}),
        finishPart('tool-calls', { inputTokens: 3, outputTokens: 4 }),
      ],
    });
    const result = await model.doGenerate(prompt);
    expect(result.content).toEqual([
      { type: 'reasoning', text: 'Because.' },
      { type: 'text', text: 'Hello world' },
      { type: 'tool-call', toolCallId: 'call-weather', toolName: 'weather', input: '{}' },
    ]);
    expect(result.finishReason.unified).toBe('tool-calls');
    expect(result.usage.inputTokens.total).toBe(3);
    expect(result.warnings).toEqual([{ type: 'other', message: 'w' }]);
  });
});

describe('mockModelV2 / mockModelV3', () => {
  it('speak their spec version and record their own call options', async () => {
    const v2 = mockModelV2({ parts: [...textParts('Hi'), finishPart('stop', { inputTokens: 2, outputTokens: 1 })] });
    const v3 = mockModelV3({ parts: [...textParts('Hi'), finishPart('stop', { inputTokens: 2, outputTokens: 1 })] });
    expect(v2.specificationVersion).toBe('v2');
    expect(v3.specificationVersion).toBe('v3');
    const v2Parts = await readAll((await v2.doStream({ prompt: [] })).stream);
    expect(v2Parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: 'stop',
      usage: { inputTokens: 2, outputTokens: 1, totalTokens: 3, reasoningTokens: undefined, cachedInputTokens: undefined },
    });
    const v3Parts = await readAll((await v3.doStream({ prompt: [] })).stream);
    expect(v3Parts.at(-1)).toEqual(finishPart('stop', { inputTokens: 2, outputTokens: 1 }));
    expect(v2.calls).toEqual([{ prompt: [] }]);
    expect(v3.calls).toEqual([{ prompt: [] }]);
  });

  it('V2 doGenerate gives V2 shapes', async () => {
    const v2 = mockModelV2({ parts: [...textParts('Hi'), finishPart('length', { inputTokens: 1, outputTokens: 1 })] });
    const result = await v2.doGenerate({ prompt: [] });
    expect(result.finishReason).toBe('length');
    expect(result.usage.totalTokens).toBe(2);
    expect(result.content).toEqual([{ type: 'text', text: 'Hi' }]);
  });
});
