/** The request side of a chat endpoint: `useChat`'s `UIMessage[]` → what `agent.stream$()` takes. */
import type { UIMessage } from 'ai';
import { RETRY_PART_TYPE, TRIPWIRE_PART_TYPE } from './ui-data-types.js';
import { InvalidMessageError } from '../message-list/index.js';

/**
 * Options of {@link fromUIMessages}.
 *
 * @example
 * ```ts
 * import type { FromUIMessagesOptions } from 'rxagent/ai-sdk';
 * const options: FromUIMessagesOptions = { keepTripwiredMessages: true };
 * ```
 */
export interface FromUIMessagesOptions {
  /**
   * Keep assistant messages that ended in a tripwire (they hold what streamed before the block,
   * which the server did not keep). Default false: they are left out of the model's history.
   */
  keepTripwiredMessages?: boolean;
  /**
   * Accept `role: 'system'` messages from the client. Default false: a client system message is
   * an `InvalidMessageError` (a client must not be able to rewrite the agent's instructions).
   * Only set this when the messages come from your own trusted code, not from a request body.
   */
  allowSystemMessages?: boolean;
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/** The first shape problem of a posted message (not an object, parts not an array of objects), before anything reads it. */
function shapeIssue(message: unknown, index: number): { path: Array<string | number>; message: string } | undefined {
  if (!isObject(message) || Array.isArray(message)) return { path: [index], message: 'a message must be an object' };
  const parts: unknown = (message as { parts?: unknown }).parts;
  if (parts === undefined) return undefined;
  if (!Array.isArray(parts)) return { path: [index, 'parts'], message: 'parts must be an array' };
  const bad = parts.findIndex((part: unknown) => !isObject(part));
  return bad === -1 ? undefined : { path: [index, 'parts', bad], message: 'a part must be an object' };
}

/**
 * Prepares the `messages` a `useChat` client posted for an agent call: rxagent's own UI-only
 * parts (`data-tripwire`, `data-rxagent-retry`) are removed, assistant replies that a processor
 * blocked are left out (unless `keepTripwiredMessages`), and messages left without parts are
 * dropped. The result is `UIMessage[]`, which `agent.stream$()` / `generate()` accept as input
 * (the `MessageList` validates and converts them).
 *
 * Client-sent history is untrusted: `messages` that is not an array (`InvalidMessageError` at the
 * root), a message that is not an object or whose parts are not objects, and a `role: 'system'`
 * message (unless `allowSystemMessages: true`) are an `InvalidMessageError` naming where. In a run with memory, a client message
 * never replaces a stored one (see docs/ai-sdk.md, "What a client may send").
 *
 * @example
 * ```ts
 * import { fromUIMessages, toUIMessageStreamResponse } from 'rxagent/ai-sdk';
 * const { messages } = (await request.json()) as { messages: UIMessage[] };
 * return toUIMessageStreamResponse(agent.stream$(fromUIMessages(messages)));
 * ```
 */
export function fromUIMessages<TMessage extends UIMessage>(messages: readonly TMessage[], options: FromUIMessagesOptions = {}): TMessage[] {
  // a posted body's `messages` that is not an array is the client's mistake, as a malformed message is
  if (!Array.isArray(messages)) throw new InvalidMessageError([{ path: [], message: 'messages must be an array of UI messages' }]);
  const result: TMessage[] = [];
  for (const [index, message] of messages.entries()) {
    const malformed = shapeIssue(message as unknown, index);
    if (malformed !== undefined) throw new InvalidMessageError([malformed]);
    if ((message as { role?: unknown }).role === 'system' && options.allowSystemMessages !== true) {
      throw new InvalidMessageError([
        { path: [index, 'role'], message: "system messages from the client are not accepted (pass allowSystemMessages: true to trust them)" },
      ]);
    }
    const parts: UIMessage['parts'] = message.parts ?? [];
    const tripwired = parts.some((part) => part.type === TRIPWIRE_PART_TYPE);
    if (tripwired && message.role === 'assistant' && options.keepTripwiredMessages !== true) continue;
    const kept = parts.filter((part) => part.type !== TRIPWIRE_PART_TYPE && part.type !== RETRY_PART_TYPE);
    if (kept.every((part) => part.type === 'step-start')) continue;
    result.push(kept.length === parts.length ? message : ({ ...message, parts: kept } as TMessage));
  }
  return result;
}
