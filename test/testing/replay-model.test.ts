import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastValueFrom, take, toArray } from 'rxjs';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError } from '@ai-sdk/provider';
import { streamModel } from '../../src/model/stream-model.js';
import { loadFixture, replayFetch, toEventLines } from '../../src/testing/replay-model.js';
import { fixture } from '../model/helpers.js';

const prompt = { prompt: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Hi' }] }] };

describe('replayFetch', () => {
  it('answers with an SSE body: one data event per non-empty line, then [DONE]', async () => {
    const replay = replayFetch('{"a":1}\n\n{"b":2}\n');
    const response = await replay('https://api.test/v1', { method: 'POST', body: '{"model":"m"}' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe('data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n');
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
