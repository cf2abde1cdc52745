import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { ChunkType } from '../processor/chunk-types.js';
import type { ProcessOutputStreamArgs, Processor, ProcessorState } from '../processor/processor-types.js';
import { textDeltaChunk } from './internal/chunks.js';
import { emitInOrder } from './internal/emit-in-order.js';

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

interface Batch {
  id: string;
  text: string;
  count: number;
  startedAt: number;
  template: ChunkType;
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
  readonly id = 'batch-parts';
  readonly name = 'Batch Parts';
  readonly description = 'Merges consecutive text deltas into batches.';
  /** Data chunks must see the batch too, or they would overtake the text held before them. */
  readonly processDataParts = true;
  private readonly batchSize: number;
  private readonly maxWaitTime: number | undefined;
  private readonly emitOnNonText: boolean;
  private readonly scheduler: SchedulerLike;

  constructor(options: BatchPartsOptions = {}) {
    this.batchSize = Math.max(1, Math.floor(options.batchSize ?? 5));
    this.maxWaitTime = options.maxWaitTime;
    this.emitOnNonText = options.emitOnNonText ?? true;
    this.scheduler = options.scheduler ?? asyncScheduler;
  }

  processOutputStream({ part, state }: ProcessOutputStreamArgs): ChunkType | null {
    return emitInOrder(state, this.outputsFor(part, state));
  }

  private outputsFor(part: ChunkType, state: ProcessorState): ChunkType[] {
    const batch = state.batch as Batch | undefined;
    const now = this.scheduler.now();
    if (part.type !== 'text-delta') {
      if (batch === undefined) return [part];
      const closesBlock = part.type === 'text-end' && part.payload.id === batch.id;
      if (this.emitOnNonText || closesBlock || endsStep(part)) {
        state.batch = undefined;
        return [this.merged(batch), part];
      }
      if (this.overdue(batch, now)) {
        state.batch = undefined;
        return [this.merged(batch), part];
      }
      return [part];
    }
    const outputs: ChunkType[] = [];
    let current = batch;
    if (current !== undefined && (current.id !== part.payload.id || this.overdue(current, now))) {
      outputs.push(this.merged(current));
      current = undefined;
    }
    current ??= { id: part.payload.id, text: '', count: 0, startedAt: now, template: part };
    current.text += part.payload.text;
    current.count++;
    if (current.count >= this.batchSize) {
      state.batch = undefined;
      outputs.push(this.merged(current));
    } else {
      state.batch = current;
    }
    return outputs;
  }

  private overdue(batch: Batch, now: number): boolean {
    return this.maxWaitTime !== undefined && now - batch.startedAt >= this.maxWaitTime;
  }

  private merged(batch: Batch): ChunkType {
    if (batch.count === 1) return batch.template;
    return textDeltaChunk(batch.template, batch.id, batch.text);
  }
}

function endsStep(part: ChunkType): boolean {
  return (
    part.type === 'step-finish' || part.type === 'finish' || part.type === 'error' || part.type === 'abort' || part.type === 'tripwire'
  );
}
