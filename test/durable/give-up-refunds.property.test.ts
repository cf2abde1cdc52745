/**
 * Outages don't burn a run's attempts (issue 32 §1), as a property of the dead-letter decision
 * (`afterLastAttempt`) driven through a model of pg-boss: a run's attempts fail by the run's own
 * fault (its worker died or hung: nobody notes it) or by the infrastructure (the owner notes it,
 * sometimes only after the dead-letter job has waited a few times, sometimes never), until one
 * completes. Whatever the sequence, the run is given up exactly when more than `retryLimit` of its
 * attempts were not noted as the infrastructure's in time, and never while its own failures are
 * within `retryLimit` and every note came within the wait.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { afterLastAttempt, attemptKeyOf, NOTE_WAIT_RETRIES } from '../../src/durable/internal/give-up.js';
import { MAX_INFRASTRUCTURE_LOSSES } from '../../src/storage/index.js';
import { checkProperty, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

/** One attempt: completes, dies (the run's fault), or is failed by the infrastructure and noted after `noteAfter` waits of the dead-letter job (never: beyond the wait). */
type Attempt = { kind: 'completes' } | { kind: 'dies' } | { kind: 'infrastructure'; noteAfter: number };

const attempt: fc.Arbitrary<Attempt> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: 'completes' } as const) },
  { weight: 3, arbitrary: fc.constant({ kind: 'dies' } as const) },
  { weight: 6, arbitrary: fc.integer({ min: 0, max: NOTE_WAIT_RETRIES + 2 }).map((noteAfter) => ({ kind: 'infrastructure', noteAfter }) as const) },
);

/**
 * The run's fate under the worker's rules: pg-boss attempts per job, the dead-letter decision
 * between jobs. A note made late arrives after that many more steps of the dead-letter handler
 * (a wait or a decision), whichever generation it is at by then.
 */
function simulate(retryLimit: number, attempts: readonly Attempt[]): { outcome: 'completed' | 'given-up' | 'running'; spent?: number; used: number } {
  const losses: string[] = [];
  const note = (key: string): void => {
    if (!losses.includes(key) && losses.length < MAX_INFRASTRUCTURE_LOSSES) losses.push(key);
  };
  let pending: Array<{ key: string; after: number }> = [];
  const step = (): void => {
    for (const late of pending) if (late.after-- <= 0) note(late.key);
    pending = pending.filter((late) => late.after >= 0);
  };
  let next = 0;
  let generation = 0;
  let failedBefore = 0;
  let jobLimit = retryLimit;
  while (next < attempts.length) {
    expect(jobLimit).toBeGreaterThanOrEqual(0);
    let failed = 0;
    for (; failed <= jobLimit; failed++) {
      const current = attempts[next++];
      if (current === undefined) return { outcome: 'running', used: next };
      if (current.kind === 'completes') return { outcome: 'completed', used: next };
      const key = attemptKeyOf(generation, failed);
      if (current.kind === 'infrastructure') {
        if (current.noteAfter === 0) note(key);
        else pending.push({ key, after: current.noteAfter - 1 });
      }
    }
    for (let waited = 0; ; waited++) {
      const decision = afterLastAttempt({ generation, since: 0, failedBefore, failedAttempts: failed, losses, retryLimit, waited });
      if (decision.kind === 'give-up') return { outcome: 'given-up', spent: decision.spent, used: next };
      step();
      if (decision.kind === 'wait') continue;
      expect(decision.retryLimit).toBe(retryLimit - decision.spent);
      failedBefore = decision.failedBefore;
      jobLimit = decision.retryLimit;
      generation++;
      break;
    }
  }
  return { outcome: 'running', used: next };
}

describe('the dead-letter decision refunds what the infrastructure took', () => {
  it(
    'a run is given up exactly when more than retryLimit attempts failed for reasons not noted in time',
    async () => {
      const runCase = fc.record({ retryLimit: fc.integer({ min: 0, max: 4 }), attempts: fc.array(attempt, { maxLength: 40 }) });
      await checkProperty('give-up-refunds', runCase, async ({ retryLimit, attempts }) => {
        const { outcome, spent, used } = simulate(retryLimit, attempts);
        const consumed = attempts.slice(0, used);
        // what counts against the run: deaths, and infrastructure failures noted later than the wait (or past the cap)
        const deaths = consumed.filter((one) => one.kind === 'dies').length;
        const unnoted = consumed.filter((one) => one.kind === 'infrastructure' && one.noteAfter > NOTE_WAIT_RETRIES).length;
        const notedInTime = consumed.filter((one) => one.kind === 'infrastructure' && one.noteAfter <= NOTE_WAIT_RETRIES).length;
        if (outcome === 'given-up') {
          expect(spent).toBeGreaterThan(retryLimit);
          expect(spent).toBeGreaterThanOrEqual(deaths);
          if (notedInTime <= MAX_INFRASTRUCTURE_LOSSES) expect(spent).toBeLessThanOrEqual(deaths + unnoted);
        } else if (notedInTime <= MAX_INFRASTRUCTURE_LOSSES) {
          // still going or completed: its own failures never exceeded the limit
          expect(deaths).toBeLessThanOrEqual(retryLimit);
        }
        // the run's own failures within the limit, every note in time: never given up
        if (deaths + unnoted <= retryLimit && notedInTime <= MAX_INFRASTRUCTURE_LOSSES) expect(outcome).not.toBe('given-up');
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('an outage that takes more than 64 attempts is refunded 64 times, then counts (an error misjudged as the infrastructure’s cannot keep a run alive for ever)', () => {
    const attempts: Attempt[] = Array.from({ length: 200 }, () => ({ kind: 'infrastructure', noteAfter: 0 }));
    expect(simulate(0, attempts)).toEqual({ outcome: 'given-up', spent: 1, used: MAX_INFRASTRUCTURE_LOSSES + 1 });
    expect(simulate(2, attempts)).toEqual({ outcome: 'given-up', spent: 3, used: MAX_INFRASTRUCTURE_LOSSES + 3 });
  });

  it('waits for the last owner’s note, at most NOTE_WAIT_RETRIES times, only when the run would be given up', () => {
    const facts = { generation: 2, since: 0, failedBefore: 0, failedAttempts: 2, retryLimit: 1 };
    expect(afterLastAttempt({ ...facts, losses: [], waited: 0 })).toEqual({ kind: 'wait' });
    expect(afterLastAttempt({ ...facts, losses: [], waited: NOTE_WAIT_RETRIES })).toEqual({ kind: 'give-up', spent: 2 });
    expect(afterLastAttempt({ ...facts, losses: ['2:1'], waited: 0 })).toEqual({ kind: 'requeue', failedBefore: 2, spent: 1, retryLimit: 0 });
    // notes of generations before the budget began (a handover), or of attempts that did not fail, refund nothing
    expect(afterLastAttempt({ ...facts, since: 2, losses: ['1:1', '2:5'], waited: 0 })).toEqual({ kind: 'wait' });
    // a late note of an earlier generation's attempt still refunds it
    expect(afterLastAttempt({ ...facts, failedBefore: 1, losses: ['1:0', '2:0'], waited: 0 })).toEqual({ kind: 'requeue', failedBefore: 3, spent: 1, retryLimit: 0 });
  });
});
