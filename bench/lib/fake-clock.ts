/**
 * A fake clock for the guard latency rows: timers run in virtual time, and between two timers the
 * real event loop is drained (promises, web streams, RxJS), so everything rxagent does between
 * two virtual instants happens "at" that instant. Figures are then exact and repeatable on a
 * loaded machine: the latency a client sees from the schedule alone (model pace, judge latency),
 * without this machine's CPU noise.
 */

interface Timer {
  at: number;
  seq: number;
  run: () => void;
}

/** Virtual time: `setTimeout` on it, `run()` to play the timers in order. */
export class FakeClock {
  now = 0;
  private timers: Timer[] = [];
  private seq = 0;

  setTimeout(run: () => void, ms: number): void {
    this.timers.push({ at: this.now + Math.max(0, ms), seq: this.seq++, run });
    this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
  }

  /** A promise resolved `ms` virtual milliseconds from now. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }

  /** Plays every timer (and what they cause) until none is left, or until `done()` says so. */
  async run(done: () => boolean = () => false): Promise<void> {
    await drain();
    while (this.timers.length > 0 && !done()) {
      const timer = this.timers.shift() as Timer;
      this.now = timer.at;
      timer.run();
      await drain();
    }
  }
}

/** Lets the real event loop run everything already queued (microtasks, immediates, stream pulls). */
async function drain(): Promise<void> {
  for (let turn = 0; turn < 8; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}
