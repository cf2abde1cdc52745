/**
 * The web chat's curt-reply guard without a browser: one retry, the draft marked rejected, the
 * retried answer kept, and the UI message stream carrying what the page renders (`reset-step`
 * and the `data-rxagent-retry` notice). test/browser/web-chat.test.ts shows the same on screen.
 */
import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { toUIMessageStream } from '../../src/ai-sdk/index.js';
import { CURT_REPLY_FEEDBACK, createChatAgent } from '../../examples/web-chat/chat-agent.js';

const draft = 'Refunds? Absolutely not, everything we sell is final.';
const answer = "Sorry for the short answer! You can get a full refund within 30 days: tell me the order number and I'll start it.";

describe('web chat: the curt-reply guard retries once', () => {
  it('sends the curt draft back with feedback and keeps the retried answer', async () => {
    const agent = await createChatAgent({ wordDelayMs: 0 });
    const result = await agent.generate('Can I get a refund?');
    expect(result.text).toBe(answer);
    expect(result.finishReason).toBe('stop');
    expect(result.tripwire).toBeUndefined();
    // the rejected attempt keeps its tripwire but none of its text (nothing rejected is reported)
    expect(result.steps.map((step) => step.text)).toEqual(['', answer]);
    expect(result.steps[0]?.tripwire).toMatchObject({ reason: CURT_REPLY_FEEDBACK, retry: true, processorId: 'curt-reply-guard' });
    const stepFinishes = result.chunks.filter((chunk) => chunk.type === 'step-finish');
    expect(stepFinishes.map((chunk) => (chunk.type === 'step-finish' ? chunk.payload.stepResult.reason : undefined))).toEqual(['retry', 'stop']);
  });

  it('the UI message stream resets the rejected step and carries the retry notice', async () => {
    const agent = await createChatAgent({ wordDelayMs: 0 });
    const chunks: UIMessageChunk[] = [];
    for await (const chunk of toUIMessageStream(agent.stream$('Can I get a refund?'))) chunks.push(chunk);
    const types = chunks.map((chunk) => chunk.type);
    expect(types).toContain('reset-step');
    const retry = chunks.find((chunk) => chunk.type === 'data-rxagent-retry');
    expect(retry && 'data' in retry ? retry.data : undefined).toMatchObject({ reason: CURT_REPLY_FEEDBACK });
    expect(types.indexOf('reset-step')).toBeGreaterThan(types.indexOf('text-delta'));
  });

  it('a longer reply passes the guard untouched', async () => {
    const agent = await createChatAgent({ wordDelayMs: 0 });
    const result = await agent.generate('Hello!');
    expect(result.steps).toHaveLength(1);
    expect(result.text).toBe('Hello! I can check orders and answer questions about deliveries.');
  });
});
