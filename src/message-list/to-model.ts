import type { AssistantContent, FilePart, ModelMessage, ProviderMetadata, ToolResultPart, UserContent } from 'ai';
import type { FilePart as StoredFilePart, MastraDBMessage, ToolInvocationPart } from './types.js';
import { getMessageText } from './get-message-text.js';
import { reasoningText } from './internal/part-builders.js';
import { toModelFileData } from './internal/file-data.js';
import { outputFromInvocation } from './internal/tool-output.js';

type AssistantPart = Exclude<AssistantContent, string>[number];
type UserPart = Exclude<UserContent, string>[number];

/**
 * Converts stored messages to AI SDK `ModelMessage`s, ready for a model call.
 *
 * An assistant message is split into model steps: a `step-start` part, or content following a
 * tool call, starts a new assistant message, and each step's tool results follow it in a `tool`
 * message (provider-executed results stay in the assistant message). Partial calls
 * (`partial-call`) are dropped, as are empty text parts, sources, `step-start` and `data-*`
 * parts (they have no model form). Message-level `content.providerMetadata` becomes
 * `providerOptions`. Messages left without content are skipped.
 *
 * @example
 * ```ts
 * import { toModelMessages } from 'rxagent/message-list';
 * const modelMessages = toModelMessages(messageList.get.all.db());
 * ```
 */
export function toModelMessages(messages: ReadonlyArray<MastraDBMessage>): ModelMessage[] {
  const output: ModelMessage[] = [];
  for (const message of messages) appendModelMessages(output, message, toModelFilePart);
  return output;
}

/** Builds the converted form of a stored file part (the model's `FilePart`, or a caller's own form). */
export type FilePartBuilder = (part: StoredFilePart) => FilePart;

/**
 * Appends the model messages of one stored message to `output`, file parts built by `filePart`
 * (`toPrompt` passes a builder of provider prompt file parts: it converts the list in one pass,
 * every other part having the same shape in both forms).
 */
export function appendModelMessages(output: ModelMessage[], message: MastraDBMessage, filePart: FilePartBuilder): void {
  const providerOptions = message.content.providerMetadata;
  const messageOptions = providerOptions ? { providerOptions } : {};
  switch (message.role) {
    case 'system': {
      const text = getMessageText(message);
      if (text !== '') output.push({ role: 'system', content: text, ...messageOptions });
      return;
    }
    case 'user': {
      // made with its first part, as an assistant step's (bench/README.md, house rules)
      let content: UserPart[] | undefined;
      for (const part of message.content.parts) {
        const converted = part.type === 'text' && part.text !== '' ? withOptions<UserPart>({ type: 'text', text: part.text }, part.providerMetadata) : part.type === 'file' ? filePart(part) : undefined;
        if (converted === undefined) continue;
        if (content === undefined) content = [converted];
        else content.push(converted);
      }
      if (content === undefined && message.content.content) content = [{ type: 'text', text: message.content.content }];
      if (content !== undefined) output.push({ role: 'user', content, ...messageOptions });
      return;
    }
    case 'assistant':
      appendAssistantSteps(output, message, messageOptions, filePart);
      return;
    case 'tool': {
      const results: ToolResultPart[] = [];
      for (const part of message.content.parts) {
        if (part.type === 'tool-invocation' && hasOutcome(part)) results.push(toToolResult(part));
      }
      if (results.length > 0) output.push({ role: 'tool', content: results, ...messageOptions });
      return;
    }
  }
}

function appendAssistantSteps(
  output: ModelMessage[],
  message: MastraDBMessage,
  messageOptions: { providerOptions?: ProviderMetadata },
  filePart: FilePartBuilder,
): void {
  // the step being built (a plain object, not closures: no function made per message)
  const step: AssistantStep = { content: undefined, results: undefined, hasCalls: false };
  for (const part of message.content.parts) {
    switch (part.type) {
      case 'step-start':
        flushStep(output, step, messageOptions);
        break;
      case 'text':
        if (part.text === '') break;
        if (step.hasCalls) flushStep(output, step, messageOptions);
        addContent(step, withOptions({ type: 'text', text: part.text }, part.providerMetadata));
        break;
      case 'reasoning':
        if (step.hasCalls) flushStep(output, step, messageOptions);
        addContent(step, withOptions({ type: 'reasoning', text: reasoningText(part) }, part.providerMetadata));
        break;
      case 'file':
        if (step.hasCalls) flushStep(output, step, messageOptions);
        addContent(step, filePart(part));
        break;
      case 'tool-invocation': {
        const { toolInvocation } = part;
        if (toolInvocation.state === 'partial-call') break;
        step.hasCalls = true;
        addContent(
          step,
          withOptions(
            // two literals, not a spread of `{}`: no throwaway object per call
            part.providerExecuted !== undefined
              ? {
                  type: 'tool-call',
                  toolCallId: toolInvocation.toolCallId,
                  toolName: toolInvocation.toolName,
                  input: toolInvocation.args ?? {},
                  providerExecuted: part.providerExecuted,
                }
              : { type: 'tool-call', toolCallId: toolInvocation.toolCallId, toolName: toolInvocation.toolName, input: toolInvocation.args ?? {} },
            part.providerMetadata,
          ),
        );
        if (hasOutcome(part)) {
          if (part.providerExecuted) addContent(step, toToolResult(part));
          else if (step.results === undefined) step.results = [toToolResult(part)];
          else step.results.push(toToolResult(part));
        }
        break;
      }
      default:
        // sources and data-* parts have no model form
        break;
    }
  }
  if (message.content.parts.length === 0 && message.content.content) addContent(step, { type: 'text', text: message.content.content });
  flushStep(output, step, messageOptions);
}

/**
 * An assistant step being converted: its content, its client tool results (each array made with its
 * first part: bench/README.md, house rules), whether it has calls.
 */
interface AssistantStep {
  content: AssistantPart[] | undefined;
  results: ToolResultPart[] | undefined;
  hasCalls: boolean;
}

function addContent(step: AssistantStep, part: AssistantPart): void {
  if (step.content === undefined) step.content = [part];
  else step.content.push(part);
}

/** Appends the step's assistant message and its `tool` message (each when not empty), then starts the next step. */
function flushStep(output: ModelMessage[], step: AssistantStep, messageOptions: { providerOptions?: ProviderMetadata }): void {
  if (step.content !== undefined) {
    output.push({ role: 'assistant', content: step.content, ...messageOptions });
    step.content = undefined;
  }
  if (step.results !== undefined) {
    output.push({ role: 'tool', content: step.results });
    step.results = undefined;
  }
  step.hasCalls = false;
}

function hasOutcome(part: ToolInvocationPart): boolean {
  return part.toolInvocation.state === 'result' || part.toolInvocation.state === 'output-error';
}

function toToolResult(part: ToolInvocationPart): ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: part.toolInvocation.toolCallId,
    toolName: part.toolInvocation.toolName,
    output: outputFromInvocation(part.toolInvocation),
  };
}

/** A stored file part as the model's `FilePart` (file data as `toModelFileData` gives it). */
export function toModelFilePart(part: StoredFilePart): FilePart {
  const data = toModelFileData(part);
  return withOptions(
    {
      type: 'file',
      data: data.type === 'data' ? data.data : data.type === 'url' ? data.url : { type: 'reference', reference: data.reference },
      mediaType: part.mimeType,
      ...(part.filename !== undefined ? { filename: part.filename } : {}),
    },
    part.providerMetadata,
  );
}

function withOptions<T extends object>(part: T, providerMetadata: ProviderMetadata | undefined): T & { providerOptions?: ProviderMetadata } {
  return providerMetadata ? { ...part, providerOptions: providerMetadata } : part;
}
