/** A journaled run for the durable UI-stream tests: two steps, a tool call, a rejected attempt, a takeover marker. */
import type { ChunkType } from '../../src/contract/chunk-types.js';

const runId = 'run-1';
const chunk = (type: string, payload: unknown): ChunkType => ({ type, runId, from: 'AGENT', payload }) as ChunkType;
const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
const stepFinish = (stepNumber: number, reason: string, extra: Record<string, unknown> = {}) =>
  chunk('step-finish', { stepNumber, stepResult: { reason, isContinued: reason !== 'stop', ...extra }, output: { text: '', toolCalls: [], usage } });

/** A run: step 0 with reasoning, text and a tool; step 1 rejected once (tripwire), taken over once, then accepted. */
export const runChunks: ChunkType[] = [
  chunk('start', { messageId: 'msg-1' }),
  chunk('step-start', { stepNumber: 0 }),
  chunk('reasoning-start', { id: 'r1' }),
  chunk('reasoning-delta', { id: 'r1', text: 'thinking' }),
  chunk('reasoning-end', { id: 'r1' }),
  chunk('text-start', { id: 't1' }),
  chunk('text-delta', { id: 't1', text: 'Let me ' }),
  chunk('text-delta', { id: 't1', text: 'check.' }),
  chunk('text-end', { id: 't1' }),
  chunk('tool-call', { toolCallId: 'c1', toolName: 'lookup', args: { order: 123 } }),
  chunk('tool-result', { toolCallId: 'c1', toolName: 'lookup', result: { status: 'shipped' } }),
  stepFinish(0, 'tool-calls'),
  chunk('step-start', { stepNumber: 1 }),
  chunk('text-delta', { id: 't2', text: 'Nope' }),
  stepFinish(1, 'retry', { tripwire: { reason: 'Be nice.', processorId: 'tone' } }),
  chunk('step-start', { stepNumber: 1 }),
  chunk('text-delta', { id: 't3', text: 'Half an ans' }),
  chunk('text-end', { id: 't3' }),
  stepFinish(1, 'retry', { takeover: { epoch: 2 } }),
  chunk('step-start', { stepNumber: 1 }),
  { type: 'data-progress', data: { done: 1 }, id: 'p1' },
  chunk('text-start', { id: 't4' }),
  chunk('text-delta', { id: 't4', text: 'It shipped' }),
  chunk('text-delta', { id: 't4', text: ' today.' }),
  chunk('text-end', { id: 't4' }),
  stepFinish(1, 'stop'),
  chunk('finish', { stepResult: { reason: 'stop' }, output: { usage, text: 'It shipped today.' } }),
];

