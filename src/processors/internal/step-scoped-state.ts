/**
 * How a built-in's run `state` crosses a durable run's takeover when part of it is step-scoped
 * machinery rather than data: the output-stream gate of the model-backed guards (held content,
 * its streams as `Map`s, pending judge verdicts as promises). The gate starts empty at every
 * `step-start`, and at every commit point of a run it holds nothing that will still be shown: the
 * step's stream ended, every verdict arrived and every judged chunk was released (a rejected
 * attempt's held content is dropped by design). So the gate is left out of the snapshot and the
 * restored run builds a fresh one; everything else in the state (redactions, judge calls spent,
 * chunks queued behind a hook's output) is JSON and kept.
 */
import type { DurableStateOption, JsonValue, ProcessorState } from '../../contract/index.js';

/**
 * The state key of a guard's judge-call slots (`maxConcurrentJudgeCalls`): run machinery, free at
 * every commit point (no judge call spans one), so never in a snapshot.
 */
export const JUDGE_SLOTS_KEY = 'rxagent.judgeSlots';

/**
 * A `durableState` that snapshots the state as JSON without the `reset` keys (step-scoped
 * machinery a restored run builds again) and without the judge-call slots; the rest must be JSON,
 * which the snapshot checks.
 *
 * @example
 * ```ts
 * readonly durableState = keepStateExcept(['moderationHeld']);
 * ```
 */
export function keepStateExcept(reset: readonly string[]): DurableStateOption {
  return {
    snapshot(state: ProcessorState): JsonValue {
      const kept: ProcessorState = {};
      for (const [key, value] of Object.entries(state)) if (key !== JUDGE_SLOTS_KEY && !reset.includes(key)) kept[key] = value;
      return kept as unknown as JsonValue;
    },
    restore(json: JsonValue): ProcessorState {
      return { ...(json as ProcessorState) };
    },
  };
}
