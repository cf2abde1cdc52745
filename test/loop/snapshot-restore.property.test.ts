/**
 * The run's state is one value (issue "The loop reads as the pipeline it promises", point 4): for a
 * scripted model and random processors, a snapshot taken at any step boundary (after
 * `processInput`, after each step), restored into a fresh run in a new process, goes on exactly as
 * the uninterrupted run — the same chunks, `steps`, memory and processor states.
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` scenarios (default 60 in CI; `npm run test:soak` raises it), each
 * restored at every commit point it has; all restored in one child process.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { encodeJson } from '../../src/contract/json-codec.js';
import type { ProcessorState } from '../../src/contract/processor-types.js';
import { createRun } from '../../src/loop/run/create-run.js';
import { isChunk, isRunEnd } from '../../src/loop/run/run-events.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import type { SnapshotCase, SnapshotCaseResult } from './support/snapshot-child.js';
import { scenarioAgent, scenarioInput, scenarioOptions, Sequence, snapshotScenario, type SnapshotScenario } from './support/snapshot-scenario.js';
import { snapshotOf, tellCommitPoints } from '../support/commit-points.js';

const runs = Number(process.env['RXAGENT_PROPERTY_RUNS'] ?? 60);
const seedSetting = process.env['RXAGENT_PROPERTY_SEED'];
const seed = seedSetting === undefined ? 20261201 : seedSetting === 'random' ? Date.now() | 0 : Number(seedSetting);

interface Uninterrupted {
  chunks: string[];
  steps: string;
  memory: string;
  states: string;
  /** Each commit point: the snapshot, how many chunks were out, the id counter. */
  points: Array<{ kind: string; at: number; case: SnapshotCase }>;
}

async function runUninterrupted(scenario: SnapshotScenario): Promise<Uninterrupted> {
  const ids = new Sequence();
  const states: Record<string, ProcessorState> = {};
  const storage = new InMemoryStorage();
  const config = scenarioAgent(scenario, ids, (id, state) => (states[id] = structuredClone(state)), storage);
  const chunks: ChunkType[] = [];
  const points: Uninterrupted['points'] = [];
  const items = await lastValueFrom(
    createRun(config, scenarioInput, scenarioOptions(scenario), { commitPoints: true }).pipe(
      tellCommitPoints((point) => {
        // through JSON, as another process would get it
        const snapshot = JSON.parse(JSON.stringify(snapshotOf(point))) as SnapshotCase['snapshot'];
        points.push({ kind: point.kind, at: chunks.length, case: { scenario, snapshot, idNext: ids.next } });
      }),
      tap((item) => {
        if (isChunk(item)) chunks.push(item);
      }),
      toArray(),
    ),
  );
  const memory = scenario.memory ? await storage.getMessages({ threadId: 'thread-1' }) : [];
  return {
    chunks: chunks.map((chunk) => encodeJson(chunk)),
    steps: encodeJson(items.find(isRunEnd)?.steps ?? []),
    memory: encodeJson(memory),
    states: encodeJson(states),
    points,
  };
}

describe('run snapshots (property)', () => {
  it(`snapshot at any commit point, restore in a new process, go on: the same run (${runs} scenarios, seed ${seed})`, async () => {
    const scenarios = fc.sample(snapshotScenario, { numRuns: runs, seed });
    const uninterrupted = await Promise.all(scenarios.map((scenario) => runUninterrupted(scenario)));
    const cases = uninterrupted.flatMap((run, index) => run.points.map((point) => ({ run: index, ...point })));
    expect(cases.length).toBeGreaterThan(runs); // every run has its input point and at least one step

    const dir = mkdtempSync(join(tmpdir(), 'rxagent-snapshot-'));
    try {
      const casesPath = join(dir, 'cases.json');
      const resultsPath = join(dir, 'results.json');
      writeFileSync(casesPath, JSON.stringify(cases.map((entry) => entry.case)));
      execFileSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'support', 'snapshot-child.ts'), casesPath, resultsPath], {
        stdio: ['ignore', 'inherit', 'inherit'],
        timeout: 240_000,
      });
      const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as SnapshotCaseResult[];
      expect(results).toHaveLength(cases.length);
      const problems: string[] = [];
      cases.forEach((entry, index) => {
        const whole = uninterrupted[entry.run] as Uninterrupted;
        const restored = results[index] as SnapshotCaseResult;
        const where = `scenario ${entry.run} at ${entry.kind} (chunk ${entry.at}): ${JSON.stringify(entry.case.scenario)}`;
        // the restored run's own `start`, then the rest of the uninterrupted run
        const joined = [...whole.chunks.slice(0, entry.at), ...restored.chunks.slice(1)];
        if (JSON.stringify(joined) !== JSON.stringify(whole.chunks)) problems.push(`chunks differ — ${where}`);
        if (restored.steps !== whole.steps) problems.push(`steps differ — ${where}`);
        if (restored.memory !== whole.memory) problems.push(`memory differs — ${where}`);
        if (restored.states !== whole.states) problems.push(`processor states differ — ${where}`);
      });
      console.log(`[snapshot property] ${scenarios.length} scenarios, ${cases.length} snapshots restored in a child process, ${problems.length} problems (seed ${seed})`);
      expect(problems.slice(0, 5)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
