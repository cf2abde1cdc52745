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

/** What forgets a wake that was called at once. */
function forgetNothing(): void {}

/**
 * Calls `wake` once `gate` is open (at once when it is) and returns what forgets it: `whenOpen(signal)`
 * without an `AbortSignal`'s listener, for the model read, which waits on the gate between two reads
 * of the provider (a listener added and removed per wait cost `stream()` ≈ 9 % a chunk, measured).
 * Internal to rxagent.
 *
 * @example
 * ```ts
 * const forget = onceOpen(gate, () => readNext());
 * // the read was cut: the gate keeps nothing of it
 * forget();
 * ```
 */
export let onceOpen: (gate: DemandGate, wake: () => void) => () => void;

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
  /** While held and waited for: what the last release calls (each waiter's `resolve`). */
  #waiters: Array<() => void> | undefined;

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
    const waiters = this.#waiters;
    this.#waiters = undefined;
    if (waiters !== undefined) for (const wake of waiters) wake();
  }

  /**
   * Resolves once the gate is open (at once when it is). With `signal`, a wait that is given up
   * rejects with the signal's reason and is forgotten: the gate keeps no reference to a waiter that
   * left (a run dropped while its consumer holds the gate is not kept alive by it).
   *
   * @example
   * ```ts
   * const stop = new AbortController();
   * await gate.whenOpen(stop.signal); // rejects if stop.abort() comes first
   * ```
   */
  whenOpen(signal?: AbortSignal): Promise<void> {
    if (this.open) return Promise.resolve();
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      if (signal === undefined) {
        this.#wait(resolve);
        return;
      }
      const forget = this.#wait(() => {
        signal.removeEventListener('abort', leave);
        resolve();
      });
      const leave = (): void => {
        forget();
        reject(signal.reason);
      };
      signal.addEventListener('abort', leave, { once: true });
    });
  }

  /** Calls `wake` at the last release; returns what forgets it (the gate then holds no reference to it). */
  #wait(wake: () => void): () => void {
    (this.#waiters ??= []).push(wake);
    return () => {
      const waiters = this.#waiters;
      const index = waiters === undefined ? -1 : waiters.indexOf(wake);
      if (index >= 0) (waiters as Array<() => void>).splice(index, 1);
    };
  }

  static {
    onceOpen = (gate, wake) => (gate.open ? (wake(), forgetNothing) : gate.#wait(wake));
  }
}
