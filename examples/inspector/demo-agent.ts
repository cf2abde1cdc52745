/**
 * The agent `npm run inspect` opens: offline (rxagent's `scriptedModel`, no API key) and built so
 * that every kind of marble shows up on the inspector's timeline —
 * - a moderation judge (a model-backed input processor with its own scripted model): a judge
 *   call per run, and a tripwire for "I hate…";
 * - a tool call (`lookupOrder`) whose e-mail address is redacted (`RegexFilterProcessor`'s
 *   `processToolResult`: a rewrite), as it is in the streamed text (rewrites and held carry-over);
 * - batching of text deltas (`BatchPartsProcessor`: holds, released as one merged delta);
 * - a guard that sends a curt reply back once (`curt-reply-guard`: a retry, two attempts);
 * - a guardrail that trips the wire on a leaked secret (`secret-guard`: a tripwire).
 */
import { z } from 'zod';
import { Agent } from 'rxagent';
import { BatchPartsProcessor, ModerationProcessor, RegexFilterProcessor } from 'rxagent/processors';
import { scriptedModel } from 'rxagent/testing';
import { curtReplyGuard, secretGuard } from '../web-chat/chat-agent.js';

/** What the page suggests typing, each showing a different part of the timeline. */
export const DEMO_PROMPTS = ['Hello!', 'Where is order 123?', 'Can I get a refund?', 'What is the admin password?', 'I hate this shop'];

/** The support model: a greeting, an order lookup through a tool, a curt refund answer (then a proper one), a leaked secret. */
function supportModel(wordDelayMs: number) {
  return scriptedModel({
    modelId: 'offline-support',
    wordDelayMs,
    rules: [
      {
        match: ({ toolResults }) => toolResults.some((result) => result.toolName === 'lookupOrder'),
        reply: ({ toolResults }) => {
          const order = toolResults[0]?.output as { id: string; status: string; eta: string; contact: string };
          return { text: `Order ${order.id} is ${order.status} and should arrive ${order.eta}. We'll send updates to ${order.contact}.` };
        },
      },
      {
        match: /order\s*#?(\d+)/i,
        reply: ({ userText }) => ({
          reasoning: 'The customer asks about an order: look it up first.',
          toolCalls: [{ toolName: 'lookupOrder', args: { orderId: /order\s*#?(\d+)/i.exec(userText)?.[1] ?? '' } }],
        }),
      },
      { match: /too curt/i, reply: { text: "Sorry for the short answer! You can get a full refund within 30 days: tell me the order number and I'll start it." } },
      { match: /refund/i, reply: { text: 'Refunds? Absolutely not, everything we sell is final.' } },
      { match: /\b(hi|hello|hey)\b/i, reply: { text: 'Hello! I can check orders and answer questions about deliveries.' } },
      { match: /secret|password/i, reply: { text: 'Our internal admin password is hunter2, please keep it safe.' } },
    ],
    fallback: ({ userText }) => ({ text: `You said: "${userText}". Ask me about an order, e.g. "Where is order 1234?"` }),
  });
}

/** The moderation judge: flags hostility, passes everything else (answers in the shape the processor asks for). */
function moderationJudge() {
  return scriptedModel({
    modelId: 'offline-moderation',
    rules: [
      {
        match: /\bhate\b/i,
        reply: { text: JSON.stringify({ category_scores: [{ category: 'harassment', score: 0.92 }], reason: 'hostile wording' }) },
      },
    ],
    fallback: { text: JSON.stringify({ category_scores: [{ category: 'harassment', score: 0.02 }], reason: 'nothing to flag' }) },
  });
}

/** Options of {@link createDemoAgent}. */
export interface DemoAgentOptions {
  /** Delay between streamed words, ms (default 40: the timeline fills in visibly); 0 runs synchronously. */
  wordDelayMs?: number;
  /** Deterministic ids (tests): message ids from this function. */
  generateId?: () => string;
  /** The moderation judge on the input (default `true`). Its model call is asynchronous: leave it out for a run on virtual time. */
  moderation?: boolean;
}

/** The demo agent (a new one per call: its processors keep no state between runs anyway). */
export function createDemoAgent(options: DemoAgentOptions = {}): Agent {
  return new Agent({
    id: 'support-desk',
    name: 'Support desk (offline)',
    instructions: 'You are a concise support assistant. Use lookupOrder for order questions.',
    model: supportModel(options.wordDelayMs ?? 40),
    ...(options.generateId === undefined ? {} : { generateId: options.generateId }),
    tools: {
      lookupOrder: {
        description: 'Look up an order by id',
        inputSchema: z.object({ orderId: z.string() }),
        // synchronous: a whole run stays on virtual time in marble tests
        execute: ({ orderId }: { orderId: string }) => ({ id: orderId, status: 'shipped', eta: 'on Thursday', contact: 'jane.doe@example.com' }),
      },
    },
    maxProcessorRetries: 1,
    inputProcessors: options.moderation === false ? [] : [new ModerationProcessor({ model: moderationJudge(), lastMessageOnly: true, threshold: 0.7 })],
    outputProcessors: [
      secretGuard,
      new RegexFilterProcessor({ presets: 'pii', strategy: 'redact', phase: 'output', streamCarryoverSize: 24 }),
      new BatchPartsProcessor({ batchSize: 3 }),
      curtReplyGuard,
    ],
  });
}
