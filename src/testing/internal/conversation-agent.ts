/**
 * The agent a conformance run drives: a model scripted by a conversation (its answer a function of
 * the prompt, so a retried attempt, a restored run and a new owner get the same answer as the live
 * run), the conversation's tools, memory on a store of the run's own, deterministic ids and clock.
 */
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { JsonValue, Processor } from '../../contract/index.js';
import type { Conversation as ScriptedConversation } from '../conformance-types.js';
import { Agent } from '../../loop/index.js';
import { InMemoryStorage, Memory } from '../../memory/index.js';
import { mockModel, type MockModel } from '../mock-model.js';
import { finishPart, textParts, toolCallParts } from '../model-parts.js';

/** The agent id of every conformance run. */
export const CONFORMANCE_AGENT_ID = 'rxagent-conformance';
/** The run id, thread and resource of every conformance run (one run per store and journal). */
export const CONFORMANCE_CALL = { runId: 'conformance-run', memory: { thread: 'conformance-thread', resource: 'conformance-user' } } as const;

/** The tool call id of call `index` of step `step` (from the script, never from a counter). */
const callIdOf = (step: number, index: number): string => `call-${step}-${index}`;

/**
 * The model of a conversation: step `n` answers once `n` tool messages are in the prompt (the
 * last step answers beyond). Text ids and tool call ids come from the step.
 */
export function conversationModel(conversation: ScriptedConversation): MockModel {
  return mockModel({
    modelId: 'conformance-script',
    parts: ({ options }) => {
      const toolMessages = options.prompt.filter((message) => message.role === 'tool').length;
      const stepIndex = Math.min(toolMessages, conversation.steps.length - 1);
      const step = conversation.steps[stepIndex]!;
      const parts: LanguageModelV4StreamPart[] = [];
      if (step.text !== undefined) parts.push(...textParts(step.text, { id: `text-${stepIndex}`, chunkSize: 8 }));
      (step.toolCalls ?? []).forEach((call, index) => parts.push(...toolCallParts(call.toolName, call.args, { toolCallId: callIdOf(stepIndex, index) })));
      parts.push(finishPart((step.toolCalls?.length ?? 0) > 0 ? 'tool-calls' : 'stop'));
      return parts;
    },
  });
}

/** The conversation's tools: each answers the scripted result of its call (default `{ ok: true }`). */
export function conversationTools(conversation: ScriptedConversation): Record<string, { description: string; inputSchema: object; idempotent: boolean; execute: (args: unknown, options: { toolCallId: string }) => JsonValue }> {
  const results = new Map<string, JsonValue>();
  const names = new Set<string>();
  conversation.steps.forEach((step, stepIndex) =>
    (step.toolCalls ?? []).forEach((call, index) => {
      names.add(call.toolName);
      results.set(callIdOf(stepIndex, index), call.result ?? { ok: true });
    }),
  );
  return Object.fromEntries(
    [...names].map((name) => [
      name,
      {
        description: `The conformance conversation's tool "${name}".`,
        inputSchema: { type: 'object', additionalProperties: true },
        idempotent: true,
        execute: (_args: unknown, { toolCallId }: { toolCallId: string }) => results.get(toolCallId) ?? { ok: true },
      },
    ]),
  );
}

/** Deterministic ids and clock: a counter that can start anywhere (a restored run goes on from the snapshot's). */
export class IdSequence {
  constructor(public next = 0) {}
  readonly generateId = (): string => `id-${this.next++}`;
  readonly now = (): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, this.next));
}

/** Where the processor under test goes in the agent's lists. */
export interface ProcessorLists {
  readonly input: boolean;
  readonly output: boolean;
  readonly error: boolean;
}

/** What one conformance agent is made of. */
export interface ConversationAgentOptions {
  readonly conversation: ScriptedConversation;
  readonly processor: Processor;
  readonly lists: ProcessorLists;
  readonly model: MockModel;
  readonly storage: InMemoryStorage;
  readonly ids: IdSequence;
  readonly maxProcessorRetries: number;
  /** Output processors after the one under test (the retried mode's rejecter). */
  readonly outputTail?: readonly Processor[];
}

/** The agent of one conformance run. */
export function conversationAgent(options: ConversationAgentOptions): Agent {
  const { conversation, processor, lists, model, storage, ids, maxProcessorRetries, outputTail = [] } = options;
  return new Agent({
    id: CONFORMANCE_AGENT_ID,
    instructions: 'You are the scripted assistant of a processor conformance check.',
    model,
    tools: conversationTools(conversation),
    memory: new Memory({ storage }),
    inputProcessors: lists.input ? [processor] : [],
    outputProcessors: [...(lists.output ? [processor] : []), ...outputTail],
    errorProcessors: lists.error ? [processor] : [],
    maxProcessorRetries,
    // a rejected attempt is a step of its own: room for every step to be retried, and then some
    maxSteps: conversation.steps.length * 2 + maxProcessorRetries + 2,
    generateId: ids.generateId,
    now: ids.now,
  });
}
