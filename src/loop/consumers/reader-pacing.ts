/**
 * Backpressure from `agent.stream()`'s web streams to the run: while every stream someone reads
 * (holds a reader on) has a full queue, the run's demand gate is held, so the loop stops reading the
 * provider until the consumer reads again. Streams nobody reads keep buffering for a late reader
 * and never hold the run (`await output.text` alone runs at full speed).
 *
 * A reader that releases its lock (`releaseLock()`, `values({ preventCancel: true })` left by
 * `break`, `pipeTo` with `preventCancel`) leaves a stream nobody reads, but a web stream tells its
 * source nothing of it. So from the first hold on, the run looks again every
 * {@link RELEASE_CHECK_MS} while it is held: a run held for a reader that left reads on within that
 * time. (Wrapping `getReader()` would see some of these at once, but a `ReadableStream` subclass
 * made every chunk of every stream 5–8 % slower: bench/README.md.)
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

/** How often a held run looks whether its readers are still there (ms). */
const RELEASE_CHECK_MS = 100;

/** Holds the run's demand gate while all read streams are full. */
export class ReaderPacing {
  #gate: DemandGate | undefined;
  #holding = false;
  #ended = false;
  /** Made at the first hold, cleared when the run ends: looks for readers that left while held. */
  #releaseCheck: ReturnType<typeof setInterval> | undefined;
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
    if (!this.#holding && this.#gate !== undefined && !this.#ended && this.#full()) {
      this.#holding = true;
      this.#gate.hold(this);
      this.#releaseCheck ??= this.#watchReaders();
    }
  }

  /** A stream asked for more (its `pull`), or one closed: release the run unless all still are full. */
  pulled(): void {
    if (this.#holding && !this.#full()) this.#release();
  }

  /** The run ended or the consumer left: never hold again from here. */
  stop(): void {
    this.#ended = true;
    if (this.#releaseCheck !== undefined) clearInterval(this.#releaseCheck);
    this.#release();
  }

  #release(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.#gate?.release(this);
  }

  #watchReaders(): ReturnType<typeof setInterval> {
    // weakly held: a run its consumer abandoned while held (a reader kept, never read) stays collectable
    const pacing = new WeakRef(this);
    const timer = setInterval(() => {
      const alive = pacing.deref();
      if (alive === undefined) clearInterval(timer);
      else alive.pulled();
    }, RELEASE_CHECK_MS);
    // it never keeps a process alive
    (timer as { unref?: () => void }).unref?.();
    return timer;
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
