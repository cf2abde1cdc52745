import type { LanguageModelV4Message, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { booleanOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';
import { InvalidProcessorOptionError, type ProcessLLMRequestArgs, type ProcessLLMRequestResult, type Processor, type ProcessorState } from '../contract/index.js';

/**
 * Options of {@link ToolCallFilter}.
 *
 * @example
 * ```ts
 * const options: ToolCallFilterOptions = { exclude: ['search'], preserveCurrentTurn: false };
 * ```
 */
export interface ToolCallFilterOptions {
  /** Tool names whose calls and results are removed. Default: every tool (`[]`: none). */
  exclude?: string[];
  /**
   * Keep the calls and results of the turn in progress — those after the last user message, and
   * those this run produced — so a running tool loop still sees what it just did. Default `true`;
   * `false` filters them too. Ignored when `filterAfterToolSteps` is set.
   */
  preserveCurrentTurn?: boolean;
  /**
   * Keep the calls and results of the last `n` tool-producing steps (each assistant message with
   * tool calls is one step, history and this run alike) and filter the older ones. `0` keeps none.
   */
  filterAfterToolSteps?: number;
  /**
   * Replace each removed call/result pair with a text part `"<tool> result:\n<output as text>"` in
   * the assistant message that made the call, so the model keeps the outcome without the tool
   * protocol. Default `false`.
   */
  preserveModelOutput?: boolean;
}

/** The option names {@link ToolCallFilter} knows (the reference's are all among them). */
const TOOL_CALL_FILTER_OPTION_KEYS = optionKeys('tool-call-filter', optionNames<ToolCallFilterOptions>({ exclude: true, preserveCurrentTurn: true, filterAfterToolSteps: true, preserveModelOutput: true }));

type AssistantContent = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'];
type ToolContent = Extract<LanguageModelV4Message, { role: 'tool' }>['content'];

/** State key: the tool call ids of the run's first prompt (history, as opposed to this run's calls), a JSON array. */
const HISTORY_IDS_KEY = 'toolCallFilter.historyIds';

/**
 * Removes tool calls and tool results from the prompt sent to the model — all of them, or those of
 * the tools in `exclude` — to save context on long conversations. No model call.
 *
 * It only implements `processLLMRequest`, so it rewrites the outgoing prompt of each call and
 * nothing else: the stored history, the `MessageList` and the UI keep every tool invocation.
 * A call and its result are always removed together (by tool call id), so no dangling call or
 * orphaned result is sent; messages left empty are removed from the prompt. The turn in progress
 * is kept by default (`preserveCurrentTurn`), or the last `filterAfterToolSteps` tool steps;
 * `preserveModelOutput` leaves the removed results' output behind as text.
 *
 * Hook: `processLLMRequest` (register it as an input processor).
 *
 * @example
 * ```ts
 * import { ToolCallFilter } from 'rxagent/processors';
 * const agent = new Agent({ id: 'a', instructions: '…', model, tools, inputProcessors: [new ToolCallFilter({ exclude: ['search'] })] });
 * ```
 */
export class ToolCallFilter implements Processor<'tool-call-filter'> {
  /** The processor's id. */
  readonly id = 'tool-call-filter';
  /** A human-readable name. */
  readonly name = 'Tool Call Filter';
  /** What the processor does. */
  readonly description = 'Removes tool calls and results from the prompt of each model call.';
  private readonly exclude: ReadonlySet<string> | undefined;
  private readonly preserveCurrentTurn: boolean;
  private readonly filterAfterToolSteps: number | undefined;
  private readonly preserveModelOutput: boolean;

  constructor(options: ToolCallFilterOptions = {}) {
    checkOptionKeys(TOOL_CALL_FILTER_OPTION_KEYS, options);
    const { exclude, filterAfterToolSteps } = options;
    if (exclude !== undefined && (!Array.isArray(exclude) || exclude.some((name) => typeof name !== 'string'))) {
      throw new InvalidProcessorOptionError(this.id, 'exclude', exclude, 'an array of tool names');
    }
    if (filterAfterToolSteps !== undefined && (typeof filterAfterToolSteps !== 'number' || Number.isNaN(filterAfterToolSteps) || filterAfterToolSteps < 0)) {
      throw new InvalidProcessorOptionError(this.id, 'filterAfterToolSteps', filterAfterToolSteps, 'a number of at least 0');
    }
    this.exclude = exclude === undefined ? undefined : new Set(exclude);
    this.preserveCurrentTurn = booleanOption(this.id, 'preserveCurrentTurn', options.preserveCurrentTurn, true);
    this.filterAfterToolSteps = filterAfterToolSteps === undefined ? undefined : Math.floor(filterAfterToolSteps);
    this.preserveModelOutput = booleanOption(this.id, 'preserveModelOutput', options.preserveModelOutput, false);
  }

  /** The `processLLMRequest` hook (see `Processor.processLLMRequest` for when it runs and what it may return). */
  processLLMRequest({ prompt, state }: ProcessLLMRequestArgs): ProcessLLMRequestResult {
    const filtered = this.filterPrompt(prompt, state);
    return filtered === prompt ? undefined : { prompt: filtered };
  }

  /**
   * The prompt without the excluded tool calls/results (the same array when nothing changed).
   * `state` (the run state) tells this run's calls from history; without it only the turn after
   * the last user message counts as current.
   */
  filterPrompt(prompt: LanguageModelV4Prompt, state?: ProcessorState): LanguageModelV4Prompt {
    if (this.exclude !== undefined && this.exclude.size === 0) return prompt;
    const preserved = this.preservedIds(prompt, state);
    const excluded = new Set<string>();
    for (const message of prompt) {
      if (message.role !== 'assistant' && message.role !== 'tool') continue;
      for (const part of message.content) {
        if ((part.type === 'tool-call' || part.type === 'tool-result') && !preserved.has(part.toolCallId) && this.excluded(part.toolName)) {
          excluded.add(part.toolCallId);
        }
      }
    }
    if (excluded.size === 0) return prompt;
    const replacements = this.preserveModelOutput ? replacementTexts(prompt, excluded) : new Map<string, string>();
    const result: LanguageModelV4Prompt = [];
    for (const message of prompt) {
      if (message.role === 'assistant') {
        const content: AssistantContent = [];
        for (const part of message.content) {
          const id = part.type === 'tool-call' || part.type === 'tool-result' ? part.toolCallId : undefined;
          if (id === undefined || !excluded.has(id)) content.push(part);
          else if (part.type === 'tool-call' && replacements.has(id)) content.push({ type: 'text', text: replacements.get(id) as string });
        }
        if (content.length > 0) result.push(content.length === message.content.length && content.every((part, index) => part === message.content[index]) ? message : { ...message, content });
      } else if (message.role === 'tool') {
        const content: ToolContent = message.content.filter((part) => !('toolCallId' in part && excluded.has(part.toolCallId)));
        if (content.length > 0) result.push(content.length === message.content.length ? message : { ...message, content });
      } else {
        result.push(message);
      }
    }
    return result;
  }

  private excluded(toolName: string): boolean {
    return this.exclude === undefined || this.exclude.has(toolName);
  }

  /** The tool call ids that stay: the last `filterAfterToolSteps` steps, or the turn in progress. */
  private preservedIds(prompt: LanguageModelV4Prompt, state: ProcessorState | undefined): Set<string> {
    if (this.filterAfterToolSteps !== undefined) {
      const steps = prompt
        .filter((message) => message.role === 'assistant')
        .map((message) => message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])))
        .filter((ids) => ids.length > 0);
      return new Set(this.filterAfterToolSteps === 0 ? [] : steps.slice(-this.filterAfterToolSteps).flat());
    }
    const preserved = new Set<string>();
    if (!this.preserveCurrentTurn) return preserved;
    let lastUser = -1;
    prompt.forEach((message, index) => (message.role === 'user' ? (lastUser = index) : undefined));
    const all = toolCallIds(prompt, 0);
    for (const id of toolCallIds(prompt, lastUser + 1)) preserved.add(id);
    if (state !== undefined) {
      // The first prompt of the run is history; calls that appear later were made by this run.
      // kept as a JSON array, so a durable run's snapshot carries it across a takeover
      const remembered = state[HISTORY_IDS_KEY] as readonly string[] | undefined;
      if (remembered === undefined) state[HISTORY_IDS_KEY] = [...all];
      const history = remembered === undefined ? all : new Set(remembered);
      for (const id of all) if (!history.has(id)) preserved.add(id);
    }
    return preserved;
  }
}

/** The tool call ids of the assistant and tool messages from index `from` on. */
function toolCallIds(prompt: LanguageModelV4Prompt, from: number): Set<string> {
  const ids = new Set<string>();
  for (const message of prompt.slice(from)) {
    if (message.role !== 'assistant' && message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-call' || part.type === 'tool-result') ids.add(part.toolCallId);
  }
  return ids;
}

/** `"<tool> result:\n<text>"` for each removed result whose output can be read as text. */
function replacementTexts(prompt: LanguageModelV4Prompt, excluded: ReadonlySet<string>): Map<string, string> {
  const texts = new Map<string, string>();
  for (const message of prompt) {
    if (message.role !== 'assistant' && message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result' || !excluded.has(part.toolCallId)) continue;
      const text = outputText(part.output);
      if (text !== undefined && text !== '') texts.set(part.toolCallId, `${part.toolName} result:\n${text}`);
    }
  }
  return texts;
}

/** Deeper than this, an output is not read as text (a history's tool output can nest without end). */
const MAX_OUTPUT_DEPTH = 64;

/** A tool result's model output as text (`text`/`json`/`content` outputs, errors, denials). */
function outputText(output: unknown, depth = 0): string | undefined {
  if (typeof output === 'string') return output;
  if (typeof output === 'number' || typeof output === 'boolean') return String(output);
  if (depth >= MAX_OUTPUT_DEPTH) return undefined;
  if (Array.isArray(output)) return output.map((item) => outputText(item, depth + 1)).filter((text) => text !== undefined && text !== '').join('\n');
  if (typeof output !== 'object' || output === null) return undefined;
  const record = output as { type?: unknown; value?: unknown; text?: unknown; reason?: unknown };
  if (typeof record.text === 'string') return record.text;
  if (record.type === 'execution-denied') return typeof record.reason === 'string' ? `denied: ${record.reason}` : 'denied';
  if (!('value' in record)) return safeJson(output);
  if (typeof record.value === 'string') return record.value;
  // the JSON of a value that reads as no text, once, at the top (not at every level of a deep chain)
  return outputText(record.value, depth + 1) ?? (depth === 0 ? safeJson(record.value) : undefined);
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    // a cycle, a BigInt, or nesting deeper than the stack: no text
    return undefined;
  }
}
