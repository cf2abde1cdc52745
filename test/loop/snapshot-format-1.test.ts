/**
 * `RUN_SNAPSHOT_FORMAT` 1 stays readable: snapshots written by main at fdbc9ee (every commit point
 * of two runs, `test/fixtures/run-snapshots/format-1.json`, see `support/write-format-1-snapshots.ts`)
 * restore here and go on exactly as the run they were taken from — the same chunks, steps, memory
 * and processor states.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { encodeJson } from '../../src/contract/json-codec.js';
import type { ProcessorState } from '../../src/contract/processor-types.js';
import { createRun } from '../../src/loop/run/create-run.js';
import { isChunk, isRunEnd } from '../../src/loop/run/run-events.js';
import { RUN_SNAPSHOT_FORMAT } from '../../src/loop/data/run-snapshot.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import type { Format1Fixture } from './support/format-1-scenarios.js';
import { scenarioAgent, scenarioInput, scenarioOptions, Sequence } from './support/snapshot-scenario.js';

const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'run-snapshots', 'format-1.json'), 'utf8')) as Format1Fixture;

describe('run snapshots of format 1 written by main', () => {
  it('the fixture holds every part of the state (so the restores below check them)', () => {
    const snapshots = fixture.runs.flatMap((run) => run.points.map((point) => point.snapshot));
    expect(RUN_SNAPSHOT_FORMAT).toBe(1);
    expect(snapshots.every((snapshot) => snapshot.format === 1)).toBe(true);
    expect(snapshots.some((snapshot) => snapshot.customChunks.length > 0)).toBe(true);
    expect(snapshots.some((snapshot) => (snapshot.streamParts as { own?: unknown[] } | null)?.own?.some((log) => log !== null) === true)).toBe(true);
    expect(snapshots.some((snapshot) => snapshot.requestContext.values.length > 2)).toBe(true);
    expect(new Set(snapshots.map((snapshot) => snapshot.next.kind))).toEqual(new Set(['step', 'tools', 'commit']));
    expect(fixture.runs.flatMap((run) => run.points.map((point) => point.kind))).toContain('rejected');
  });

  for (const [index, run] of fixture.runs.entries()) {
    for (const point of run.points) {
      it(`run ${index}, ${point.kind} commit at chunk ${point.at}: restored, it goes on as the uninterrupted run`, async () => {
        const states: Record<string, ProcessorState> = {};
        const storage = new InMemoryStorage();
        const config = scenarioAgent(run.scenario, new Sequence(point.idNext), (id, state) => (states[id] = structuredClone(state)), storage);
        const items = await lastValueFrom(createRun(config, scenarioInput, scenarioOptions(run.scenario), { restore: structuredClone(point.snapshot) }).pipe(toArray()));
        const chunks = items.filter(isChunk).map((chunk) => encodeJson(chunk));
        // the restored run's own `start`, then the rest of the uninterrupted run
        expect([...run.chunks.slice(0, point.at), ...chunks.slice(1)]).toEqual(run.chunks);
        expect(encodeJson(items.find(isRunEnd)?.steps ?? [])).toBe(run.steps);
        expect(encodeJson(run.scenario.memory ? await storage.getMessages({ threadId: 'thread-1' }) : [])).toBe(run.memory);
        expect(encodeJson(states)).toBe(run.states);
      });
    }
  }
});
