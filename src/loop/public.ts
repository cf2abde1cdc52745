/**
 * `rxagent/loop`: the loop's own operators and phases, for a loop of your own composed with
 * `pipe()` (docs/architecture.md, "Compose your own loop").
 *
 * - operators: `endWithTerminal` (one `start` first, one terminal chunk last), `closeBrackets`
 *   (text, reasoning, tool-input parts and steps closed), `orderedMergeMap` (concurrent, emitted in
 *   source order: the tool phase);
 * - a run and its phases: `withAgentRun` sets up one call of an `Agent`; `runInput`, `runStep`
 *   (one step with its retries, ending in a `StepEnd`), `runCommit`, `runFailed` are what
 *   `agent.stream$()` is composed of.
 *
 * The loop's internal entry (`src/loop/index.ts`) serves the layers above; this file is the curated
 * public one.
 */
export { endWithTerminal, type EndWithTerminalOptions, type EndWithTerminalThenOptions } from './run/end-with-terminal.js';
export { closeBrackets } from './run/close-brackets.js';
export { orderedMergeMap } from './tools/ordered-merge.js';
export { withAgentRun, type AgentRun, type AgentRunOptions } from './compose/agent-run.js';
export { runInput, runStep, runCommit, runFailed } from './compose/run-phases.js';
export { isStepEnd, type StepEnd } from './step/attempt.js';
export type { CommitPosition, StepPosition } from './data/run-position.js';
