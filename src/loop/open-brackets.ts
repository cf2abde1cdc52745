/**
 * Tracks what a run's stream has opened (the run, a step, text and reasoning parts), so a run
 * that ends early (tripwire, error, abort) can still close every bracket before its terminal chunk,
 * and keeps text and reasoning parts bracketed whatever the provider sent or a processor dropped
 * (see {@link repairBrackets}).
 */
import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { ChunkType, RxFinishReason } from '../processor/chunk-types.js';
import { makeChunk } from '../processor/make-chunk.js';
import { emptyUsage } from '../model/usage.js';

export class OpenBrackets {
  started = false;
  #step: { stepNumber: number; messageId?: string } | undefined;
  readonly #texts = new Set<string>();
  readonly #reasoning = new Set<string>();

  observe(chunk: ChunkType): void {
    switch (chunk.type) {
      case 'start':
        this.started = true;
        return;
      case 'step-start':
        this.#step = { stepNumber: chunk.payload.stepNumber, ...(chunk.payload.messageId ? { messageId: chunk.payload.messageId } : {}) };
        return;
      case 'step-finish':
        this.#step = undefined;
        this.#texts.clear();
        this.#reasoning.clear();
        return;
      case 'text-start':
        this.#texts.add(chunk.payload.id);
        return;
      case 'text-end':
        this.#texts.delete(chunk.payload.id);
        return;
      case 'reasoning-start':
        this.#reasoning.add(chunk.payload.id);
        return;
      case 'reasoning-end':
        this.#reasoning.delete(chunk.payload.id);
        return;
      default:
        return;
    }
  }

  /**
   * Passes `chunk` to `emit` keeping text and reasoning parts bracketed: a delta of a part that
   * is not open is preceded by its start (a provider that skipped it, or a processor that dropped
   * it); a second start or an end of a part that is not open is left out; the parts still open
   * when their step finishes (a provider stream that ended early) are ended before `step-finish`;
   * a `step-start` while a step is open first closes that attempt (`step-finish` reason `retry`).
   */
  repair(chunk: ChunkType, emit: (chunk: ChunkType) => void): void {
    switch (chunk.type) {
      case 'text-start':
      case 'reasoning-start':
        if ((chunk.type === 'text-start' ? this.#texts : this.#reasoning).has(chunk.payload.id)) return;
        break;
      case 'text-delta':
      case 'reasoning-delta': {
        const open = chunk.type === 'text-delta' ? this.#texts : this.#reasoning;
        if (!open.has(chunk.payload.id)) {
          const start = makeChunk(chunk.runId, chunk.type === 'text-delta' ? 'text-start' : 'reasoning-start', { id: chunk.payload.id });
          this.observe(start);
          emit(start);
        }
        break;
      }
      case 'text-end':
      case 'reasoning-end':
        if (!(chunk.type === 'text-end' ? this.#texts : this.#reasoning).has(chunk.payload.id)) return;
        break;
      case 'step-start':
        // the previous attempt never got its step-finish (a processor aborted it for a retry)
        if (this.#step !== undefined) for (const closer of this.close(chunk.runId, 'retry')) emit(closer);
        break;
      case 'step-finish':
        for (const id of this.#texts) emit(makeChunk(chunk.runId, 'text-end', { id }));
        for (const id of this.#reasoning) emit(makeChunk(chunk.runId, 'reasoning-end', { id }));
        break;
      default:
        break;
    }
    this.observe(chunk);
    emit(chunk);
  }

  /** The chunks that close what is open, in nesting order (parts, then the step). */
  close(runId: string, reason: RxFinishReason): ChunkType[] {
    const closers: ChunkType[] = [];
    for (const id of this.#texts) closers.push(makeChunk(runId, 'text-end', { id }));
    for (const id of this.#reasoning) closers.push(makeChunk(runId, 'reasoning-end', { id }));
    if (this.#step !== undefined) {
      closers.push(
        makeChunk(runId, 'step-finish', {
          stepNumber: this.#step.stepNumber,
          ...(this.#step.messageId ? { messageId: this.#step.messageId } : {}),
          stepResult: { reason, isContinued: false },
          output: { text: '', toolCalls: [], usage: emptyUsage() },
        }),
      );
    }
    this.#texts.clear();
    this.#reasoning.clear();
    this.#step = undefined;
    return closers;
  }
}

/**
 * Runs every chunk of a run through `brackets.repair` (see {@link OpenBrackets.repair}): what
 * reaches the consumer is bracketed even when the provider's stream or a processor was not.
 *
 * ```
 * source:  --S--d--F--|        (S = step-start, d = text-delta of a part never started, F = step-finish)
 * result:  --S--(sd)--(eF)--|  (s = its text-start, e = its text-end)
 * ```
 */
export function repairBrackets(brackets: OpenBrackets): MonoTypeOperatorFunction<ChunkType> {
  return (source) =>
    new Observable<ChunkType>((subscriber) => {
      const emit = (chunk: ChunkType): void => subscriber.next(chunk);
      return source.subscribe({
        next: (chunk) => brackets.repair(chunk, emit),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}
