/** Running the reference's processors inside an rxagent Agent: judge models, runs, what the user sees. */
import { lastValueFrom, toArray } from 'rxjs';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { Agent } from '../../../src/loop/agent.js';
import type { AgentCallOptions, AgentInput } from '../../../src/loop/agent-types.js';
import type { ChunkType, TripwirePayload } from '../../../src/contract/chunk-types.js';
import { mockModel, type MockModel } from '../../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../../src/testing/model-parts.js';

/** The text of the last user message of a prompt (what a judge is asked about). */
export function lastUserText(prompt: LanguageModelV4Prompt): string {
  const user = prompt.filter((message) => message.role === 'user').at(-1);
  if (user === undefined) return '';
  return user.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** Every text a model call was sent (system, user, assistant and tool text), one string per message. */
export function promptTexts(prompt: LanguageModelV4Prompt): string[] {
  return prompt.map((message) => {
    if (message.role === 'system') return message.content;
    return message.content
      .map((part) => {
        if (part.type === 'text' || part.type === 'reasoning') return part.text;
        if (part.type === 'tool-call') return `[tool-call ${part.toolName}]`;
        if (part.type === 'tool-result') return `[tool-result ${part.toolName}]`;
        return `[${part.type}]`;
      })
      .join('');
  });
}

/**
 * A judge model for the reference's model-backed processors: it answers every call with the JSON
 * object `answer` returns for the content it was asked about (the last user message of its prompt).
 */
export function judgeModel(answer: (asked: string) => unknown): MockModel {
  return mockModel({
    modelId: 'judge',
    parts: ({ options }) => [...textParts(JSON.stringify(answer(lastUserText(options.prompt)))), finishPart()],
  });
}

/** A judge whose every call fails (the provider throws). */
export function failingJudge(): MockModel {
  return mockModel({ modelId: 'judge', error: new Error('judge unavailable') });
}

/** The agent's own model: streams `text` in pieces of `chunkSize` characters. */
export function answerModel(text: string, chunkSize = 6): MockModel {
  return mockModel({ parts: [...textParts(text, { chunkSize }), finishPart()] });
}

/** What a user of `stream$()` sees. */
export interface Seen {
  chunks: ChunkType[];
  types: string[];
  text: string;
  tripwire: TripwirePayload | undefined;
  error: unknown;
}

/** Runs `agent.stream$(input)` to its end and collects what the user sees. */
export async function see(agent: Agent, input: AgentInput, options?: AgentCallOptions): Promise<Seen> {
  const chunks = await lastValueFrom(agent.stream$(input, options).pipe(toArray()));
  const tripwire = chunks.find((chunk) => chunk.type === 'tripwire');
  const error = chunks.find((chunk) => chunk.type === 'error');
  return {
    chunks,
    types: chunks.map((chunk) => chunk.type),
    text: chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join(''),
    tripwire: tripwire?.type === 'tripwire' ? tripwire.payload : undefined,
    error: error?.type === 'error' ? error.payload.error : undefined,
  };
}
