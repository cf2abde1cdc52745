/**
 * The agent behind the web chat: the offline support model (or OpenAI with OPENAI_API_KEY), an
 * order-lookup tool, and output processors — a guard that sends a too-curt reply back for one
 * retry (`abort(…, { retry: true })` with `maxProcessorRetries: 1`), a guardrail that trips the
 * wire on a leaked secret, a tool-output redactor, and the built-in regex redactor for e-mail
 * addresses in the text.
 */
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { z } from 'zod';
import { Agent, type ChunkType, type ModelInput, type Processor } from 'rxagent';
import { RegexFilterProcessor } from 'rxagent/processors';
import { scriptContext, scriptedModel } from 'rxagent/testing';
import { offlineSupportModel } from '../shared/offline-model.js';

/** The phrase the guardrail blocks (the offline model leaks it when asked for a password). */
export const BLOCKED_PHRASE = 'hunter2';

const emailPattern = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/** Trips the wire as soon as the reply contains the blocked phrase (nothing after it streams). */
export const secretGuard: Processor<'secret-guard'> = {
  id: 'secret-guard',
  processOutputStream({ part, streamParts, abort }) {
    if (part.type !== 'text-delta') return part;
    const recent = streamParts
      .slice(-4)
      .map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : ''))
      .join('');
    if (recent.includes(BLOCKED_PHRASE)) {
      abort('The reply contained a secret and was stopped.', { metadata: { rule: 'secret-phrase' } });
    }
    return part;
  },
};

/** What the curt-reply guard tells the model when it sends a reply back. */
export const CURT_REPLY_FEEDBACK = 'That answer was too curt: explain it in a full, friendly sentence.';

/** Replies shorter than this many words are sent back (once). */
export const MIN_REPLY_WORDS = 10;

/**
 * Sends a reply of fewer than {@link MIN_REPLY_WORDS} words back to the model, once: `abort(reason, { retry: true })`
 * re-runs the step with the reason as feedback (the agent sets `maxProcessorRetries: 1`). The page
 * shows the rejected draft being replaced and a "↻" notice. A second curt reply is let through.
 */
export const curtReplyGuard: Processor<'curt-reply-guard'> = {
  id: 'curt-reply-guard',
  processOutputStep({ text, toolCalls, retryCount, abort }) {
    const words = text.trim().split(/\s+/).filter((word) => word !== '').length;
    if (toolCalls.length === 0 && words > 0 && words < MIN_REPLY_WORDS && retryCount === 0) {
      abort(CURT_REPLY_FEEDBACK, { retry: true, metadata: { words } });
    }
  },
};

/**
 * The offline model: the shared support model, plus refund questions — answered curtly at first
 * (the guard sends that back) and properly once told so.
 */
function offlineChatModel(wordDelayMs: number): LanguageModelV4 {
  const support = offlineSupportModel({ wordDelayMs });
  const refunds = scriptedModel({
    modelId: 'offline-refunds',
    wordDelayMs,
    rules: [
      { match: /too curt/i, reply: { text: "Sorry for the short answer! You can get a full refund within 30 days: tell me the order number and I'll start it." } },
      { match: /refund/i, reply: { text: 'Refunds? Absolutely not, everything we sell is final.' } },
    ],
  });
  const pick = (prompt: Parameters<LanguageModelV4['doStream']>[0]['prompt']) =>
    /refund|too curt/i.test(scriptContext(prompt, 0).userText) ? refunds : support;
  return {
    specificationVersion: 'v4',
    provider: 'rxagent-offline',
    modelId: 'offline-chat',
    supportedUrls: {},
    doStream: (options) => pick(options.prompt).doStream(options),
    doGenerate: (options) => pick(options.prompt).doGenerate(options),
  };
}

function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(emailPattern, '[REDACTED:email]');
  if (Array.isArray(value)) return value.map(redactDeep);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactDeep(inner)]));
  return value;
}

/** Redacts e-mail addresses in tool results before they reach the client. */
export const toolOutputRedactor: Processor<'tool-output-redactor'> = {
  id: 'tool-output-redactor',
  processOutputStream({ part }): ChunkType {
    if (part.type !== 'tool-result') return part;
    return { ...part, payload: { ...part.payload, result: redactDeep(part.payload.result) } };
  },
};

async function chooseModel(wordDelayMs: number): Promise<ModelInput> {
  if (!process.env.OPENAI_API_KEY) return offlineChatModel(wordDelayMs);
  const { createOpenAI } = await import('@ai-sdk/openai');
  const openai = createOpenAI({ apiKey: process.env.OPENAI_API_KEY, ...(process.env.OPENAI_BASE_URL ? { baseURL: process.env.OPENAI_BASE_URL } : {}) });
  return openai.chat(process.env.OPENAI_MODEL ?? 'gpt-4.1-mini');
}

/** The chat agent; `wordDelayMs` paces the offline model's streaming. */
export async function createChatAgent(options: { wordDelayMs?: number } = {}): Promise<Agent> {
  return new Agent({
    id: 'web-chat',
    instructions: 'You are a concise support assistant. Use lookupOrder for order questions.',
    model: await chooseModel(options.wordDelayMs ?? 25),
    tools: {
      lookupOrder: {
        description: 'Look up an order by id',
        inputSchema: z.object({ orderId: z.string() }),
        execute: async ({ orderId }: { orderId: string }) => ({
          id: orderId,
          status: 'shipped',
          eta: 'on Thursday',
          contact: 'jane.doe@example.com',
        }),
      },
    },
    maxProcessorRetries: 1,
    outputProcessors: [
      curtReplyGuard,
      secretGuard,
      toolOutputRedactor,
      new RegexFilterProcessor({ presets: 'pii', strategy: 'redact', phase: 'output', streamCarryoverSize: 24 }),
    ],
  });
}
