import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastValueFrom, take, toArray } from 'rxjs';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import { streamModel } from '../../src/model/stream-model.js';
import { loadFixture, replayFetch, toEventLines } from '../../src/testing/replay-model.js';
import { fixture } from '../model/helpers.js';

const prompt = { prompt: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Hi' }] }] };

describe('replayFetch', () => {
  it('answers with an SSE body: one data event per non-empty line, then [DONE]', async () => {
    const replay = replayFetch('{"a":1}\n\n{"b":2}\n');
    const response = await replay('https://api.test/v1', { method: 'POST', body: '{"model":"m","stream":true}' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe('data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n');
  });

  it('a request for a non-streamed answer (JSON body without stream: true) fails with a TypeError that says what to do; it is still recorded', async () => {
    const replay = replayFetch('{"a":1}');
    const error = await replay('https://api.test/v1/chat', { method: 'POST', body: '{"model":"m"}' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/api\.test\/v1\/chat asks for a non-streamed one.*generateWith: 'doStream'/);
    expect(replay.requests).toHaveLength(1);
  });

  it('a streaming endpoint in the URL (Google) or a body that is not JSON is answered with the stream', async () => {
    const replay = replayFetch('{"a":1}');
    const google = await replay('https://api.test/v1beta/models/g:streamGenerateContent?alt=sse', { method: 'POST', body: '{"contents":[]}' });
    expect(await google.text()).toContain('data: {"a":1}');
    expect((await replay('https://api.test/v1', { method: 'POST', body: 'plain' })).status).toBe(200);
  });

  it('generate() over a recording: the TypeError reaches the caller as the cause; with generateWith: doStream it replays', async () => {
    const event = (delta: Record<string, unknown>, finish: string | null = null) =>
      JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1-nano', choices: [{ index: 0, delta, finish_reason: finish }] });
    const replay = replayFetch([event({ role: 'assistant', content: 'Hello' }), event({}, 'stop')]);
    const agent = new Agent({ id: 'a', model: createOpenAI({ apiKey: 'k', fetch: replay }).chat('gpt-4.1-nano') });
    const error = await agent.generate('Hi').catch((caught: unknown) => caught);
    expect(String((error as Error).cause ?? error)).toMatch(/generateWith: 'doStream'/);
    expect((await agent.generate('Hi', { generateWith: 'doStream' })).text).toBe('Hello');
  });

  it('records every request with its parsed JSON body, headers and signal', async () => {
    const replay = replayFetch(['{"x":1}']);
    const controller = new AbortController();
    await replay('https://api.test/v1/chat', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer k' },
      body: JSON.stringify({ model: 'm', stream: true }),
      signal: controller.signal,
    });
    await replay(new Request('https://api.test/v1/other', { method: 'POST', body: 'not json' }));
    expect(replay.requests).toEqual([
      {
        url: 'https://api.test/v1/chat',
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
        body: { model: 'm', stream: true },
        signal: controller.signal,
      },
      expect.objectContaining({ url: 'https://api.test/v1/other', method: 'POST', body: 'not json' }),
    ]);
  });

  it('serves the body one event per read', async () => {
    const replay = replayFetch(['{"n":1}', '{"n":2}', '{"n":3}']);
    const reader = (await replay('https://api.test')).body!.getReader();
    const decoder = new TextDecoder();
    const first = await reader.read();
    expect(decoder.decode(first.value)).toBe('data: {"n":1}\n\n');
    await reader.cancel();
  });

  it('errors the body when the request signal aborts, and rejects an already aborted request', async () => {
    const controller = new AbortController();
    const replay = replayFetch(['{"n":1}', '{"n":2}']);
    const reader = (await replay('https://api.test', { signal: controller.signal })).body!.getReader();
    await reader.read();
    controller.abort(new Error('stop'));
    await expect(reader.read()).rejects.toThrow('stop');
    await expect(replay('https://api.test', { signal: controller.signal })).rejects.toThrow('stop');
  });

  it('with an error status, sends the lines as a JSON body: the provider raises its APICallError', async () => {
    const replay = replayFetch(JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit', code: null } }), {
      status: 429,
      headers: { 'retry-after': '1' },
    });
    const model = createOpenAI({ apiKey: 'k', fetch: replay, }).chat('gpt-4.1');
    const error = await lastValueFrom(streamModel(model, prompt)).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(429);
    expect((error as APICallError).message).toContain('Rate limit reached');
  });

  it('delayMs spaces the events out in real time', async () => {
    const replay = replayFetch(['{"n":1}', '{"n":2}'], { delayMs: 15 });
    const started = Date.now();
    await (await replay('https://api.test')).text();
    expect(Date.now() - started).toBeGreaterThanOrEqual(40); // 3 events (incl. [DONE]) x 15 ms, with slack
  });

  it('unsubscribing from a replayed provider stream aborts the recorded request signal', async () => {
    const replay = replayFetch(loadFixture(fixture('openai/openai-text.chunks.txt')));
    const model = createOpenAI({ apiKey: 'k', fetch: replay }).chat('gpt-4.1-nano');
    const parts = await lastValueFrom(streamModel(model, prompt).pipe(take(5), toArray()));
    expect(parts).toHaveLength(5);
    expect(replay.requests[0]?.signal?.aborted).toBe(true);
  });
});

describe('loadFixture', () => {
  it('reads the non-empty lines of a chunks file (trailing newline and CRLF tolerated)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxagent-fixture-'));
    const file = join(dir, 'x.chunks.txt');
    writeFileSync(file, '{"a":1}\r\n\n{"b":2}\n');
    expect(loadFixture(file)).toEqual(['{"a":1}', '{"b":2}']);
    expect(toEventLines(['{"a":1}\n{"b":2}', '', '{"c":3}'])).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('reads the recorded fixtures kept in the repository', () => {
    expect(loadFixture(fixture('anthropic/anthropic-text.chunks.txt'))).toHaveLength(12);
    expect(loadFixture(fixture('openai/openai-text.chunks.txt'))).toHaveLength(303);
  });
});
