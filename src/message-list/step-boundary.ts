/**
 * Step boundaries: a snapshot of the response taken before a model step, so a retried step can
 * be rolled back to it.
 */
import type { MastraDBMessage, MastraMessagePart, ToolInvocation } from './types.js';

/**
 * What the response looked like when a step began. Returned by
 * `MessageList.openStepBoundary()` and only meaningful to the list that made it.
 *
 * @example
 * ```ts
 * import type { StepBoundary } from 'rxagent/message-list';
 * const boundary: StepBoundary = messageList.openStepBoundary();
 * // … the step fails a processor check and is retried …
 * messageList.rollbackToStepBoundary(boundary);
 * ```
 */
export interface StepBoundary {
  /** Ids of the response messages at the boundary, in list order. */
  readonly responseMessageIds: ReadonlyArray<string>;
  /** The last response message at the boundary when it is an assistant message. */
  readonly lastAssistantMessageId: string | undefined;
  /** How many parts that assistant message had. */
  readonly lastAssistantPartCount: number;
}

/** The saved state of one response message. */
export interface MessageSnapshot {
  message: MastraDBMessage;
  parts: MastraMessagePart[];
  /** The `toolInvocation` object of each part (undefined for other parts), by index. */
  invocations: Array<ToolInvocation | undefined>;
  legacyContent: string | undefined;
}

/** Saves a message's parts (shallowly) and the tool invocation object of each. */
export function snapshotMessage(message: MastraDBMessage): MessageSnapshot {
  const parts = [...message.content.parts];
  return {
    message,
    parts,
    invocations: parts.map((part) => (part.type === 'tool-invocation' ? part.toolInvocation : undefined)),
    legacyContent: message.content.content,
  };
}

/** Puts a message's parts and tool invocations back as saved; returns whether anything changed. */
export function restoreMessage(snapshot: MessageSnapshot): boolean {
  const { message } = snapshot;
  const current = message.content.parts;
  let changed = current.length !== snapshot.parts.length || message.content.content !== snapshot.legacyContent;
  snapshot.parts.forEach((part, index) => {
    if (current[index] !== part) changed = true;
    const invocation = snapshot.invocations[index];
    if (part.type === 'tool-invocation' && invocation && part.toolInvocation !== invocation) {
      part.toolInvocation = invocation;
      changed = true;
    }
  });
  if (changed) {
    message.content.parts = [...snapshot.parts];
    if (snapshot.legacyContent === undefined) delete message.content.content;
    else message.content.content = snapshot.legacyContent;
  }
  return changed;
}
