/**
 * Restoring a run from a malformed snapshot (a journal row written by an older build, edited by
 * hand, cut short, of another format): real snapshots of scripted runs, mutated — each field
 * dropped or set to every JSON kind, bad step numbers and positions, `__proto__` keys, deep
 * nesting. A restore either goes on as a run or is refused with a `RunSnapshotError` naming the
 * path that is wrong, before the model is called; never an untyped error, a hang, or a polluted
 * `Object.prototype`. And the snapshot is the run's state alone: taken twice, or restored from its
 * JSON and taken again, it is the same value.
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` mutations per property (default 60).
 */
import fc from 'fast-check';
import { lastValueFrom, timeout, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import type { StepInput } from '../../src/operators/process-input-step.js';
import { createRun } from '../../src/loop/run/create-run.js';
import { isChunk, isRunEnd } from '../../src/loop/run/run-events.js';
import { RunSnapshotError } from '../../src/loop/data/run-snapshot-error.js';
import { restoreRun, snapshotRun, type RunSnapshot } from '../../src/loop/data/run-snapshot.js';
import type { RunSources } from '../../src/loop/data/run-sources.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { scenarioAgent, scenarioInput, scenarioOptions, Sequence, type SnapshotScenario } from './support/snapshot-scenario.js';
import { snapshotOf, tellCommitPoints } from '../support/commit-points.js';

const runs = Number(process.env['RXAGENT_PROPERTY_RUNS'] ?? 60);
const seedSetting = process.env['RXAGENT_PROPERTY_SEED'];
const seed = seedSetting === undefined ? 20261207 : seedSetting === 'random' ? Date.now() | 0 : Number(seedSetting);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = ReadonlyArray<string | number>;

/** Every part of a run snapshot: tools, a tripwire retry, a signal, request-context writes, output processors, memory. */
const rich: SnapshotScenario = {
  toolSteps: 2,
  answerWords: 2,
  memory: true,
  maxProcessorRetries: 1,
  processors: [
    { id: 'p0', input: true, output: true, rewrite: 'upper', retryOnce: true, signal: true, writeContext: true },
    { id: 'p1', input: false, output: true, rewrite: 'drop-second-delta', retryOnce: false, signal: false, writeContext: false },
  ],
};
/** The same run without memory (its processors are the scenario's alone). */
const plain: SnapshotScenario = { ...rich, memory: false };

interface Point {
  scenario: SnapshotScenario;
  snapshot: RunSnapshot;
  idNext: number;
}

async function pointsOf(scenario: SnapshotScenario): Promise<Point[]> {
  const ids = new Sequence();
  const points: Point[] = [];
  await lastValueFrom(
    createRun(scenarioAgent(scenario, ids, () => {}, new InMemoryStorage()), scenarioInput, scenarioOptions(scenario), { commitPoints: true }).pipe(
      tellCommitPoints((point) => void points.push({ scenario, snapshot: JSON.parse(JSON.stringify(snapshotOf(point))) as RunSnapshot, idNext: ids.next })),
      toArray(),
    ),
  );
  return points;
}

const points = [...(await pointsOf(rich)), ...(await pointsOf(plain))];

/** A scenario's processors without memory (the snapshot's own), as `restoreRun` gets them. */
function processorsOf(point: Point): Processor[] {
  const config = scenarioAgent(point.scenario, new Sequence(point.idNext), () => {}, new InMemoryStorage());
  return [...((config.inputProcessors ?? []) as Processor[]), ...((config.outputProcessors ?? []) as Processor[])];
}

function sourcesOf(point: Point): RunSources {
  const ids = new Sequence(point.idNext);
  const config = scenarioAgent(point.scenario, ids, () => {}, new InMemoryStorage());
  const inputProcessors = (config.inputProcessors ?? []) as Processor[];
  const outputProcessors = (config.outputProcessors ?? []) as Processor[];
  return {
    inputProcessors,
    outputProcessors,
    apiErrorProcessors: [...inputProcessors, ...outputProcessors],
    generateId: ids.generateId,
    now: ids.now,
    stepDefaults: { model: config.model as StepInput['model'], tools: config.tools as StepInput['tools'] },
  };
}

/** How a restored run went: refused (a `RunSnapshotError`), on to its terminal chunk, or something else. */
type Outcome = { kind: 'refused'; message: string } | { kind: 'ran'; last: ChunkType | undefined; modelCalls: number } | { kind: 'broken'; what: string };

async function restored(point: Point, snapshot: unknown): Promise<Outcome> {
  const config = scenarioAgent(point.scenario, new Sequence(point.idNext), () => {}, new InMemoryStorage());
  try {
    const items = await lastValueFrom(createRun(config, scenarioInput, scenarioOptions(point.scenario), { restore: snapshot as RunSnapshot }).pipe(toArray(), timeout(5_000)));
    const last = items.filter(isChunk).at(-1);
    if (last?.type === 'error') {
      const error = last.payload.error as { name?: string; message?: string };
      if (RunSnapshotError.isInstance(error)) return { kind: 'refused', message: String(error.message) };
      return { kind: 'broken', what: `${String(error.name)}: ${String(error.message)}` };
    }
    return { kind: 'ran', last, modelCalls: (config.model as unknown as { calls: unknown[] }).calls.length };
  } catch (error) {
    return { kind: 'broken', what: `thrown ${String(error)}` };
  }
}

/** `path` as the error names it (`$.steps[0].usage`, `$.processorStates["message-history"]`). */
function jsonPath(path: Path): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${text}.${key}` : `${text}[${JSON.stringify(key)}]`), '$');
}

/** Every path of `value` (objects and arrays, at most `limit` array items each). */
function pathsOf(value: Json, limit = 3, prefix: Path = []): Path[] {
  const children: Array<[string | number, Json]> = Array.isArray(value)
    ? value.slice(0, limit).map((item, index): [number, Json] => [index, item])
    : value !== null && typeof value === 'object'
      ? Object.entries(value)
      : [];
  return children.flatMap(([key, child]) => [[...prefix, key], ...pathsOf(child, limit, [...prefix, key])]);
}

/** `snapshot` with the value at `path` replaced (`undefined`: dropped). */
function withValue(snapshot: RunSnapshot, path: Path, value: Json | undefined): Json {
  const copy = structuredClone(snapshot) as unknown as Json;
  let parent = copy as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>;
  const last = path.at(-1) as string | number;
  if (value !== undefined) parent[last] = value;
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete parent[last];
  return copy;
}

const jsonKinds: ReadonlyArray<[string, Json | undefined]> = [
  ['dropped', undefined],
  ['null', null],
  ['a number', -1.5],
  ['a string', 'x'],
  ['an array', []],
  ['an object', {}],
  ['a boolean', true],
];

/** Whether a processor's own state is under `path` (what it holds is the processor's: it may fail on it, by design). */
const insideProcessorState = (path: Path): boolean => path[0] === 'processorStates' && path.length > 2;

/** Fields checked against each other: a change to the first may be named at the second. */
const checkedAgainst: ReadonlyArray<[string, string]> = [
  ['$.steps', '$.next'],
  ['$.streamParts.processors', '$.streamParts.own'],
];

/** Whether `message` names `path`, a path within it, the object it is a field of, or the field it is checked against. */
function namesPath(message: string, path: Path): boolean {
  const named = /at (\$\S*):/.exec(message)?.[1];
  if (named === undefined) return false;
  if (checkedAgainst.some(([changed, at]) => jsonPath(path).startsWith(changed) && named.startsWith(at))) return true;
  // the field itself, within it, or the object it is a field of (a check across its fields)
  const within = jsonPath(path.slice(0, -1));
  return named.startsWith(within) || jsonPath(path).startsWith(named);
}

describe('restoring malformed run snapshots (adversarial property)', () => {
  it('the snapshots mutated below are real ones, and restore as they are', async () => {
    expect(new Set(points.map((point) => point.snapshot.next.kind))).toEqual(new Set(['step', 'tools', 'commit']));
    for (const point of points) expect(await restored(point, structuredClone(point.snapshot))).toMatchObject({ kind: 'ran', last: { type: 'finish' } });
  });

  it(`any field dropped or set to another JSON kind: the run goes on, or is refused naming that field (${runs} mutations, seed ${seed})`, async () => {
    const cases = fc.sample(
      fc.nat({ max: points.length - 1 }).chain((index) => {
        const point = points[index] as Point;
        return fc.tuple(fc.constant(point), fc.constantFrom(...pathsOf(point.snapshot as unknown as Json)), fc.constantFrom(...jsonKinds));
      }),
      { numRuns: runs, seed },
    );
    const problems: string[] = [];
    for (const [point, path, [kind, value]] of cases) {
      const outcome = await restored(point, withValue(point.snapshot, path, value));
      const where = `${jsonPath(path)} ${kind} (at ${point.snapshot.next.kind})`;
      if (outcome.kind === 'refused' && !namesPath(outcome.message, path)) problems.push(`${where}: refused without naming it: ${outcome.message}`);
      if (outcome.kind === 'broken' && !insideProcessorState(path)) problems.push(`${where}: ${outcome.what}`);
    }
    expect(problems.slice(0, 40)).toEqual([]);
  }, 60_000);

  const at = (kind: RunSnapshot['next']['kind']): Point => points.find((point) => point.snapshot.next.kind === kind) as Point;
  const changed = (point: Point, change: (snapshot: Record<string, unknown> & RunSnapshot) => void): unknown => {
    const snapshot = structuredClone(point.snapshot) as Record<string, unknown> & RunSnapshot;
    change(snapshot);
    return snapshot;
  };
  const refusedAt = (path: string) => ({ kind: 'refused', message: expect.stringContaining(`at ${path}:`) as unknown });

  it('a step number that is negative, fractional, huge, not a number or past the steps is refused, naming it', async () => {
    for (const stepNumber of [-1, 0.5, 1e9, Number.MAX_SAFE_INTEGER + 2, '1', null]) {
      for (const point of [at('step'), at('tools')]) {
        const outcome = await restored(point, changed(point, (snapshot) => Object.assign(snapshot.next, { stepNumber })));
        // a tools position's number is checked against its attempt's
        expect(outcome, `${point.snapshot.next.kind} ${String(stepNumber)}`).toMatchObject({ kind: 'refused', message: expect.stringMatching(/at \$\.next\.(attempt\.)?stepNumber:/) as unknown });
      }
    }
    const past = at('step');
    expect(await restored(past, changed(past, (snapshot) => Object.assign(snapshot.next, { stepNumber: snapshot.steps.length + 1 })))).toMatchObject(refusedAt('$.next.stepNumber'));
  });

  it('a position of an unknown kind, or a tools position whose attempt is of another step, is refused, naming it', async () => {
    expect(await restored(at('step'), changed(at('step'), (snapshot) => Object.assign(snapshot.next, { kind: 'later' })))).toMatchObject(refusedAt('$.next.kind'));
    const tools = at('tools');
    expect(await restored(tools, changed(tools, (snapshot) => Object.assign(snapshot.next, { stepNumber: 0, attempt: { ...(snapshot.next as { attempt: object }).attempt, stepNumber: 1 } })))).toMatchObject(
      refusedAt('$.next.attempt.stepNumber'),
    );
    expect(await restored(tools, changed(tools, (snapshot) => Object.assign((snapshot.next as { attempt: object }).attempt, { recorded: 99 })))).toMatchObject(refusedAt('$.next.attempt.recorded'));
  });

  it('a format from the future, or one that never was, is refused before the model is called, naming it', async () => {
    for (const format of [2, 1e9, 0, -1, 0.5, '1', null]) {
      const outcome = await restored(at('step'), changed(at('step'), (snapshot) => void Object.assign(snapshot, { format })));
      expect(outcome, String(format)).toMatchObject({ kind: 'refused', message: expect.stringMatching(/format/) as unknown });
    }
  });

  it('counters that are negative, fractional or not numbers are refused, naming them', async () => {
    for (const field of ['retryCount', 'apiErrorRetryCount'] as const) {
      for (const value of [-1, 0.5, '1', null]) {
        expect(await restored(at('tools'), changed(at('tools'), (snapshot) => void Object.assign(snapshot, { [field]: value }))), `${field} ${String(value)}`).toMatchObject(refusedAt(`$.${field}`));
      }
    }
  });

  it('messages of an unknown role or part type, or of another thread, are refused, naming them', async () => {
    const point = at('tools');
    type Stored = { role: string; threadId?: string; content: { parts: Array<{ type: string }> } };
    const message = (snapshot: RunSnapshot, index: number): Stored => (snapshot.messageList.messages[index] as { message: Stored }).message;
    expect(await restored(point, changed(point, (snapshot) => void (message(snapshot, 0).role = 'wizard')))).toMatchObject(refusedAt('$.messageList.messages[0].message.role'));
    expect(await restored(point, changed(point, (snapshot) => void ((message(snapshot, 0).content.parts[0] as { type: string }).type = 'hologram')))).toMatchObject(
      refusedAt('$.messageList.messages[0].message.content.parts[0].type'),
    );
    expect(await restored(point, changed(point, (snapshot) => void (message(snapshot, 1).threadId = 'thread-2')))).toMatchObject(refusedAt('$.messageList.messages[1].message.threadId'));
  });

  it('a processor state that is not an object is refused, naming the processor; one of a processor the agent lacks is kept', async () => {
    expect(await restored(at('step'), changed(at('step'), (snapshot) => void (snapshot.processorStates['p0'] = 5)))).toMatchObject(refusedAt('$.processorStates.p0'));
    expect(await restored(at('step'), changed(at('step'), (snapshot) => void (snapshot.processorStates['message-history'] = null)))).toMatchObject(refusedAt('$.processorStates["message-history"]'));
    const point = points.find((candidate) => !candidate.scenario.memory && candidate.snapshot.next.kind === 'step') as Point;
    const snapshot = changed(point, (value) => void (value.processorStates['gone'] = { kept: true })) as RunSnapshot;
    const { state, position } = restoreRun(snapshot, sourcesOf(point));
    expect(snapshotRun(state, position, processorsOf(point)).processorStates['gone']).toEqual({ kept: true });
    expect(await restored(point, snapshot)).toMatchObject({ kind: 'ran', last: { type: 'finish' } });
  });

  it('__proto__, constructor and prototype keys anywhere: no Object.prototype pollution, and no state read through a prototype', async () => {
    const keys = ['__proto__', 'constructor', 'prototype'];
    const cases = fc.sample(
      fc.tuple(fc.constantFrom(...points), fc.constantFrom(...keys), fc.nat()).map(([point, key, pick]) => {
        const objects = [[], ...pathsOf(point.snapshot as unknown as Json)].filter((path) => {
          const value = path.reduce<unknown>((object, step) => (object as Record<string | number, unknown>)[step], point.snapshot);
          return value !== null && typeof value === 'object' && !Array.isArray(value);
        });
        return { point, key, path: objects[pick % objects.length] as Path };
      }),
      { numRuns: Math.max(20, Math.floor(runs / 2)), seed },
    );
    for (const { point, key, path } of cases) {
      const text = JSON.stringify(point.snapshot);
      const snapshot = JSON.parse(text) as Record<string, unknown>;
      const target = path.reduce<unknown>((object, step) => (object as Record<string | number, unknown>)[step], snapshot) as Record<string, unknown>;
      Object.assign(target, JSON.parse(`{"${key}": {"polluted": true, "p0": {"inputs": 99}}}`));
      const outcome = await restored(point, snapshot);
      expect(({} as { polluted?: unknown }).polluted, `${jsonPath(path)}.${key}`).toBeUndefined();
      expect(outcome.kind, `${jsonPath(path)}.${key}: ${JSON.stringify(outcome)}`).not.toBe('broken');
    }
    // a processor's state only from its own key: none through `__proto__`
    const point = points.find((candidate) => !candidate.scenario.memory && candidate.snapshot.next.kind === 'step') as Point;
    const snapshot = JSON.parse(JSON.stringify(point.snapshot).replace('"processorStates":{', '"processorStates":{"__proto__":{"p0":{"inputs":99}},')) as RunSnapshot & { processorStates: Record<string, unknown> };
    delete snapshot.processorStates['p0'];
    const outcome = await restored(point, snapshot);
    if (outcome.kind === 'ran') {
      const { state } = restoreRun(snapshot, sourcesOf(point));
      expect(state.processorStates['p0']).toBeUndefined();
    } else expect(outcome).toMatchObject(refusedAt('$.processorStates.__proto__'));
  });

  it('deep nesting anywhere goes on or is refused: never a stack overflow', async () => {
    let deep: Json = 1;
    for (let depth = 0; depth < 20_000; depth++) deep = depth % 2 === 0 ? [deep] : { a: deep };
    for (const point of [at('step'), at('tools'), at('commit')]) {
      for (const path of [['processorStates', 'p0', 'deep'], ['steps', 0, 'deep'], ['requestContext', 'values', 0, 1], ['messageList', 'messages', 0, 'message', 'deep'], ['finish', 'deep']] as Path[]) {
        const parent = path.slice(0, -1).reduce<unknown>((object, step) => (object as Record<string | number, unknown> | null)?.[step], point.snapshot);
        if (parent === null || parent === undefined) continue;
        const outcome = await restored(point, withValue(point.snapshot, path, deep));
        expect(outcome.kind, `${jsonPath(path)} at ${point.snapshot.next.kind}: ${JSON.stringify(outcome).slice(0, 300)}`).not.toBe('broken');
      }
    }
  });

  it('duplicated tool-call ids go on or are refused, never an untyped error', async () => {
    const point = at('tools');
    type Step = { toolCalls: unknown[]; toolResults: unknown[] };
    const outcomes = [
      await restored(point, changed(point, (snapshot) => void (snapshot.steps[0] as Step).toolCalls.push(...(snapshot.steps[0] as Step).toolCalls))),
      await restored(point, changed(point, (snapshot) => {
        const parts = (snapshot.messageList.messages[1] as { message: { content: { parts: unknown[] } } }).message.content.parts;
        parts.push(...parts.slice(1));
      })),
    ];
    for (const outcome of outcomes) expect(outcome.kind, JSON.stringify(outcome)).not.toBe('broken');
  });

  it('the snapshot is the run\'s state alone: taken twice it is the same value, and restored from its JSON it is taken again as it was', () => {
    for (const point of points.filter((candidate) => !candidate.scenario.memory)) {
      const { state, position } = restoreRun(structuredClone(point.snapshot), sourcesOf(point));
      const first = snapshotRun(state, position, processorsOf(point));
      const second = snapshotRun(state, position, processorsOf(point));
      expect(second).toEqual(first);
      expect(JSON.parse(JSON.stringify(first))).toEqual(point.snapshot);
    }
  });
});

describe('a snapshot whose usage counts an earlier build wrote as null (a provider NaN through JSON)', () => {
  it('restores with those counts unknown: the run goes on, and no null reaches the steps or the run’s usage', async () => {
    const point = points.find((candidate) => candidate.snapshot.steps.length > 0 && candidate.snapshot.next.kind === 'step');
    expect(point, 'a commit point after a step').toBeDefined();
    const snapshot = structuredClone((point as Point).snapshot) as unknown as { steps: Array<{ usage: Record<string, unknown> }> };
    const usage = snapshot.steps[0]!.usage;
    usage.inputTokens = null;
    usage.totalTokens = null;
    usage.inputTokenDetails = { noCacheTokens: null, cacheReadTokens: 'x', cacheWriteTokens: 3 };
    const config = scenarioAgent((point as Point).scenario, new Sequence((point as Point).idNext), () => {}, new InMemoryStorage());
    const items = await lastValueFrom(createRun(config, scenarioInput, scenarioOptions((point as Point).scenario), { restore: snapshot as unknown as RunSnapshot }).pipe(toArray(), timeout(5_000)));
    const end = items.find(isRunEnd);
    expect(items.filter(isChunk).at(-1)?.type).toBe('finish');
    expect(end).toBeDefined();
    const restoredUsage = end!.steps[0]!.usage;
    expect(restoredUsage.inputTokens).toBeUndefined();
    expect(restoredUsage.totalTokens).toBeUndefined();
    expect(restoredUsage.inputTokenDetails).toEqual({ noCacheTokens: undefined, cacheReadTokens: undefined, cacheWriteTokens: 3 });
    expect(JSON.stringify(end!.usage)).not.toContain('null');
    expect(JSON.stringify(end!.steps.map((step) => step.usage))).not.toContain('null');
  });
});
