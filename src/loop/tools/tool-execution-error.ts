import { TypeValidationError } from '@ai-sdk/provider';
import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';
import { thrownMessage } from '../../errors/thrown-message.js';

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
 * What a tool threw or failed with, as text (`thrownMessage`: an `Error`'s message, else `String(value)`) and a
 * `cause` safe to keep. Never throws: a value that cannot be read (a Proxy that throws, a revoked
 * Proxy, a throwing `toString`, a null-prototype object) is described as such and left out.
 */
export function readThrown(thrown: unknown): { text: string; cause?: unknown } {
  const text = thrownMessage(thrown);
  return text === undefined ? { text: 'a value that cannot be read' } : { text, cause: thrown };
}

/** At most this many validation issues are listed in a tool's input error (the count names the rest). */
const MAX_LISTED_ISSUES = 5;
/** The longest issue message, issue path, tool name and input excerpt an input error carries. */
const MAX_ISSUE_CHARS = 200;
const MAX_PATH_CHARS = 100;
const MAX_NAME_CHARS = 100;
const MAX_EXCERPT_CHARS = 200;

/** `text` cut to `max` UTF-16 code units (never between the halves of a surrogate pair), `…` marking a cut. */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/** A tool name as error texts show it: cut to 100 code units (a model can call a tool by any name). */
export function shownToolName(toolName: string): string {
  return clipText(String(toolName), MAX_NAME_CHARS);
}

/** What an input error says when the validator gave nothing readable. */
const NO_MATCH = "the input does not match the tool's schema";

/** `n` with thousands separators, the same in every locale. */
const withSeparators = (n: number): string => n.toLocaleString('en-US');

/** The issues of a failed validation: a zod error's `issues`, a Standard Schema's issues, through `TypeValidationError` causes. */
function issuesOf(error: unknown): { issues: readonly unknown[] } | { text: string } {
  let current = error;
  let text = NO_MATCH;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    if (Array.isArray(current)) return { issues: current };
    const issues = (current as { issues?: unknown }).issues;
    if (Array.isArray(issues)) return { issues };
    // the innermost message that is not the AI SDK's wrapper (which repeats the whole input)
    if (current instanceof Error && !TypeValidationError.isInstance(current)) text = String(current.message);
    current = (current as { cause?: unknown }).cause;
  }
  return { text };
}

/** One issue as `path: message`, each cut short; an issue that cannot be read is described as such. */
function describeIssue(issue: unknown): string {
  try {
    const { path, message } = issue as { path?: unknown; message?: unknown };
    const segments = Array.isArray(path) ? path.map((segment: unknown) => {
      const key = typeof segment === 'object' && segment !== null && 'key' in segment ? (segment as { key: unknown }).key : segment;
      return clipText(typeof key === 'symbol' ? key.toString() : String(key), MAX_PATH_CHARS);
    }) : [];
    const where = segments.length === 0 ? '(root)' : clipText(segments.join('.'), MAX_PATH_CHARS);
    return `${where}: ${clipText(typeof message === 'string' ? message : 'invalid', MAX_ISSUE_CHARS)}`;
  } catch {
    return '(an issue that cannot be read)';
  }
}

/** The input as JSON, cut to an excerpt with its length when long (a line saying so when it cannot be written as JSON). */
function inputExcerpt(input: unknown): string {
  try {
    const json = JSON.stringify(input);
    if (json === undefined) return 'Input: (none)';
    if (json.length <= MAX_EXCERPT_CHARS) return `Input: ${json}`;
    return `Input (${withSeparators(json.length)} characters, the first ${MAX_EXCERPT_CHARS}): ${clipText(json, MAX_EXCERPT_CHARS)}`;
  } catch {
    return 'Input: (cannot be written as JSON)';
  }
}

/**
 * The text of a tool's input-validation error, for the model to correct its call and for the
 * client: the issues (path and message, the first five, each cut short, with their count) and an
 * excerpt of the input — a few hundred characters however large the input, its keys or the
 * validator's issues are (the AI SDK's `TypeValidationError` text repeats the whole input). The
 * full validation error stays the `ToolExecutionError`'s `cause`.
 */
export function invalidInputMessage(toolName: string, validationError: unknown, input: unknown): string {
  const head = `Invalid input for tool "${shownToolName(toolName)}"`;
  let details: string[];
  try {
    const found = issuesOf(validationError);
    if ('text' in found || found.issues.length === 0) {
      details = [`${head}: ${clipText('text' in found ? found.text : NO_MATCH, MAX_ISSUE_CHARS)}`];
    } else {
      const { issues } = found;
      const listed = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `- ${describeIssue(issue)}`);
      const more = issues.length > MAX_LISTED_ISSUES ? [`- … and ${withSeparators(issues.length - MAX_LISTED_ISSUES)} more`] : [];
      details = [`${head} (${issues.length === 1 ? '1 issue' : `${withSeparators(issues.length)} issues`}):`, ...listed, ...more];
    }
  } catch {
    // issues behind a Proxy that throws, a getter that throws: the schema's verdict without them
    details = [`${head}: ${NO_MATCH}`];
  }
  return [...details, inputExcerpt(input)].join('\n');
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
