/**
 * Run-wide demand for model output. Whoever cannot take more chunks right now — the
 * `processOutputStream` queue behind an async hook, a `ReadableStream` consumer that stopped
 * reading — holds the gate; the model stream reads its next part only while nobody holds it. So a
 * slow consumer paces the provider instead of making the run buffer the whole response.
 *
 * Checking the gate costs one property read per part; a promise exists only while it is held.
 */

/** The demand gate of one run (one per run context: see `run-machinery.ts`). */
export class DemandGate {
  readonly #holders = new Set<object>();
  #waiters: Array<() => void> = [];

  /** True while nobody holds the gate. */
  get open(): boolean {
    return this.#holders.size === 0;
  }

  /** `holder` cannot take more for now (idempotent per holder). */
  hold(holder: object): void {
    this.#holders.add(holder);
  }

  /** `holder` can take more again (idempotent); the last release wakes the waiting reader. */
  release(holder: object): void {
    if (!this.#holders.delete(holder) || this.#holders.size > 0 || this.#waiters.length === 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves once the gate is open (at once when it is). */
  whenOpen(): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
