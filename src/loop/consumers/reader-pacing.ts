/**
 * Backpressure from `agent.stream()`'s web streams to the run: while every stream someone reads
 * (holds a reader on) has a full queue, the run's demand gate is held, so the loop stops reading the
 * provider until the consumer reads again. Streams nobody reads keep buffering for a late reader
 * and never hold the run (`await output.text` alone runs at full speed).
 */
import type { DemandGate } from '../../contract/demand-gate.js';

/**
 * The streams whose readers pace the run: each method is a stream's `desiredSize` while someone
 * reads it and it is open, else `null` (methods of the output's sink).
 */
export interface ReaderProbes {
  fullDesiredSize(): number | null;
  textDesiredSize(): number | null;
}

/** Holds the run's demand gate while all read streams are full. */
export class ReaderPacing {
  #gate: DemandGate | undefined;
  #holding = false;
  readonly #probes: ReaderProbes;

  constructor(probes: ReaderProbes) {
    this.#probes = probes;
  }

  /** Whether the run is held (every read stream is full). */
  get holding(): boolean {
    return this.#holding;
  }

  /** The run's gate (the one `agent.stream()` gave the run). */
  attach(gate: DemandGate): void {
    this.#gate = gate;
  }

  /** After a chunk was enqueued: hold the run when every read stream is full. */
  enqueued(): void {
    if (!this.#holding && this.#gate !== undefined && this.#full()) {
      this.#holding = true;
      this.#gate.hold(this);
    }
  }

  /** A stream asked for more (its `pull`), or one closed: release the run unless all still are full. */
  pulled(): void {
    if (this.#holding && !this.#full()) this.stop();
  }

  /** The run ended or the consumer left: never hold again from here. */
  stop(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.#gate?.release(this);
  }

  #full(): boolean {
    const probes = this.#probes;
    const full = probes.fullDesiredSize();
    if (full !== null && full > 0) return false;
    const text = probes.textDesiredSize();
    if (text !== null && text > 0) return false;
    return full !== null || text !== null;
  }
}
