/** `processAPIError` recovery through the loop, on mock and real (replayed) providers. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { APICallError } from '@ai-sdk/provider';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent } from '../../src/loop/agent.js';
import { AgentRunError } from '../../src/loop/run/agent-run-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { loadFixture, replayFetch } from '../../src/testing/replay-model.js';

const fixtures = fileURLToPath(new URL('../fixtures/providers/', import.meta.url));
const badRequest = () =>
  new APICallError({ message: 'context length exceeded', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 400, isRetryable: false });

function recoverOnce(seen: number[]): Processor {
  return {
    id: 'error-recovery',
    processAPIError: ({ error, retryCount, messageList }) => {
      seen.push(retryCount);
      if (retryCount > 0 || !APICallError.isInstance(error)) return;
      messageList.addSystem('Keep it short.', 'recovery');
      return { retry: true };
    },
  };
}

describe('API errors', () => {
  it('a thrown 400 APICallError is recovered by an error processor: the model is re-called with the list as it left it', async () => {
    const seen: number[] = [];
    const model = mockModel({
      error: ({ callIndex }: { callIndex: number }) => (callIndex === 0 ? badRequest() : undefined),
      parts: [...textParts('recovered'), finishPart()],
    });
    const output: string[] = [];
    const watcher: Processor = { id: 'watch', processOutputStream: ({ part }) => (output.push(part.type), part) };
    const agent = new Agent({ id: 'a', model, errorProcessors: [recoverOnce(seen)], outputProcessors: [watcher] });
    const chunks = await lastValueFrom(agent.stream$('x').pipe(toArray()));
    expect(model.calls).toHaveLength(2);
    expect(seen).toEqual([0]);
    expect(JSON.stringify(model.calls[1]?.prompt)).toContain('Keep it short.');
    expect(chunks.some((chunk) => chunk.type === 'error')).toBe(false);
    expect(output).not.toContain('error');
    expect(chunks.at(-1)?.type).toBe('finish');
  });

  it('an error stream part is deferred: processors and the client never see it when it is recovered', async () => {
    const makeModel = () =>
      mockModel({
        parts: ({ callIndex }) =>
          callIndex === 0
            ? [{ type: 'text-start', id: 't' }, { type: 'error', error: badRequest() }]
            : [...textParts('second try'), finishPart()],
      });
    const seenByProcessor: string[] = [];
    const watcher: Processor = { id: 'watch', processOutputStream: ({ part }) => (seenByProcessor.push(part.type), part) };
    const agent = new Agent({ id: 'a', model: makeModel(), errorProcessors: [recoverOnce([])], outputProcessors: [watcher] });
    const chunks = await lastValueFrom(agent.stream$('x').pipe(toArray()));
    expect(chunks.some((chunk) => chunk.type === 'error')).toBe(false);
    expect(seenByProcessor).not.toContain('error');
    const result = await new Agent({ id: 'a', model: makeModel(), errorProcessors: [recoverOnce([])] }).generate('x');
    expect(result.text).toBe('second try');
  });

  it('unrecovered: one terminal error chunk carrying the provider error; generate() rejects with it as cause', async () => {
    const model = mockModel({ error: badRequest() });
    const agent = new Agent({ id: 'a', model, errorProcessors: [recoverOnce([])] });
    const chunks = await lastValueFrom(agent.stream$('x').pipe(toArray()));
    expect(chunks.filter((chunk) => chunk.type === 'error')).toHaveLength(1);
    const last = chunks.at(-1);
    expect(last?.type === 'error' && APICallError.isInstance(last.payload.error)).toBe(true);
    const rejection = await agent.generate('x').catch((error: unknown) => error);
    expect(AgentRunError.isInstance(rejection)).toBe(true);
    expect(APICallError.isInstance((rejection as Error).cause)).toBe(true);
  });

  it('the budget defaults to 10 with error processors and to none without', async () => {
    const always: Processor = { id: 'always', processAPIError: () => ({ retry: true }) };
    const failing = mockModel({ error: badRequest() });
    await new Agent({ id: 'a', model: failing, errorProcessors: [always] }).generate('x').catch(() => undefined);
    expect(failing.calls).toHaveLength(11);
    const explicit = mockModel({ error: badRequest() });
    await new Agent({ id: 'a', model: explicit, errorProcessors: [always], maxProcessorRetries: 2 }).generate('x').catch(() => undefined);
    expect(explicit.calls).toHaveLength(3);
    const none = mockModel({ error: badRequest() });
    await new Agent({ id: 'a', model: none, outputProcessors: [{ id: 'o', processOutputStream: ({ part }) => part }] }).generate('x').catch(() => undefined);
    expect(none.calls).toHaveLength(1);
  });

  it('recovers from the recorded openai-error fixture (mid-stream insufficient_quota) through the real OpenAI provider', async () => {
    const errorLines = loadFixture(path.join(fixtures, 'openai/openai-error.1.chunks.txt'));
    const answer = [
      '{"type":"response.created","sequence_number":0,"response":{"id":"resp_2","object":"response","created_at":1,"status":"in_progress","model":"gpt-4.1","output":[]}}',
      '{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}',
      '{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Recovered answer."}',
      '{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Recovered answer.","annotations":[]}]}}',
      '{"type":"response.completed","sequence_number":4,"response":{"id":"resp_2","object":"response","created_at":1,"status":"completed","model":"gpt-4.1","output":[],"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}}}',
    ];
    const first = replayFetch(errorLines);
    const second = replayFetch(answer);
    let calls = 0;
    const fetch = ((input: RequestInfo | URL, init?: RequestInit) => (calls++ === 0 ? first(input, init) : second(input, init))) as typeof globalThis.fetch;
    const model = createOpenAI({ apiKey: 'test', fetch }).responses('gpt-4.1');
    const seen: unknown[] = [];
    const quota: Processor = {
      id: 'quota-recovery',
      processAPIError: ({ error, retryCount }) => {
        seen.push(error);
        return retryCount === 0 ? { retry: true } : undefined;
      },
    };
    const agent = new Agent({ id: 'a', model, errorProcessors: [quota] });
    const result = await agent.generate('hello', { generateWith: 'doStream' });
    expect(calls).toBe(2);
    expect(result.text).toBe('Recovered answer.');
    expect(String((seen[0] as Error).message)).toMatch(/quota/i);
  });
});
