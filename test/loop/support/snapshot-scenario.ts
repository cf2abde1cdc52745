/**
 * Scenarios for the run-snapshot property: a scripted model whose answer is a function of its
 * prompt, random processors with JSON state (counters, rewrites, a retry, signals, request-context
 * writes, `streamParts` reads), memory — everything rebuildable in another process from the
 * scenario alone, so a snapshot restored there goes on exactly as the uninterrupted run.
 */
import fc from 'fast-check';
import { z } from 'zod';
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { AgentConfig } from '../../../src/loop/agent-types.js';
import type { Processor, ProcessorState } from '../../../src/contract/processor-types.js';
import type { InboundMessage } from '../../../src/message-list/types.js';
import { Memory } from '../../../src/memory/memory.js';
import { InMemoryStorage } from '../../../src/storage/in-memory-storage.js';
import { mockModel } from '../../../src/testing/mock-model.js';
import { finishPart } from '../../../src/testing/model-parts.js';

/** What one random processor does. */
export interface ProcessorSpec {
  id: string;
  input: boolean;
  output: boolean;
  rewrite: 'none' | 'upper' | 'drop-second-delta';
  retryOnce: boolean;
  signal: boolean;
  writeContext: boolean;
}

/** One generated run. */
export interface SnapshotScenario {
  toolSteps: number;
  answerWords: number;
  processors: ProcessorSpec[];
  maxProcessorRetries: number;
  memory: boolean;
}

const processorSpec = (index: number): fc.Arbitrary<ProcessorSpec> =>
  fc.record({
    id: fc.constant(`p${index}`),
    input: fc.boolean(),
    output: fc.boolean(),
    rewrite: fc.constantFrom<ProcessorSpec['rewrite']>('none', 'upper', 'drop-second-delta'),
    retryOnce: fc.boolean(),
    signal: fc.boolean(),
    writeContext: fc.boolean(),
  });

/** The scenarios of the property. */
export const snapshotScenario: fc.Arbitrary<SnapshotScenario> = fc.record({
  toolSteps: fc.integer({ min: 0, max: 3 }),
  answerWords: fc.integer({ min: 1, max: 5 }),
  processors: fc.integer({ min: 0, max: 3 }).chain((count) => fc.tuple(...Array.from({ length: count }, (_, index) => processorSpec(index)))),
  maxProcessorRetries: fc.integer({ min: 0, max: 2 }),
  memory: fc.boolean(),
});

/** The model's answer is a function of its prompt: a tool call while fewer than `toolSteps` results are in it, then text. */
function partsFor(scenario: SnapshotScenario, options: LanguageModelV4CallOptions): LanguageModelV4StreamPart[] {
  const results = options.prompt.filter((message) => message.role === 'tool').length;
  const promptSize = JSON.stringify(options.prompt).length;
  if (results < scenario.toolSteps) {
    return [
      { type: 'tool-call', toolCallId: `call-${results}`, toolName: 'echo', input: JSON.stringify({ n: results, size: promptSize % 97 }) },
      finishPart('tool-calls'),
    ];
  }
  const words = Array.from({ length: scenario.answerWords }, (_, index) => ` w${(promptSize + index) % 89}`);
  return [
    { type: 'text-start', id: 't' },
    ...words.map((delta): LanguageModelV4StreamPart => ({ type: 'text-delta', id: 't', delta })),
    { type: 'text-end', id: 't' },
    finishPart('stop'),
  ];
}

/** Where processors report their final state (their `processOutputResult`). */
export type StateSink = (processorId: string, state: ProcessorState) => void;

function counted(state: ProcessorState, key: string): void {
  state[key] = ((state[key] as number | undefined) ?? 0) + 1;
}

function listed(state: ProcessorState, key: string, value: unknown): void {
  state[key] = [...((state[key] as unknown[] | undefined) ?? []), value];
}

/** The processor a spec describes (its state JSON all through). */
function processorOf(spec: ProcessorSpec, sink: StateSink): Processor {
  const processor: Processor = { id: spec.id };
  if (spec.input) {
    processor.processInput = ({ state }) => counted(state, 'inputs');
    processor.processInputStep = ({ state, stepNumber, requestContext }) => {
      listed(state, 'steps', stepNumber);
      if (spec.writeContext) requestContext.set(`${spec.id}-step`, stepNumber);
    };
    processor.processLLMRequest = ({ state, prompt }) => listed(state, 'prompts', prompt.length);
  }
  if (spec.output) {
    processor.processOutputStream = ({ part, state, streamParts }) => {
      counted(state, `seen-${part.type}`);
      if (part.type === 'step-finish') listed(state, 'partsAtStepFinish', streamParts.length);
      if (part.type !== 'text-delta') return part;
      counted(state, 'deltas');
      if (spec.rewrite === 'drop-second-delta' && state['deltas'] === 2) return null;
      if (spec.rewrite === 'upper') return { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } };
      return part;
    };
    processor.processOutputStep = ({ state, text, stepNumber, abort, sendSignal, toolCalls }) => {
      listed(state, 'stepTexts', text.length);
      if (spec.signal && toolCalls.length > 0) void sendSignal({ type: 'notification', contents: `after step ${stepNumber}` });
      if (spec.retryOnce && state['retried'] !== true && toolCalls.length === 0) {
        state['retried'] = true;
        abort(`${spec.id} asks for another answer`, { retry: true });
      }
    };
    processor.processToolResult = ({ state, toolCallId }) => listed(state, 'results', toolCallId);
    processor.processOutputResult = ({ state }) => {
      sink(spec.id, state);
    };
  }
  return processor;
}

/** The run's input: a message with its own id and date (so setting the run up takes no generated id). */
export const scenarioInput: InboundMessage[] = [
  { id: 'user-1', role: 'user', createdAt: new Date('2026-01-01T00:00:00.000Z'), content: { format: 2, parts: [{ type: 'text', text: 'Hello there' }] } },
];

/** Deterministic ids and clock: a counter that can start anywhere. */
export class Sequence {
  constructor(public next = 0) {}
  readonly generateId = (): string => `id-${this.next++}`;
  readonly now = (): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, this.next));
}

/** The agent of a scenario, for the uninterrupted run and for the process that restores it. */
export function scenarioAgent(scenario: SnapshotScenario, ids: Sequence, sink: StateSink, storage: InMemoryStorage): AgentConfig {
  const input = scenario.processors.filter((spec) => spec.input).map((spec) => processorOf(spec, sink));
  const output = scenario.processors.filter((spec) => spec.output).map((spec) => processorOf(spec, sink));
  return {
    id: 'snapshot-agent',
    instructions: 'Be brief.',
    model: mockModel({ parts: ({ options }) => partsFor(scenario, options) }),
    tools: {
      echo: { description: 'Echoes its input.', inputSchema: z.object({ n: z.number(), size: z.number() }), execute: (args: { n: number; size: number }) => ({ echoed: args }) },
    },
    inputProcessors: input,
    outputProcessors: output,
    maxProcessorRetries: scenario.maxProcessorRetries,
    maxSteps: 10,
    generateId: ids.generateId,
    now: ids.now,
    ...(scenario.memory ? { memory: new Memory({ storage }) } : {}),
  };
}

/** The call options of a scenario's run. */
export function scenarioOptions(scenario: SnapshotScenario): { runId: string; memory?: { thread: string; resource: string } } {
  return { runId: 'run-1', ...(scenario.memory ? { memory: { thread: 'thread-1', resource: 'user-1' } } : {}) };
}
