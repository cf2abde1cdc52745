/**
 * Waiting on a condition instead of a fixed delay: a test that sleeps 5 ms and then expects the
 * run to have reached a point races the machine's load (CI failed once that way at load ≈ 5). Timing
 * belongs in benchmarks; tests wait for the event they need.
 */

/**
 * Resolves once `condition()` holds (polled every 2 ms); rejects naming `what` after `limitMs` (a
 * bound for a broken run, far above any real wait, so load never reaches it).
 *
 * @example
 * ```ts
 * await waitFor(() => model.calls.length === 1, 'the model call');
 * ```
 */
export async function waitFor(condition: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > limitMs) throw new Error(`waitFor: ${what} did not happen within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * For an absence check: gives the run `graceMs` (and stops early once `done()` holds), then
 * returns. Only ever makes the check stricter under load, never flaky.
 *
 * @example
 * ```ts
 * await settle(() => received.join('') === 'live words', 300);
 * ```
 */
export async function settle(done: () => boolean, graceMs: number): Promise<void> {
  const started = Date.now();
  while (!done() && Date.now() - started < graceMs) await new Promise((resolve) => setTimeout(resolve, 2));
}
