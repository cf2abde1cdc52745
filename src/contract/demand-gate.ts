/**
 * A run's demand gate: the one backpressure type of rxagent. Whoever cannot take more chunks right
 * now — the `processOutputStream` queue behind an async hook, a web-stream or UI-stream reader that
 * stopped reading — holds the gate; the model call reads its next part only while nobody holds it.
 * A slow consumer paces the provider instead of making the run buffer the whole reply.
 *
 * Checking the gate is one property read per part; a promise exists only while it is held.
 */
import { hasMarker } from '../errors/rxagent-error.js';

/** The brand every copy of rxagent (its ESM and CJS builds) gives its gates: see `DemandGate.isInstance`. */
const marker = Symbol.for('rxagent.DemandGate');

/**
 * The demand gate of one run (made by the consumer that paces it, and given to the run).
 *
 * @example
 * ```ts
 * const gate = new DemandGate();
 * agent.stream$('Hi', { demand: gate }).pipe(map(toLine)).subscribe(writeLine);
 * const reader = {};
 * gate.hold(reader);      // the reader is full: the model is not read
 * gate.release(reader);   // reading resumes
 * ```
 */
export class DemandGate {
  private readonly [marker] = true;
  #holders: object[] | undefined;
  /** While held and waited for: the one promise every waiter gets, and what resolves it. */
  #opened: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  /**
   * True when `value` is a demand gate of any copy of rxagent loaded in this process — its ESM or
   * its CJS build (`instanceof` says false across the two).
   *
   * @example
   * ```ts
   * DemandGate.isInstance(new DemandGate()); // true
   * DemandGate.isInstance({ open: true });   // false
   * ```
   */
  static isInstance(value: unknown): value is DemandGate {
    return hasMarker(value, marker);
  }

  /** True while nobody holds the gate. */
  get open(): boolean {
    return this.#holders === undefined || this.#holders.length === 0;
  }

  /** `holder` cannot take more for now (idempotent per holder). */
  hold(holder: object): void {
    const holders = this.#holders;
    if (holders === undefined) this.#holders = [holder];
    else if (!holders.includes(holder)) holders.push(holder);
  }

  /** `holder` can take more again (idempotent); the last release wakes whoever waits. */
  release(holder: object): void {
    const holders = this.#holders;
    const index = holders === undefined ? -1 : holders.indexOf(holder);
    if (index < 0) return;
    (holders as object[]).splice(index, 1);
    if ((holders as object[]).length > 0) return;
    const wake = this.#wake;
    this.#opened = this.#wake = undefined;
    wake?.();
  }

  /** Resolves once the gate is open (at once when it is). */
  whenOpen(): Promise<void> {
    if (this.open) return Promise.resolve();
    return (this.#opened ??= new Promise((resolve) => {
      this.#wake = resolve;
    }));
  }
}
