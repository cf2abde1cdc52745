/**
 * An attempt as JSON after its model output (a `model` commit: its step accepted, its message in
 * the list, its client tool calls pinned, no tool run yet), and back: a restored run goes on with
 * that attempt's tool phase instead of calling the model again.
 */
import type { StepBoundary } from '../../message-list/step-boundary.js';
import { toJsonValue, type JsonValue } from '../../contract/json-codec.js';
import type { StepResult } from '../../contract/processor-types.js';
import type { AgentToolSet } from '../../contract/tool-types.js';
import type { StepFacts } from '../../model/model-part-to-chunk.js';
import type { AttemptState } from './attempt-state.js';
import { StepAccumulator } from './step-accumulator.js';
import type { RunSources } from './run-sources.js';

/** The JSON form of an attempt after its model output. */
export interface AttemptSnapshot {
  readonly stepNumber: number;
  readonly messageId: string;
  readonly boundary: StepBoundary;
  /** Where its `StepResult` is in the run's steps. */
  readonly recorded: number;
  readonly facts: JsonValue;
  /** The tools of its step input, by name (the functions are the agent's). */
  readonly toolNames: string[] | null;
  readonly requestedToolCalls: Array<[string, string]>;
}

/** `attempt` as JSON (its step recorded in `steps`, its `tools` not run yet). */
export function snapshotAttempt(attempt: AttemptState, tools: AgentToolSet | undefined, steps: readonly StepResult[]): JsonValue {
  const recorded = attempt.recorded === undefined ? -1 : steps.indexOf(attempt.recorded);
  const snapshot: AttemptSnapshot = {
    stepNumber: attempt.stepNumber,
    messageId: attempt.messageId,
    boundary: attempt.boundary,
    recorded,
    facts: toJsonValue(attempt.facts, 'the attempt\'s facts'),
    toolNames: tools === undefined ? null : Object.keys(tools),
    requestedToolCalls: [...attempt.requestedToolCalls],
  };
  return toJsonValue(snapshot);
}

/** The tools of `names` among the agent's (a tool a hook added that the agent does not have cannot be restored). */
function toolsNamed(all: AgentToolSet | undefined, names: readonly string[] | null): AgentToolSet | undefined {
  if (names === null || all === undefined) return undefined;
  const tools: AgentToolSet = {};
  for (const name of names) {
    const tool = all[name];
    if (tool !== undefined) tools[name] = tool;
  }
  return tools;
}

/** The attempt of an `AttemptSnapshot` and its tools, in a run whose state (its list, its steps) was restored. */
export function restoreAttempt(
  env: Pick<RunSources, 'stepDefaults'>,
  steps: readonly StepResult[],
  json: JsonValue,
): { attempt: AttemptState; tools: AgentToolSet | undefined } {
  const snapshot = json as unknown as AttemptSnapshot;
  const step = steps[snapshot.recorded];
  if (step === undefined) throw new TypeError(`the snapshot's attempt names step result ${snapshot.recorded}, which the run does not have`);
  const facts = snapshot.facts as unknown as StepFacts;
  const timestamp = facts.response.timestamp as unknown;
  const attempt: AttemptState = {
    stepNumber: snapshot.stepNumber,
    messageId: snapshot.messageId,
    boundary: snapshot.boundary,
    phase: 'post-model',
    facts: typeof timestamp === 'string' ? { ...facts, response: { ...facts.response, timestamp: new Date(timestamp) } } : facts,
    accumulator: StepAccumulator.afterMessage(step),
    opened: true,
    requestedToolCalls: new Map(snapshot.requestedToolCalls),
    recorded: step,
  };
  return { attempt, tools: toolsNamed(env.stepDefaults.tools, snapshot.toolNames) };
}
