/**
 * The model of a scripted conversation: its answer a function of the prompt (step `n` once `n`
 * tool messages are in it), so a retried attempt, a restored run and a new owner get the answers
 * the live run got. `failOnce`: the first call of each step fails mid-stream.
 */
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { Conversation as ScriptedConversation } from '../conformance-types.js';
import { mockModel, type MockModel } from '../mock-model.js';
import { finishPart, textParts, toolCallParts } from '../model-parts.js';

/** The tool call id of call `index` of step `step` (from the script, never from a counter). */
export const callIdOf = (step: number, index: number): string => `call-${step}-${index}`;

/**
 * The model of a conversation: step `n` answers once `n` tool messages are in the prompt (the
 * last step answers beyond). Text ids and tool call ids come from the step.
 */
export function conversationModel(conversation: ScriptedConversation, behaviour: { failOnce?: boolean } = {}): MockModel {
  const failed = new Set<number>();
  return mockModel({
    modelId: 'conformance-script',
    parts: ({ options }) => {
      const toolMessages = options.prompt.filter((message) => message.role === 'tool').length;
      const stepIndex = Math.min(toolMessages, conversation.steps.length - 1);
      const step = conversation.steps[stepIndex]!;
      const parts: LanguageModelV4StreamPart[] = [];
      if (step.text !== undefined) parts.push(...textParts(step.text, { id: `text-${stepIndex}`, chunkSize: 8 }));
      (step.toolCalls ?? []).forEach((call, index) => parts.push(...toolCallParts(call.toolName, call.args, { toolCallId: callIdOf(stepIndex, index) })));
      if (behaviour.failOnce === true && !failed.has(stepIndex)) {
        // the first call of each step fails half way through its stream, as a provider's stream can
        failed.add(stepIndex);
        return [...parts.slice(0, Math.ceil(parts.length / 2)), { type: 'error', error: new Error(`conformance: the provider failed mid-stream (step ${stepIndex}, once)`) }];
      }
      parts.push(finishPart((step.toolCalls?.length ?? 0) > 0 ? 'tool-calls' : 'stop'));
      return parts;
    },
  });
}

