import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.ToolExecutionError');

/**
 * Options of {@link ToolExecutionError}.
 *
 * @example
 * ```ts
 * import type { ToolExecutionErrorOptions } from 'rxagent';
 * const options: ToolExecutionErrorOptions = { toolName: 'lookupOrder', toolCallId: 'call_1', message: 'Tool "lookupOrder" not found.' };
 * ```
 */
export interface ToolExecutionErrorOptions {
  /** The name of the tool. */
  toolName: string;
  /** The call this error belongs to, when there is one. */
  toolCallId?: string;
  /** Default: `Tool "<toolName>" failed: <cause's message>`. */
  message?: string;
  /** What the tool threw, the validation error, … */
  cause?: unknown;
}

/**
 * What a tool threw or failed with, as text (an `Error`'s message, else `String(value)`) and a
 * `cause` safe to keep. Never throws: a value that cannot be read (a Proxy that throws, a revoked
 * Proxy, a throwing `toString`, a null-prototype object) is described as such and left out.
 */
export function readThrown(thrown: unknown): { text: string; cause?: unknown } {
  try {
    return { text: thrown instanceof Error ? String(thrown.message) : String(thrown), cause: thrown };
  } catch {
    return { text: 'a value that cannot be read' };
  }
}

/**
 * A tool call the run cannot or may not execute: an unknown tool, a tool without `execute`,
 * input that fails the tool's schema, a result that is not serializable, or a non-`Error` value
 * thrown by `execute`. It reaches the stream as a `tool-error` chunk and the model as an error
 * result; the run goes on.
 *
 * @example
 * ```ts
 * import { ToolExecutionError } from 'rxagent';
 * for await (const chunk of (await agent.stream('Where is order 1?')).fullStream) {
 *   if (chunk.type === 'tool-error' && ToolExecutionError.isInstance(chunk.payload.error)) console.log(chunk.payload.error.toolName);
 * }
 * ```
 */
export class ToolExecutionError extends RxAgentError {
  private readonly [marker] = true;
  /** The name of the tool. */
  readonly toolName: string;
  /** The id of the model's tool call. */
  readonly toolCallId: string | undefined;

  constructor({ toolName, toolCallId, message, cause }: ToolExecutionErrorOptions) {
    super('ToolExecutionError', message ?? `Tool "${toolName}" failed: ${readThrown(cause).text}`, { cause });
    this.toolName = toolName;
    this.toolCallId = toolCallId;
  }

  static override isInstance(error: unknown): error is ToolExecutionError {
    return hasMarker(error, marker);
  }
}
