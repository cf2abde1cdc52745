/**
 * `closeBrackets()`: the one place where a run's chunk stream gets its brackets repaired and
 * closed (text, reasoning and tool-input parts, and steps).
 */
import { Observable, type MonoTypeOperatorFunction, type Subscriber } from 'rxjs';
import type { ChunkType, RxFinishReason } from '../../contract/chunk-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { emptyUsage } from '../../model/usage.js';
import { subscribeLinked } from '../internal/subscribe-linked.js';

/** `open` with `id` added (an array of one for the first). */
function opened(open: string[] | undefined, id: string): string[] {
  if (open === undefined || open.length === 0) return [id];
  open.push(id);
  return open;
}

/** Removes `id` from `open`; false when it was not open. */
function closed(open: string[] | undefined, id: string): boolean {
  const index = open === undefined ? -1 : open.indexOf(id);
  if (index < 0) return false;
  (open as string[]).splice(index, 1);
  return true;
}

/**
 * What one subscription has opened and not yet closed: the state of {@link closeBrackets}, also
 * used by `endWithTerminal({ closeBrackets: true })` (both in one subscriber).
 */
export class OpenBrackets {
  /** The run id of the chunks that opened something (closers carry it). */
  runId = 'run';
  step: { stepNumber: number; messageId?: string } | undefined;
  /**
   * The ids of the open text, reasoning and tool-input parts, in the order they opened: arrays made
   * with their first id (a run has one or two open at a time).
   */
  #texts: string[] | undefined;
  #reasoning: string[] | undefined;
  #toolInputs: string[] | undefined;

  /** Opens `id` among the open texts (`text`) or reasoning parts; false when it was open already. */
  #open(text: boolean, id: string): boolean {
    const open = text ? this.#texts : this.#reasoning;
    if (open?.includes(id) === true) return false;
    if (text) this.#texts = opened(open, id);
    else this.#reasoning = opened(open, id);
    return true;
  }

  /** Emits `chunk` to `out`, repairing brackets around it (see {@link closeBrackets}). */
  pass(chunk: ChunkType, out: Subscriber<ChunkType>): void {
    switch (chunk.type) {
      case 'step-start':
        // the previous attempt never got its step-finish (a processor aborted it for a retry)
        if (this.step !== undefined) this.closeAll('retry', out);
        this.runId = chunk.runId;
        this.step = { stepNumber: chunk.payload.stepNumber, ...(chunk.payload.messageId ? { messageId: chunk.payload.messageId } : {}) };
        break;
      case 'step-finish':
        this.closeParts(out);
        this.step = undefined;
        break;
      case 'text-start':
      case 'reasoning-start':
        if (!this.#open(chunk.type === 'text-start', chunk.payload.id)) return;
        this.runId = chunk.runId;
        break;
      case 'text-delta':
      case 'reasoning-delta': {
        const text = chunk.type === 'text-delta';
        if (this.#open(text, chunk.payload.id)) {
          // a provider that skipped the start, or a processor that dropped it
          this.runId = chunk.runId;
          out.next(makeChunk(chunk.runId, text ? 'text-start' : 'reasoning-start', { id: chunk.payload.id }));
        }
        break;
      }
      case 'text-end':
      case 'reasoning-end':
        if (!closed(chunk.type === 'text-end' ? this.#texts : this.#reasoning, chunk.payload.id)) return;
        break;
      case 'tool-call-input-streaming-start':
        if (this.#toolInputs?.includes(chunk.payload.toolCallId) !== true) this.#toolInputs = opened(this.#toolInputs, chunk.payload.toolCallId);
        this.runId = chunk.runId;
        break;
      case 'tool-call-input-streaming-end':
        closed(this.#toolInputs, chunk.payload.toolCallId);
        break;
      case 'finish':
        this.closeAll('other', out);
        break;
      case 'tripwire':
        this.closeAll('tripwire', out);
        break;
      case 'error':
        this.closeAll('error', out);
        break;
      case 'abort':
        this.closeAll('other', out);
        break;
      default:
        break;
    }
    out.next(chunk);
  }

  /** Ends the open parts (text, reasoning, tool input), in that order. */
  closeParts(out: Subscriber<ChunkType>): void {
    const { runId } = this;
    const texts = this.#texts;
    const reasoning = this.#reasoning;
    const toolInputs = this.#toolInputs;
    if (texts !== undefined && texts.length > 0) {
      this.#texts = undefined;
      for (const id of texts) out.next(makeChunk(runId, 'text-end', { id }));
    }
    if (reasoning !== undefined && reasoning.length > 0) {
      this.#reasoning = undefined;
      for (const id of reasoning) out.next(makeChunk(runId, 'reasoning-end', { id }));
    }
    if (toolInputs !== undefined && toolInputs.length > 0) {
      this.#toolInputs = undefined;
      for (const toolCallId of toolInputs) out.next(makeChunk(runId, 'tool-call-input-streaming-end', { toolCallId }));
    }
  }

  /** Ends the open parts, then the open step (`step-finish` with `reason`). */
  closeAll(reason: RxFinishReason, out: Subscriber<ChunkType>): void {
    this.closeParts(out);
    const step = this.step;
    if (step === undefined) return;
    this.step = undefined;
    out.next(
      makeChunk(this.runId, 'step-finish', {
        ...step,
        stepResult: { reason, isContinued: false },
        output: { text: '', toolCalls: [], usage: emptyUsage() },
      }),
    );
  }
}

/** A value that is no chunk, as an error message shows it (never its text in full, never a function's source). */
function shownValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'function') return 'a function';
  return String(value);
}

/**
 * Keeps a run's chunks bracketed and closes what is still open when the stream ends. Per
 * subscription it tracks the open step and the open text, reasoning and tool-input parts:
 *
 * - a delta of a text or reasoning part that is not open is preceded by its start; a second
 *   start, or an end of a part that is not open, is left out;
 * - `step-finish` is preceded by the ends of the parts still open; a `step-start` while a step is
 *   open first closes that attempt (`step-finish` with reason `retry`);
 * - a terminal chunk (`finish`, `tripwire`, `error`, `abort`) is preceded by the ends of the open
 *   parts and a `step-finish` of the open step (reason `tripwire`, `error`, or `other`);
 * - completion closes the same way (reason `other`); an error notification is preceded by the
 *   closers (reason `error`) — put `endWithTerminal()` before this operator to turn errors into
 *   terminal chunks first;
 * - a value that is no chunk (`null`, a number, a string) closes the same way, then errors the
 *   result with a `TypeError` saying so (the source is unsubscribed).
 *
 * A chunk that opens or closes nothing costs a `typeof` and one `switch`; nothing is allocated for it.
 *
 * ```
 * source:  --S--d----t--|         (S = step-start, d = text-delta of part "a" never started, t = tripwire)
 * result:  --S--(sd)-(eFt)--|     (s = text-start "a", e = text-end "a", F = step-finish reason "tripwire")
 * ```
 *
 * @example
 * ```ts
 * import { closeBrackets } from 'rxagent/loop';
 *
 * const balanced$ = chunks$.pipe(closeBrackets());
 * ```
 */
export function closeBrackets(): MonoTypeOperatorFunction<ChunkType> {
  return (source) =>
    new Observable<ChunkType>((subscriber) => {
      const brackets = new OpenBrackets();
      return subscribeLinked(source, subscriber, {
        next: (chunk) => {
          // a value that is no chunk (outside the types) errors the result, as in endWithTerminal:
          // read as one, it would throw at nobody and leave the run open
          if (typeof chunk !== 'object' || chunk === null) {
            brackets.closeAll('error', subscriber);
            subscriber.error(new TypeError(`closeBrackets(): ${shownValue(chunk)} is not a chunk`));
            return;
          }
          brackets.pass(chunk, subscriber);
        },
        error: (error: unknown) => {
          brackets.closeAll('error', subscriber);
          subscriber.error(error);
        },
        complete: () => {
          brackets.closeAll('other', subscriber);
          subscriber.complete();
        },
      });
    });
}
