/**
 * Tracks what a run's stream has opened (the run, a step, text and reasoning parts), so a run
 * that ends early (tripwire, error, abort) can still close every bracket before its terminal chunk.
 */
import type { ChunkType, RxFinishReason } from '../processor/chunk-types.js';
import { makeChunk } from './make-chunk.js';
import { emptyUsage } from './usage.js';

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
