import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { ChunkType, Processor, ProcessOutputStreamArgs } from '../contract/index.js';
import { textDeltaChunk } from './internal/chunks.js';
import { emitInOrder } from './internal/emit-in-order.js';
import { booleanOption, methodsOption, numberOption, wholeNumberOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';

/**
 * Options of {@link BatchPartsProcessor}.
 *
 * @example
 * ```ts
 * const options: BatchPartsOptions = { batchSize: 10, maxWaitTime: 100, scheduler: testScheduler };
 * ```
 */
export interface BatchPartsOptions {
  /** `text-delta` chunks merged into one. Default 5. */
  batchSize?: number;
  /**
   * Longest time (ms, on `scheduler`) a batch waits for more deltas. Checked when the next chunk
   * arrives: a batch whose first delta is older than this is released then (see the class docs).
   * Default: no time limit.
   */
  maxWaitTime?: number;
  /** Release the batch when a non-text chunk arrives (before it). Default `true`. */
  emitOnNonText?: boolean;
  /** Clock for `maxWaitTime` (`now()` only; no timers). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
}

/** The option names {@link BatchPartsProcessor} knows (the reference's are all among them). */
const BATCH_PARTS_OPTION_KEYS = optionKeys('batch-parts', optionNames<BatchPartsOptions>({ batchSize: true, maxWaitTime: true, emitOnNonText: true, scheduler: true }));

/**
 * The processor's run state, shaped as the reference's: `batch` holds the deltas not released yet
 * (all of one text block), `batchStartedAt` when the first of them arrived (`scheduler.now()`).
 *
 * @example
 * ```ts
 * const state: BatchPartsState = { batch: [] };
 * ```
 */
export interface BatchPartsState {
  /** The text deltas held back so far. */
  batch?: ChunkType[];
  /** When the first held delta arrived (scheduler time). */
  batchStartedAt?: number;
  [key: string]: unknown;
}

/**
 * Merges consecutive `text-delta` chunks of one text block into fewer, larger ones — fewer
 * chunks for clients that pay per message (websockets, SSE to slow devices). No model call.
 *
 * A batch is released as ONE merged `text-delta` (the hook returns it) when it holds `batchSize`
 * deltas; until then the hook holds the deltas (returns `null`). The batch is also released
 * before `text-end`, before a delta of another text block, and (with `emitOnNonText`, the default)
 * before any other chunk, so nothing is lost and the order is kept.
 *
 * `maxWaitTime` uses no timer: a processor can only emit when a chunk reaches it, so the deadline
 * is measured with `scheduler.now()` and enforced when the next chunk arrives — a late delta
 * releases the overdue batch and starts a new one with itself. With a `TestScheduler` this is
 * marble-testable. (A batch can therefore wait longer than `maxWaitTime` when the model pauses.)
 *
 * It sets `processDataParts: true`, so `data-*` chunks (tool progress…) also release the batch
 * instead of overtaking it.
 *
 * With `emitOnNonText: false` a pending batch is not released before non-text chunks other than
 * `text-end`: those chunks pass ahead of it (reasoning, sources, data chunks are independent of
 * the text block). The batch is still released at its `text-end` (and before `finish`, `error`,
 * `abort`, `tripwire` or `step-finish`).
 *
 * Hook: `processOutputStream`.
 *
 * @example
 * ```ts
 * import { BatchPartsProcessor } from 'rxagent/processors';
 * const agent = new Agent({ id: 'a', instructions: '…', model, outputProcessors: [new BatchPartsProcessor({ batchSize: 10, maxWaitTime: 250 })] });
 * ```
 */
export class BatchPartsProcessor implements Processor<'batch-parts'> {
  /** The processor's id. */
  readonly id = 'batch-parts';
  /** A human-readable name. */
  readonly name = 'Batch Parts';
  /** What the processor does. */
  readonly description = 'Merges consecutive text deltas into batches.';
  /** Data chunks must see the batch too, or they would overtake the text held before them. */
  readonly processDataParts = true;
  private readonly batchSize: number;
  private readonly maxWaitTime: number | undefined;
  private readonly emitOnNonText: boolean;
  private readonly scheduler: SchedulerLike;

  constructor(options: BatchPartsOptions = {}) {
    checkOptionKeys(BATCH_PARTS_OPTION_KEYS, options);
    this.batchSize = wholeNumberOption(this.id, 'batchSize', options.batchSize, 5, 1);
    this.maxWaitTime = numberOption(this.id, 'maxWaitTime', options.maxWaitTime, undefined, { least: 0 });
    this.emitOnNonText = booleanOption(this.id, 'emitOnNonText', options.emitOnNonText, true);
    this.scheduler = methodsOption(this.id, 'scheduler', options.scheduler, ['now']) ?? asyncScheduler;
  }

  /** The `processOutputStream` hook (see `Processor.processOutputStream` for when it runs and what it may return). */
  processOutputStream({ part, state }: ProcessOutputStreamArgs): ChunkType | null {
    return emitInOrder(state, this.outputsFor(part, state as BatchPartsState));
  }

  /**
   * Releases what `state` holds as one merged `text-delta` (or `null` when nothing is held) and
   * empties the batch — for streams that end without a closing chunk, as the reference's `flush`.
   *
   * @example
   * ```ts
   * const rest = batcher.flush(state); if (rest) send(rest);
   * ```
   */
  flush(state: BatchPartsState = {}): ChunkType | null {
    const held = state.batch ?? [];
    state.batch = [];
    state.batchStartedAt = undefined;
    return held.length === 0 ? null : this.merged(held);
  }

  private outputsFor(part: ChunkType, state: BatchPartsState): ChunkType[] {
    const held = state.batch ?? [];
    const now = this.scheduler.now();
    const first = held[0];
    if (part.type !== 'text-delta') {
      if (first === undefined || first.type !== 'text-delta') return [part];
      const closesBlock = part.type === 'text-end' && part.payload.id === first.payload.id;
      if (this.emitOnNonText || closesBlock || endsStep(part) || this.overdue(state, now)) {
        return [this.release(state), part];
      }
      return [part];
    }
    const outputs: ChunkType[] = [];
    if (first !== undefined && first.type === 'text-delta' && (first.payload.id !== part.payload.id || this.overdue(state, now))) {
      outputs.push(this.release(state));
    }
    const batch = state.batch ?? [];
    if (batch.length === 0) state.batchStartedAt = now;
    batch.push(part);
    state.batch = batch;
    if (batch.length >= this.batchSize) outputs.push(this.release(state));
    return outputs;
  }

  /** The held deltas as one chunk; the batch is emptied. */
  private release(state: BatchPartsState): ChunkType {
    return this.flush(state) as ChunkType;
  }

  private overdue(state: BatchPartsState, now: number): boolean {
    return this.maxWaitTime !== undefined && state.batchStartedAt !== undefined && now - state.batchStartedAt >= this.maxWaitTime;
  }

  private merged(held: readonly ChunkType[]): ChunkType {
    const first = held[0] as ChunkType;
    if (held.length === 1 || first.type !== 'text-delta') return first;
    let text = '';
    for (const part of held) if (part.type === 'text-delta') text += part.payload.text;
    return textDeltaChunk(first, first.payload.id, text);
  }
}

function endsStep(part: ChunkType): boolean {
  return (
    part.type === 'step-finish' || part.type === 'finish' || part.type === 'error' || part.type === 'abort' || part.type === 'tripwire'
  );
}
