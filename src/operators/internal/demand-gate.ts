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
  /**
   * Who holds the gate (a few at most): an array made with the first holder, of exactly its
   * size — a `Set`, or a push onto `[]`, would cost every run a table for 17.
   */
  #holders: object[] | undefined;
  #waiters: Array<() => void> | undefined;

  /** True while nobody holds the gate. */
  get open(): boolean {
    return this.#holders === undefined || this.#holders.length === 0;
  }

  /** `holder` cannot take more for now (idempotent per holder). */
  hold(holder: object): void {
    const holders = this.#holders;
    if (holders === undefined || holders.length === 0) this.#holders = [holder];
    else if (!holders.includes(holder)) holders.push(holder);
  }

  /** `holder` can take more again (idempotent); the last release wakes the waiting reader. */
  release(holder: object): void {
    const holders = this.#holders;
    const index = holders === undefined ? -1 : holders.indexOf(holder);
    if (index < 0) return;
    (holders as object[]).splice(index, 1);
    const waiters = this.#waiters;
    if ((holders as object[]).length > 0 || waiters === undefined || waiters.length === 0) return;
    this.#waiters = undefined;
    for (const wake of waiters) wake();
  }

  /** Resolves once the gate is open (at once when it is). */
  whenOpen(): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.#waiters;
      if (waiters === undefined) this.#waiters = [resolve];
      else waiters.push(resolve);
    });
  }
}
