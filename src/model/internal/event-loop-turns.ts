/**
 * Whether a model call's read keeps the event loop to itself. A stream whose reads are always
 * ready (a pull that enqueues at once, a queue filled ahead, an Observable that emits synchronously
 * or in microtasks) is read in one chain of microtasks: no timer fires — an `AbortSignal.timeout`
 * passed as the run's signal never aborts — and no I/O is served until it ends, if it ever does.
 */

/**
 * The event loop's own functions, taken when this module loads: fake timers a test installs later
 * neither hold a read back nor make it skip a turn.
 */
const nextImmediate: (resume: () => void) => unknown =
  typeof setImmediate === 'function' ? setImmediate : (resume) => setTimeout(resume, 0);
/** The clock a slice is measured by (the real one, whatever timers a test fakes). */
export const clock: () => number = performance.now.bind(performance);

/** Parts between two looks at the clock: the per-part cost is one counter. */
export const PARTS_PER_LOOK = 32;

/**
 * Counts the parts of one read and tells when the event loop has taken no turn (no macrotask:
 * timers, I/O) for `sliceMs`. A slice starts at a look at the clock with a `setImmediate` that ends
 * it when the loop turns; so a read that waits for its provider starts one slice per
 * {@link PARTS_PER_LOOK} parts at most and is never told to yield.
 *
 * @example
 * ```ts
 * const turns = new EventLoopTurns(8);
 * for (;;) {
 *   take(await reader.read());
 *   if (turns.starved()) await turns.yield();
 * }
 * ```
 */
export class EventLoopTurns {
  #parts = 0;
  /** When the current slice started (`undefined`: none, the loop turned since the last one). */
  #since: number | undefined;
  readonly #turned = (): void => {
    this.#since = undefined;
  };

  constructor(private readonly sliceMs: number) {}

  /** Counts one part: true when the loop has taken no turn for `sliceMs` (looked at every 32 parts). */
  starved(): boolean {
    if (++this.#parts < PARTS_PER_LOOK) return false;
    this.#parts = 0;
    const now = clock();
    if (this.#since === undefined) {
      this.#since = now;
      nextImmediate(this.#turned);
      return false;
    }
    return now - this.#since >= this.sliceMs;
  }

  /** Resolves on the next turn of the loop's check phase (after the slice's own `setImmediate`). */
  yield(): Promise<void> {
    return new Promise<void>((resume) => {
      nextImmediate(resume);
    });
  }
}

/**
 * Resolves on the next turn of the loop's check phase (`setImmediate`): what a web-stream read
 * awaits once its time slice is over. The read keeps the slice in locals and does not watch for
 * the loop's turns (a `setImmediate` per slice cost short runs ≈ 10 % per part): a read that
 * waits for its provider turns the loop anyway, and yields once per slice at most.
 *
 * @example
 * ```ts
 * if (++parts === PARTS_PER_LOOK && clock() - sliceStart >= 8) await nextTurn();
 * ```
 */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resume) => {
    nextImmediate(resume);
  });
}

/**
 * Resolves after the timers that came due while the loop was starved ran: at the check phase of the
 * loop's next iteration (two `setImmediate`s), whose timers phase ran every timer due by then — a
 * run whose `AbortSignal.timeout` expired meanwhile is aborted first. Not a `setTimeout(0)`: one set
 * during a starvation is timed from the loop's stale clock, so it could run before a timer that
 * expired long ago (it did, under load).
 */
export function afterDueTimers(): Promise<void> {
  return new Promise<void>((resume) => {
    nextImmediate(() => nextImmediate(resume));
  });
}
