import type { LanguageModelV4Message, LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { ProcessLLMRequestArgs, ProcessLLMRequestResult, Processor } from '../processor/processor-types.js';

/**
 * Options of {@link ToolCallFilter}.
 *
 * @example
 * ```ts
 * const options: ToolCallFilterOptions = { exclude: ['search'], preserveCurrentTurn: false };
 * ```
 */
export interface ToolCallFilterOptions {
  /** Tool names whose calls and results are removed. Default: every tool. */
  exclude?: string[];
  /**
   * Keep the calls and results that follow the last user message (the turn in progress), so a
   * running tool loop still sees what it just did. Default `true`; `false` filters them too.
   */
  preserveCurrentTurn?: boolean;
}

type AssistantContent = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'];
type ToolContent = Extract<LanguageModelV4Message, { role: 'tool' }>['content'];

/**
 * Removes tool calls and tool results from the prompt sent to the model — all of them, or those of
 * the tools in `exclude` — to save context on long conversations. No model call.
 *
 * It only implements `processLLMRequest`, so it rewrites the outgoing prompt of each call and
 * nothing else: the stored history, the `MessageList` and the UI keep every tool invocation.
 * Messages left empty are removed from the prompt; the turn in progress is kept by default.
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
  readonly id = 'tool-call-filter';
  readonly name = 'Tool Call Filter';
  readonly description = 'Removes tool calls and results from the prompt of each model call.';
  private readonly exclude: ReadonlySet<string> | undefined;
  private readonly preserveCurrentTurn: boolean;

  constructor(options: ToolCallFilterOptions = {}) {
    this.exclude = options.exclude === undefined ? undefined : new Set(options.exclude);
    this.preserveCurrentTurn = options.preserveCurrentTurn ?? true;
  }

  processLLMRequest({ prompt }: ProcessLLMRequestArgs): ProcessLLMRequestResult {
    const filtered = this.filterPrompt(prompt);
    return filtered === prompt ? undefined : { prompt: filtered };
  }

  /** The prompt without the excluded tool calls/results (the same array when nothing changed). */
  filterPrompt(prompt: LanguageModelV4Prompt): LanguageModelV4Prompt {
    let lastUser = -1;
    if (this.preserveCurrentTurn) prompt.forEach((message, index) => (message.role === 'user' ? (lastUser = index) : undefined));
    const filterUpTo = this.preserveCurrentTurn ? lastUser : prompt.length;
    let changed = false;
    const result: LanguageModelV4Prompt = [];
    prompt.forEach((message, index) => {
      if (index >= filterUpTo || (message.role !== 'assistant' && message.role !== 'tool')) {
        result.push(message);
        return;
      }
      const filtered = this.filterMessage(message);
      if (filtered !== message) changed = true;
      if (filtered !== undefined) result.push(filtered);
    });
    return changed ? result : prompt;
  }

  private excluded(toolName: string): boolean {
    return this.exclude === undefined || this.exclude.has(toolName);
  }

  private filterMessage(message: LanguageModelV4Message): LanguageModelV4Message | undefined {
    if (message.role === 'assistant') {
      const content: AssistantContent = message.content.filter(
        (part) => !((part.type === 'tool-call' || part.type === 'tool-result') && this.excluded(part.toolName)),
      );
      if (content.length === message.content.length) return message;
      return content.length === 0 ? undefined : { ...message, content };
    }
    if (message.role === 'tool') {
      const content: ToolContent = message.content.filter((part) =>
        part.type === 'tool-result' ? !this.excluded(part.toolName) : this.exclude !== undefined,
      );
      if (content.length === message.content.length) return message;
      return content.length === 0 ? undefined : { ...message, content };
    }
    return message;
  }
}
