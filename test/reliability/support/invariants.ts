/**
 * The stream invariants of DESIGN §3 as checkers over a run's chunks: each returns the list of
 * violations it found (empty = holds), so a failing property prints what broke and where.
 */
import type { ChunkType } from '../../../src/contract/chunk-types.js';
import { TERMINAL_TYPES } from './harness.js';

const describe = (chunks: readonly ChunkType[], index: number): string =>
  `#${index} ${chunks[index]?.type ?? '(none)'} in [${chunks.map((chunk) => chunk.type).join(', ')}]`;

/**
 * Exactly one `start` (first) and exactly one terminal chunk (last), nothing after it. For a run
 * the consumer left early (`complete: false`), the prefix may lack the terminal chunk.
 */
export function checkLifecycle(chunks: readonly ChunkType[], complete: boolean): string[] {
  const problems: string[] = [];
  if (chunks.length === 0) return complete ? ['no chunks at all'] : [];
  if (chunks[0]?.type !== 'start') problems.push(`first chunk is not start: ${describe(chunks, 0)}`);
  chunks.forEach((chunk, index) => {
    if (chunk.type === 'start' && index > 0) problems.push(`second start: ${describe(chunks, index)}`);
    if (TERMINAL_TYPES.has(chunk.type) && index !== chunks.length - 1) problems.push(`chunk after the terminal one: ${describe(chunks, index)}`);
  });
  const terminals = chunks.filter((chunk) => TERMINAL_TYPES.has(chunk.type)).length;
  if (complete && terminals !== 1) problems.push(`${terminals} terminal chunks: ${describe(chunks, chunks.length - 1)}`);
  const runIds = new Set(chunks.filter((chunk) => !chunk.type.startsWith('data-')).map((chunk) => (chunk as { runId: string }).runId));
  if (runIds.size > 1) problems.push(`chunks of several runs: ${[...runIds].join(', ')}`);
  return problems;
}

const IN_STEP = new Set([
  'text-start',
  'text-delta',
  'text-end',
  'reasoning-start',
  'reasoning-delta',
  'reasoning-end',
  'tool-call',
  'tool-call-input-streaming-start',
  'tool-call-delta',
  'tool-call-input-streaming-end',
  'tool-result',
  'tool-error',
  'source',
  'file',
]);

/**
 * `step-start … step-finish` per step attempt (never nested, closed before the terminal chunk);
 * text and reasoning parts bracketed start/delta/end inside a step and closed before its
 * `step-finish`.
 */
export function checkBracketing(chunks: readonly ChunkType[], complete: boolean): string[] {
  const problems: string[] = [];
  let inStep = false;
  const open = { text: new Set<string>(), reasoning: new Set<string>() };
  chunks.forEach((chunk, index) => {
    const where = () => describe(chunks, index);
    if (IN_STEP.has(chunk.type) && !inStep) problems.push(`step content outside a step: ${where()}`);
    switch (chunk.type) {
      case 'step-start':
        if (inStep) problems.push(`nested step-start: ${where()}`);
        inStep = true;
        return;
      case 'step-finish':
        if (!inStep) problems.push(`step-finish without step-start: ${where()}`);
        if (open.text.size > 0 || open.reasoning.size > 0) problems.push(`step-finish with open parts ${[...open.text, ...open.reasoning].join(',')}: ${where()}`);
        inStep = false;
        return;
      case 'text-start':
      case 'reasoning-start': {
        const set = chunk.type === 'text-start' ? open.text : open.reasoning;
        if (set.has(chunk.payload.id)) problems.push(`part opened twice: ${where()}`);
        set.add(chunk.payload.id);
        return;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const set = chunk.type === 'text-delta' ? open.text : open.reasoning;
        if (!set.has(chunk.payload.id)) problems.push(`delta of a part that is not open: ${where()}`);
        return;
      }
      case 'text-end':
      case 'reasoning-end': {
        const set = chunk.type === 'text-end' ? open.text : open.reasoning;
        if (!set.delete(chunk.payload.id)) problems.push(`end of a part that is not open: ${where()}`);
        return;
      }
      default:
        if (TERMINAL_TYPES.has(chunk.type) && (inStep || open.text.size > 0 || open.reasoning.size > 0)) {
          problems.push(`terminal chunk with an open step or part: ${where()}`);
        }
        return;
    }
  });
  if (complete && inStep) problems.push('stream ended inside a step');
  return problems;
}

/** A stream cut into step attempts. */
interface AttemptSlice {
  chunks: ChunkType[];
  finish: ChunkType | undefined;
  /** A later step-start exists (the run went on to another attempt or step). */
  followed: boolean;
}

function attempts(chunks: readonly ChunkType[]): AttemptSlice[] {
  const slices: AttemptSlice[] = [];
  let current: AttemptSlice | undefined;
  for (const chunk of chunks) {
    if (chunk.type === 'step-start') {
      if (current) current.followed = true;
      current = { chunks: [], finish: undefined, followed: false };
      slices.push(current);
      continue;
    }
    if (current === undefined) continue;
    if (chunk.type === 'step-finish') current.finish = chunk;
    else if (current.finish === undefined) current.chunks.push(chunk);
  }
  for (let index = 0; index < slices.length - 1; index++) (slices[index] as AttemptSlice).followed = true;
  return slices;
}

function isRetry(finish: ChunkType | undefined): boolean {
  return finish?.type === 'step-finish' && finish.payload.stepResult.reason === 'retry';
}

/**
 * Every client `tool-call` of an attempt is answered by exactly one `tool-result` or `tool-error`
 * of the same attempt before the next step (an attempt rolled back for a retry, or cut by the
 * run's end, may leave calls unanswered but never answers one twice; an answer an output
 * processor dropped on purpose is not missing); provider-executed calls are
 * answered at most once, by the provider; nothing answers a call that was not made; and no tool
 * the stream did not show a call for ever ran.
 */
export function checkToolAnswers(
  chunks: readonly ChunkType[],
  executedIds: readonly string[],
  complete: boolean,
  droppedAnswers: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  const last = chunks[chunks.length - 1];
  const finished = complete && last?.type === 'finish';
  const slices = attempts(chunks);
  slices.forEach((slice, position) => {
    const calls = new Map<string, boolean>();
    const answers = new Map<string, number>();
    for (const chunk of slice.chunks) {
      if (chunk.type === 'tool-call') calls.set(chunk.payload.toolCallId, chunk.payload.providerExecuted === true);
      if (chunk.type === 'tool-result' || chunk.type === 'tool-error') {
        const id = chunk.payload.toolCallId;
        // (a provider answers the calls it executed even when a processor hid the call itself)
        const byProvider = chunk.type === 'tool-result' && chunk.payload.providerExecuted === true;
        if (!calls.has(id) && !byProvider) problems.push(`attempt ${position}: ${chunk.type} for ${id} without its tool-call`);
        answers.set(id, (answers.get(id) ?? 0) + 1);
      }
    }
    const mustAnswer = (slice.followed && !isRetry(slice.finish)) || (finished && position === slices.length - 1 && !isRetry(slice.finish));
    for (const [id, providerExecuted] of calls) {
      const count = answers.get(id) ?? 0;
      if (count > 1) problems.push(`attempt ${position}: ${id} answered ${count} times`);
      // (an answer a processor dropped on purpose is its decision, not a missing one)
      if (!providerExecuted && mustAnswer && count !== 1 && !(count === 0 && droppedAnswers.has(id))) {
        problems.push(`attempt ${position}: client call ${id} not answered before the next step`);
      }
    }
  });
  const shown = new Set(chunks.filter((chunk) => chunk.type === 'tool-call').map((chunk) => (chunk as { payload: { toolCallId: string } }).payload.toolCallId));
  for (const id of executedIds) if (!shown.has(id)) problems.push(`tool call ${id} ran although no tool-call chunk for it was emitted`);
  return problems;
}

/** The text a stream reports: text-deltas of the attempts not rejected for a retry. */
export function streamText(chunks: readonly ChunkType[]): string {
  let text = '';
  for (const slice of attempts(chunks)) {
    if (isRetry(slice.finish) || slice.finish === undefined) continue;
    for (const chunk of slice.chunks) if (chunk.type === 'text-delta') text += chunk.payload.text;
  }
  return text;
}
