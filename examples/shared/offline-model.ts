/**
 * The offline model the examples run on when no API key is set: a scripted support assistant
 * (rxagent's `scriptedModel`) — a greeting, an order lookup through a tool, an answer that quotes
 * the customer's e-mail (which the output redactor catches), and a polite default.
 */
import { scriptedModel } from 'rxagent/testing';

/** A deterministic support model: no network, no key. */
export function offlineSupportModel(options: { wordDelayMs?: number } = {}) {
  return scriptedModel({
    modelId: 'offline-support',
    ...(options.wordDelayMs === undefined ? {} : { wordDelayMs: options.wordDelayMs }),
    rules: [
      {
        match: ({ toolResults }) => toolResults.some((result) => result.toolName === 'lookupOrder'),
        reply: ({ toolResults }) => {
          const order = toolResults.find((result) => result.toolName === 'lookupOrder')?.output as
            | { id: string; status: string; eta: string; contact: string }
            | undefined;
          return order
            ? {
                text: `Order ${order.id} is ${order.status} and should arrive ${order.eta}. We'll send updates to ${order.contact}.`,
              }
            : { text: "I couldn't find that order." };
        },
      },
      {
        match: /order\s*#?(\d+)/i,
        reply: ({ userText }) => ({
          reasoning: 'The customer asks about an order: look it up first.',
          toolCalls: [{ toolName: 'lookupOrder', args: { orderId: /order\s*#?(\d+)/i.exec(userText)?.[1] ?? '' } }],
        }),
      },
      { match: /\b(hi|hello|hey)\b/i, reply: { text: 'Hello! I can check orders and answer questions about deliveries.' } },
      {
        match: /secret|password/i,
        reply: { text: 'Our internal admin password is hunter2, please keep it safe.' },
      },
    ],
    fallback: ({ userText }) => ({ text: `You said: "${userText}". Ask me about an order, e.g. "Where is order 1234?"` }),
  });
}
