/**
 * The agent behind the web chat: the offline support model (or OpenAI with OPENAI_API_KEY), an
 * order-lookup tool, and output processors — a guardrail that trips the wire on a leaked secret,
 * a tool-output redactor, and the built-in regex redactor for e-mail addresses in the text.
 */
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/processor/chunk-types.js';
import type { ModelInput, Processor } from '../../src/processor/processor-types.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
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
  if (!process.env.OPENAI_API_KEY) return offlineSupportModel({ wordDelayMs });
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
    outputProcessors: [
      secretGuard,
      toolOutputRedactor,
      new RegexFilterProcessor({ presets: 'pii', strategy: 'redact', phase: 'output', streamCarryoverSize: 40 }),
    ],
  });
}
