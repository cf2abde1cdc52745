/**
 * The other process of the run-snapshot property: restores each case's snapshot into a fresh run
 * of the same scenario and writes what that run did (its chunks, steps, memory, processor states).
 *
 *   node --import tsx test/loop/support/snapshot-child.ts <cases.json> <results.json>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { lastValueFrom, toArray } from 'rxjs';
import { encodeJson } from '../../../src/contract/json-codec.js';
import type { ProcessorState } from '../../../src/contract/processor-types.js';
import { createRun } from '../../../src/loop/run/create-run.js';
import { isChunk, isRunEnd } from '../../../src/loop/run/run-events.js';
import type { RunSnapshot } from '../../../src/loop/data/run-snapshot.js';
import { InMemoryStorage } from '../../../src/storage/in-memory-storage.js';
import { scenarioAgent, scenarioInput, scenarioOptions, Sequence, type SnapshotScenario } from './snapshot-scenario.js';

export interface SnapshotCase {
  scenario: SnapshotScenario;
  snapshot: RunSnapshot;
  /** The id counter when the snapshot was taken. */
  idNext: number;
}

export interface SnapshotCaseResult {
  chunks: string[];
  steps: string;
  memory: string;
  states: string;
}

const [casesPath, resultsPath] = process.argv.slice(2) as [string, string];
const cases = JSON.parse(readFileSync(casesPath, 'utf8')) as SnapshotCase[];
const results: SnapshotCaseResult[] = [];
for (const { scenario, snapshot, idNext } of cases) {
  const states: Record<string, ProcessorState> = {};
  const storage = new InMemoryStorage();
  const config = scenarioAgent(scenario, new Sequence(idNext), (id, state) => (states[id] = structuredClone(state)), storage);
  const items = await lastValueFrom(createRun(config, scenarioInput, scenarioOptions(scenario), { restore: snapshot }).pipe(toArray()));
  const end = items.find(isRunEnd);
  const memory = scenario.memory ? await storage.getMessages({ threadId: 'thread-1' }) : [];
  results.push({
    chunks: items.filter(isChunk).map((chunk) => encodeJson(chunk)),
    steps: encodeJson(end?.steps ?? []),
    memory: encodeJson(memory),
    states: encodeJson(states),
  });
}
writeFileSync(resultsPath, JSON.stringify(results));
