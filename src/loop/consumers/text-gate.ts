/**
 * What `textStream` presents: the text of accepted step attempts only. While the run can still
 * retry a step (a `maxProcessorRetries` or API-error budget is left), an attempt's text is held
 * until its `step-finish` accepts it, and dropped when the attempt is rejected (`step-finish` with
 * reason `'retry'`). With no retry possible, text streams live. A run that ends in `tripwire`,
 * `error` or `abort` errors the text stream (`textStreamError`) instead of closing it.
 */
import type { ChunkType } from '../../contract/chunk-types.js';
import { TripWire } from '../../contract/errors/trip-wire.js';
import { RunAbortedError } from '../run/run-aborted-error.js';

/** The retry budgets a run starts with (as the loop resolves them). */
export interface RetryBudgets {
  /** Tripwire retries (`maxProcessorRetries`). */
  readonly tripwire: number;
  /** API-error retries (`maxProcessorRetries`, else 10 with error processors, else 0). */
  readonly apiError: number;
}

/** Per-run gate between the run's chunks and its text stream. */
export class TextGate {
  readonly #budgets: RetryBudgets;
  readonly #emit: (text: string) => void;
  #held: string[] = [];
  #holding = false;
  #tripwireRetries = 0;
  #apiErrorRetries = 0;

  constructor(budgets: RetryBudgets, emit: (text: string) => void) {
    this.#budgets = budgets;
    this.#emit = emit;
  }

  /** Feeds one chunk of the run (in order). */
  observe(chunk: ChunkType): void {
    switch (chunk.type) {
      case 'text-delta':
        if (this.#holding) this.#held.push(chunk.payload.text);
        else this.#emit(chunk.payload.text);
        return;
      case 'step-start':
        this.#holding = this.#tripwireRetries < this.#budgets.tripwire || this.#apiErrorRetries < this.#budgets.apiError;
        return;
      case 'step-finish': {
        if (chunk.payload.stepResult.reason === 'retry') {
          if (chunk.payload.stepResult.tripwire === undefined) this.#apiErrorRetries++;
          else this.#tripwireRetries++;
          this.#held = [];
        } else {
          for (const text of this.#held) this.#emit(text);
          this.#held = [];
        }
        this.#holding = false;
        return;
      }
      default:
        return;
    }
  }
}

/** The error a text stream ends with when its run ended in `tripwire`, `error` or `abort` (else undefined). */
export function textStreamError(terminal: ChunkType | undefined): unknown {
  switch (terminal?.type) {
    case 'tripwire': {
      const { reason, retry, metadata, processorId } = terminal.payload;
      const options = retry === undefined ? {} : { retry };
      try {
        return new TripWire(reason, metadata === undefined ? options : { ...options, metadata }, processorId);
      } catch {
        // metadata a TripWire refuses (a stream the loop did not make: the run's own tripwires are
        // checked where they are made): the text stream still ends with the tripwire, without it
        return new TripWire(reason, options, processorId);
      }
    }
    case 'error':
      return terminal.payload.error;
    case 'abort':
      return new RunAbortedError({ reason: terminal.payload.reason });
    default:
      return undefined;
  }
}
