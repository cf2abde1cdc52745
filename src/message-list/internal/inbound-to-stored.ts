/** Turns one validated inbound message into a stored message (or a system message). */
import type { ModelMessage, UIMessage } from 'ai';
import type { CoreSystemMessage, InboundMessage, MastraDBMessage } from '../types.js';
import type { ConversionOptions } from '../conversion-options.js';
import { detectInboundFormat } from '../schemas/inbound-message-schema.js';
import { fromModelMessage } from '../from-model.js';
import { fromUIMessage } from '../from-ui.js';
import { systemMessageFromStored, systemMessageFromUI } from '../system-messages.js';

/** A converted inbound message: a stored message, or a system message for the system buckets. */
export type ConvertedInbound = { kind: 'stored'; message: MastraDBMessage } | { kind: 'system'; message: CoreSystemMessage };

/** Converts one validated inbound message. Stored messages are adopted (normalised in place), not copied. */
export function inboundToStored(inbound: InboundMessage, options: Required<ConversionOptions>): ConvertedInbound {
  switch (detectInboundFormat(inbound)) {
    case 'string':
      return {
        kind: 'stored',
        message: { id: options.generateId(), role: 'user', createdAt: options.now(), content: { format: 2, parts: [{ type: 'text', text: inbound as string }] } },
      };
    case 'db': {
      const message = adoptStoredMessage(inbound as MastraDBMessage, options.now);
      return message.role === 'system' ? { kind: 'system', message: systemMessageFromStored(message) } : { kind: 'stored', message };
    }
    case 'ui': {
      const message = inbound as UIMessage;
      return message.role === 'system' ? { kind: 'system', message: systemMessageFromUI(message) } : { kind: 'stored', message: fromUIMessage(message, options) };
    }
    case 'model': {
      const message = inbound as ModelMessage;
      if (message.role === 'system') {
        return { kind: 'system', message: { role: 'system', content: message.content, ...(message.providerOptions ? { providerOptions: message.providerOptions } : {}) } };
      }
      return { kind: 'stored', message: fromModelMessage(message, options) };
    }
  }
}

/**
 * Normalises a validated stored message in place: `createdAt` as a `Date` (stamped when
 * missing), reasoning `details` filled in, a legacy `content.content`-only message given a text part.
 */
export function adoptStoredMessage(message: MastraDBMessage, now: () => Date): MastraDBMessage {
  const createdAt: unknown = message.createdAt;
  if (!(createdAt instanceof Date)) message.createdAt = typeof createdAt === 'string' ? new Date(createdAt) : now();
  for (const part of message.content.parts) {
    if (part.type === 'reasoning' && !Array.isArray(part.details)) part.details = [{ type: 'text', text: part.reasoning }];
  }
  if (message.content.parts.length === 0 && message.content.content) message.content.parts = [{ type: 'text', text: message.content.content }];
  return message;
}
