/**
 * Writes `test/fixtures/run-snapshots/format-1.json`: two scenarios of the snapshot property run
 * uninterrupted, with every commit point's snapshot (as JSON, as another process gets it) and what
 * the whole run did. Written once by main at fdbc9ee (before the run's state owned its stream
 * parts, custom chunks and request-context overlay), so `snapshot-format-1.test.ts` checks that a
 * snapshot written by that code restores here. (Its commit points are now read off the run's
 * values, as the worker reads them, not told to a `checkpoint` callback as at fdbc9ee.)
 *
 *   node --import tsx test/loop/support/write-format-1-snapshots.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lastValueFrom, tap, toArray } from 'rxjs';
import type { ChunkType } from '../../../src/contract/chunk-types.js';
import { encodeJson } from '../../../src/contract/json-codec.js';
import type { ProcessorState } from '../../../src/contract/processor-types.js';
import { createRun } from '../../../src/loop/run/create-run.js';
import { isChunk, isRunEnd } from '../../../src/loop/run/run-events.js';
import { InMemoryStorage } from '../../../src/storage/in-memory-storage.js';
import { snapshotOf, tellCommitPoints } from '../../support/commit-points.js';
import { FORMAT_1_SCENARIOS, type Format1Fixture } from './format-1-scenarios.js';
import { scenarioAgent, scenarioInput, scenarioOptions, Sequence } from './snapshot-scenario.js';

const fixture: Format1Fixture = { runs: [] };
for (const scenario of FORMAT_1_SCENARIOS) {
  const ids = new Sequence();
  const states: Record<string, ProcessorState> = {};
  const storage = new InMemoryStorage();
  const chunks: ChunkType[] = [];
  const points: Format1Fixture['runs'][number]['points'] = [];
  const items = await lastValueFrom(
    createRun(scenarioAgent(scenario, ids, (id, state) => (states[id] = structuredClone(state)), storage), scenarioInput, scenarioOptions(scenario), { commitPoints: true }).pipe(
      tellCommitPoints((point) => {
        points.push({ kind: point.kind, at: chunks.length, idNext: ids.next, snapshot: JSON.parse(JSON.stringify(snapshotOf(point))) as Format1Fixture['runs'][number]['points'][number]['snapshot'] });
      }),
      tap((item) => {
        if (isChunk(item)) chunks.push(item);
      }),
      toArray(),
    ),
  );
  const memory = scenario.memory ? await storage.getMessages({ threadId: 'thread-1' }) : [];
  fixture.runs.push({
    scenario,
    chunks: chunks.map((chunk) => encodeJson(chunk)),
    steps: encodeJson(items.find(isRunEnd)?.steps ?? []),
    memory: encodeJson(memory),
    states: encodeJson(states),
    points,
  });
}
writeFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'run-snapshots', 'format-1.json'), `${JSON.stringify(fixture, null, 1)}\n`);
