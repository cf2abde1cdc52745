/**
 * Runs one agent scenario — a secret placed in one output channel, split in a given way — through
 * every consumer of a run and collects what each one saw: `stream$()`, `stream()`'s
 * `textStream` and `text`, `generate()`, the UI message stream, memory, and what later model
 * calls were sent.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { toUIMessageStream } from '../../../src/ai-sdk/to-ui-message-stream.js';
import { Agent } from '../../../src/loop/agent.js';
import { Memory } from '../../../src/memory/memory.js';
import type { Processor } from '../../../src/contract/processor-types.js';
import { normalizeForMatching } from '../../../src/processors/internal/normalized-text.js';
import { InMemoryStorage } from '../../../src/storage/in-memory-storage.js';
import { mockModel, type MockModel } from '../../../src/testing/mock-model.js';
import { finishPart, reasoningParts, textParts, toolCallParts } from '../../../src/testing/model-parts.js';

/**
 * Where the secret appears in the run. The `-key` channels carry it as an object key (tool input,
 * tool result, data chunk); `tool-result-deep` as a value 200 levels deep in the tool result.
 */
export type LeakChannel =
  | 'text'
  | 'reasoning'
  | 'tool-input'
  | 'tool-input-key'
  | 'tool-result'
  | 'tool-result-key'
  | 'tool-result-deep'
  | 'tool-error'
  | 'data'
  | 'data-key';

export const LEAK_CHANNELS: readonly LeakChannel[] = [
  'text',
  'reasoning',
  'tool-input',
  'tool-input-key',
  'tool-result',
  'tool-result-key',
  'tool-result-deep',
  'tool-error',
  'data',
  'data-key',
];

/** `leaf` wrapped in `depth` levels of alternating objects and arrays. */
export function deeplyNested(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? { level: value } : [value];
  return value;
}

export interface LeakScenario {
  channel: LeakChannel;
  secret: string;
  /** Characters per streamed delta (text, reasoning, tool input). */
  chunkSize: number;
}

function modelFor(scenario: LeakScenario): MockModel {
  const { channel, secret, chunkSize } = scenario;
  return mockModel({
    parts: ({ callIndex }): LanguageModelV4StreamPart[] => {
      if (channel === 'text') return [...textParts(`Here it is: ${secret} and done.`, { chunkSize }), finishPart()];
      if (channel === 'reasoning') return [...reasoningParts(`I recall ${secret} here.`, { chunkSize }), ...textParts('Done.'), finishPart()];
      if (callIndex > 0) return [...textParts('Done.'), finishPart()];
      const input =
        channel === 'tool-input' ? { query: `find ${secret} now` }
        : channel === 'tool-input-key' ? { query: 'x', [secret]: 'extra' }
        : { query: 'x' };
      return [...toolCallParts('lookup', input, { chunkSize }), finishPart('tool-calls')];
    },
  });
}

function agentFor(scenario: LeakScenario, guards: () => Processor[], model: MockModel, memory?: Memory): Agent {
  const { channel, secret } = scenario;
  const guardList = guards();
  return new Agent({
    id: 'leak',
    instructions: 'Answer.',
    model,
    ...(memory === undefined ? {} : { memory }),
    tools: {
      lookup: {
        description: 'Looks something up.',
        inputSchema: z.object({ query: z.string() }),
        execute: async (_input: { query: string }, options: { writer?: { custom(chunk: { type: `data-${string}`; data: unknown }): unknown } }) => {
          if (channel === 'tool-error') throw new Error(`lookup failed for ${secret}`);
          if (channel === 'data') options.writer?.custom({ type: 'data-note', data: { note: `saw ${secret}` } });
          if (channel === 'data-key') options.writer?.custom({ type: 'data-note', data: { [secret]: { seen: true } } });
          if (channel === 'tool-result-key') return { [secret]: { note: 'found' } };
          if (channel === 'tool-result-deep') return deeplyNested(200, { note: `found ${secret}` });
          return channel === 'tool-result' ? { note: `found ${secret}` } : { note: 'ok' };
        },
      },
    },
    inputProcessors: guardList,
    outputProcessors: guardList,
  });
}

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const items: T[] = [];
  const reader = stream.getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) items.push(next.value);
  } catch {
    // a tripwired run errors `textStream` (README, "Behaviour worth knowing"): what was read before counts
  }
  return items;
}

/** Streamed deltas joined per channel, plus every other chunk as JSON: a split secret shows up whole. */
export function flattenChunks(chunks: readonly unknown[]): string {
  const joined = new Map<string, string>();
  const rest: string[] = [];
  for (const item of chunks) {
    const chunk = item as { type: string; payload?: Record<string, unknown>; delta?: unknown; id?: unknown; inputTextDelta?: unknown; toolCallId?: unknown };
    const payload = chunk.payload;
    const deltaText =
      typeof payload?.text === 'string' && chunk.type.endsWith('-delta') ? payload.text
      : typeof payload?.argsTextDelta === 'string' ? payload.argsTextDelta
      : typeof chunk.delta === 'string' ? chunk.delta
      : typeof chunk.inputTextDelta === 'string' ? chunk.inputTextDelta
      : undefined;
    if (deltaText !== undefined) {
      const key = `${chunk.type}:${String(payload?.id ?? payload?.toolCallId ?? chunk.id ?? chunk.toolCallId ?? '')}`;
      joined.set(key, (joined.get(key) ?? '') + deltaText);
    } else rest.push(JSON.stringify(item, (_key, value: unknown) => (value instanceof Error ? { name: value.name, message: value.message } : value)));
  }
  return [...joined.values(), ...rest].join('\n');
}

/** What each consumer saw, as one string per consumer. */
export interface LeakObservation {
  consumer: string;
  seen: string;
}

/** Runs the scenario through every consumer. */
export async function observeRun(scenario: LeakScenario, guards: () => Processor[]): Promise<LeakObservation[]> {
  const observations: LeakObservation[] = [];
  const storage = new InMemoryStorage();
  const memoryOption = (thread: string) => ({ memory: { thread, resource: 'user-1' } });

  const model$ = modelFor(scenario);
  const chunks = await lastValueFrom(agentFor(scenario, guards, model$, new Memory({ storage })).stream$('Go', memoryOption('t-stream$')).pipe(toArray()));
  observations.push({ consumer: 'stream$()', seen: flattenChunks(chunks) });
  observations.push({ consumer: 'model prompts (stream$)', seen: JSON.stringify(model$.calls.slice(1).map((call) => call.prompt)) });

  const output = await agentFor(scenario, guards, modelFor(scenario)).stream('Go');
  const [textPieces, text] = await Promise.all([readAll(output.textStream), output.text]);
  observations.push({ consumer: 'stream().textStream', seen: textPieces.join('') });
  observations.push({ consumer: 'stream().text', seen: text });

  const generated = await agentFor(scenario, guards, modelFor(scenario), new Memory({ storage })).generate('Go', memoryOption('t-generate'));
  observations.push({
    consumer: 'generate()',
    seen: JSON.stringify(generated, (_key, value: unknown) => (value instanceof Error ? { name: value.name, message: value.message } : value)),
  });

  const ui = await readAll(toUIMessageStream(agentFor(scenario, guards, modelFor(scenario)).stream$('Go')));
  observations.push({ consumer: 'toUIMessageStream', seen: flattenChunks(ui) });

  for (const thread of ['t-stream$', 't-generate']) {
    observations.push({ consumer: `memory ${thread}`, seen: JSON.stringify(await storage.getMessages({ threadId: thread })) });
  }
  return observations;
}

/** The consumers that saw the secret (compared on the normalised view, so obfuscations count). */
export function leaks(observations: readonly LeakObservation[], secret: string): string[] {
  const needle = normalizeForMatching(secret).text;
  // `seen` holds JSON (chunks, tool input): compared as a reader decodes it
  const jsonNeedle = JSON.stringify(needle).slice(1, -1);
  return observations
    .filter(({ seen }) => {
      const view = normalizeForMatching(seen, { json: true }).text;
      return view.includes(needle) || view.includes(jsonNeedle);
    })
    .map(({ consumer }) => consumer);
}
