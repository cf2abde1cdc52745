/** The scenarios of the format-1 snapshot fixture (see `write-format-1-snapshots.ts`) and its shape. */
import type { RunSnapshot } from '../../../src/loop/data/run-snapshot.js';
import type { SnapshotScenario } from './snapshot-scenario.js';

/** What the fixture holds: per scenario, the uninterrupted run and each commit point's snapshot. */
export interface Format1Fixture {
  runs: Array<{
    scenario: SnapshotScenario;
    chunks: string[];
    steps: string;
    memory: string;
    states: string;
    points: Array<{ kind: string; at: number; idNext: number; snapshot: RunSnapshot }>;
  }>;
}

/**
 * Two runs whose snapshots hold every part of the state: stream parts with a processor's own log
 * (one rewrites, one drops a delta), a signal's custom chunk waiting at a `model` commit,
 * request-context writes, processor states, a tripwire retry (its `rejected` commit), tool steps,
 * memory; and a run with input processors only (no stream parts).
 */
export const FORMAT_1_SCENARIOS: SnapshotScenario[] = [
  {
    toolSteps: 2,
    answerWords: 3,
    processors: [
      { id: 'p0', input: true, output: true, rewrite: 'drop-second-delta', retryOnce: true, signal: true, writeContext: true },
      { id: 'p1', input: false, output: true, rewrite: 'upper', retryOnce: false, signal: false, writeContext: false },
    ],
    maxProcessorRetries: 1,
    memory: true,
  },
  {
    toolSteps: 1,
    answerWords: 2,
    processors: [{ id: 'p0', input: true, output: false, rewrite: 'none', retryOnce: false, signal: false, writeContext: true }],
    maxProcessorRetries: 0,
    memory: false,
  },
];
