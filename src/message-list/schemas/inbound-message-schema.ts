/**
 * The schema for anything `MessageList.add` accepts, and the function that turns its failures
 * into an `InvalidMessageError`.
 */
import { z } from 'zod';
import type { InboundMessage } from '../types.js';
import { InvalidMessageError, type MessageIssue } from '../errors/invalid-message-error.js';
import { dbMessageSchema, isPlainDbMessage } from './db-message-schema.js';
import { modelMessageSchema } from './model-message-schema.js';
import { uiMessageSchema } from './ui-message-schema.js';
import { dispatch, isRecord, nonEmptyString } from './schema-helpers.js';

/**
 * Which format an inbound value is in.
 *
 * @example
 * ```ts
 * import type { InboundFormat } from 'rxagent/message-list';
 * const format: InboundFormat = detectInboundFormat(value);
 * ```
 */
export type InboundFormat = 'string' | 'db' | 'ui' | 'model';

/**
 * Tells the format of an inbound value by its shape: a string; an object whose `content` is an
 * object with `format` (stored, format 2); an object with `parts` and no `content` (UI); anything
 * else is validated as a model message.
 *
 * @example
 * ```ts
 * import { detectInboundFormat } from 'rxagent/message-list';
 * detectInboundFormat({ id: 'm1', role: 'user', parts: [] }); // 'ui'
 * ```
 */
export function detectInboundFormat(value: unknown): InboundFormat {
  if (typeof value === 'string') return 'string';
  if (isRecord(value)) {
    const content = value['content'];
    if (isRecord(content) && 'format' in content) return 'db';
    if (!('content' in value) && 'parts' in value) return 'ui';
  }
  return 'model';
}

const schemaByFormat: Record<InboundFormat, z.ZodType> = {
  string: nonEmptyString,
  db: dbMessageSchema,
  ui: uiMessageSchema,
  model: modelMessageSchema,
};

/**
 * Validates one inbound message of any accepted format (string, `ModelMessage`, `UIMessage`,
 * `MastraDBMessage`, `CoreSystemMessage`).
 *
 * @example
 * ```ts
 * import { inboundMessageSchema } from 'rxagent/message-list';
 * inboundMessageSchema.safeParse({ role: 'user', content: 42 }).success; // false
 * ```
 */
export const inboundMessageSchema: z.ZodType<InboundMessage> = dispatch<InboundMessage>((value) => schemaByFormat[detectInboundFormat(value)]);

/**
 * Validates inbound messages and throws one `InvalidMessageError` listing every issue found.
 * Paths start with the index in `messages` when `indexed` is true (an array was given);
 * messages `trusted.isTrusted` accepts (objects the list holds or made) are taken as they are.
 */
export function assertValidInbound(messages: ReadonlyArray<unknown>, indexed: boolean, trusted?: { isTrusted(message: unknown): boolean }): void {
  const issues: MessageIssue[] = [];
  messages.forEach((message, index) => {
    // a non-empty string is valid as it is (the common `generate('…')` input), and so is a stored
    // message of the common shape (the loop's own, one per step): no schema run for either
    if (typeof message === 'string' ? message.length > 0 : trusted?.isTrusted(message) === true || isPlainDbMessage(message)) return;
    let result: ReturnType<typeof inboundMessageSchema.safeParse>;
    try {
      result = inboundMessageSchema.safeParse(message);
    } catch (error) {
      // a message nested deeper than validation can walk (the stack overflows) is invalid input
      if (!(error instanceof RangeError)) throw error;
      issues.push({ path: indexed ? [index] : [], message: 'nested too deeply to validate' });
      return;
    }
    if (result.success) return;
    for (const issue of result.error.issues) {
      const path = issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key));
      issues.push({ path: indexed ? [index, ...path] : path, message: issue.message });
    }
  });
  if (issues.length > 0) throw new InvalidMessageError(issues);
}
