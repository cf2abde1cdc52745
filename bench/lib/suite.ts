/**
 * The workloads. A workload configuration is a row: `prepare(subject)` builds the agent (untimed)
 * and returns the timed action; a runner times it (wall clock and process CPU time) and divides
 * by the row's unit count (chunks, calls, steps). `runSuite` drives runners — in this process or
 * in worker processes — through every row, repetition after repetition, alternating their order
 * (A/B, then B/A), so drift and noise hit all alike.
 */
import { minimalModel, textAnswerParts, toolLoopScript, type MinimalModel } from '../minimal-model.js';
import { forAwaitFloor, forAwaitSyncFloor, syncMapFloor } from './floors.js';
import { inputProcessors, outputStreamProcessors, stepProcessors } from './processors.js';
import { now, Samples, settle } from './stats.js';
import { drain, type BenchSubject } from './subject.js';

/** Sizes of a run of the suite. */
export interface SuiteProfile {
  name: 'check' | 'quick' | 'full';
  /** text-delta chunks per streamed answer */
  chunks: number;
  /** measured repetitions (after `warmup` unmeasured ones) */
  reps: number;
  warmup: number;
  streamKs: number[];
  /** sequential `generate()` calls per sample */
  generateCalls: number;
  /**
   * Before the first sample of a per-call row (generate, tool loop) in a process: that row's action
   * again and again, untimed, until this many calls (steps) or this many ms. A sample of a few
   * dozen calls otherwise measures V8 compiling the run (20,000 calls bring a `generate()` to its
   * steady cost on a 2-core machine; 3,000 do not: bench/README.md).
   */
  warmUp: { calls: number; ms: number };
  /** tool steps before the answer */
  toolSteps: number;
  /** chunks read by the one-chunk-per-millisecond consumer */
  slowChunks: number;
  memory: { streams: number; chunks: number; processors: number };
}

export const profiles: Record<SuiteProfile['name'], SuiteProfile> = {
  check: { name: 'check', chunks: 200, reps: 1, warmup: 0, streamKs: [0, 1, 5, 10], generateCalls: 2, warmUp: { calls: 0, ms: 0 }, toolSteps: 3, slowChunks: 20, memory: { streams: 10, chunks: 40, processors: 5 } },
  quick: { name: 'quick', chunks: 5_000, reps: 5, warmup: 1, streamKs: [0, 1, 5, 10], generateCalls: 30, warmUp: { calls: 20_000, ms: 2_000 }, toolSteps: 20, slowChunks: 200, memory: { streams: 200, chunks: 200, processors: 5 } },
  full: { name: 'full', chunks: 20_000, reps: 7, warmup: 1, streamKs: [0, 1, 5, 10], generateCalls: 50, warmUp: { calls: 20_000, ms: 4_000 }, toolSteps: 20, slowChunks: 1_000, memory: { streams: 1_000, chunks: 200, processors: 5 } },
};

/** Row names. */
export const rowName = {
  stream: (k: number, variant: 'sync' | 'async') => `stream() fullStream, K=${k} ${variant} (µs/chunk)`,
  stream$: (k: number, variant: 'sync' | 'async') => `stream$(), K=${k} ${variant} (µs/chunk)`,
  generate: (k: number) => `generate(), K=${k} processInput (ms/call)`,
  toolLoop: (k: number) => `tool loop, K=${k} step processors (ms/step)`,
  floorMap: (stages: number) => `floor: sync RxJS map ×${stages} (µs/chunk)`,
  floorAwait: (stages: number) => `floor: for await + async fn ×${stages} (µs/chunk)`,
  floorAwaitSync: (stages: number) => `floor: for await + sync fn ×${stages} (µs/chunk)`,
  sliceSync: 'marginal sync processor (µs/processor/chunk)',
  sliceAsync: 'marginal async processor (µs/processor/chunk)',
  generatePerProcessor: 'generate() per processInput processor (ms)',
  toolPerProcessor: 'tool loop per processor per step (ms)',
};

/** One row of the suite. */
export interface Workload {
  row: string;
  /** who measures it: a subject name, `'*'` for every subject, `'floor'` for the floors */
  by: string;
  unit: 'µs' | 'ms';
  /** chunks, calls or steps the timed action covers */
  count: number;
  /** builds what the action needs (untimed) and returns the timed action */
  prepare(subject: BenchSubject | undefined): () => Promise<void>;
  /** per-call rows: warmed up before their first sample in a process (see {@link SuiteProfile.warmUp}) */
  warmUp?: SuiteProfile['warmUp'];
}

/** Every row of `profile`, in order. */
export function workloads(profile: SuiteProfile): Workload[] {
  const answer = textAnswerParts(profile.chunks);
  const oneChunk = textAnswerParts(1);
  const list: Workload[] = [];
  const expectChunks = (name: string, count: number) => {
    if (count < profile.chunks) throw new Error(`${name}: ${count} chunks, expected ≥ ${profile.chunks}`);
  };
  for (const variant of ['sync', 'async'] as const) {
    for (const k of profile.streamKs) {
      if (variant === 'async' && k === 0) continue;
      list.push({
        row: rowName.stream(k, variant),
        by: '*',
        unit: 'µs',
        count: profile.chunks,
        prepare: (subject) => {
          const agent = (subject as BenchSubject).agent({ model: minimalModel(() => answer), outputProcessors: outputStreamProcessors(k, variant) });
          return async () => expectChunks((subject as BenchSubject).name, await drain(await agent.stream('Hello')));
        },
      });
      list.push({
        row: rowName.stream$(k, variant),
        by: 'rxagent',
        unit: 'µs',
        count: profile.chunks,
        prepare: (subject) => {
          const agent = (subject as BenchSubject).agent({ model: minimalModel(() => answer), outputProcessors: outputStreamProcessors(k, variant) });
          const stream$ = agent.stream$ as NonNullable<typeof agent.stream$>;
          return async () => expectChunks('rxagent', await stream$('Hello'));
        },
      });
    }
  }
  for (const k of [0, 10]) {
    list.push({
      row: rowName.generate(k),
      by: '*',
      unit: 'ms',
      count: profile.generateCalls,
      warmUp: profile.warmUp,
      prepare: (subject) => {
        const agent = (subject as BenchSubject).agent({ model: minimalModel(() => oneChunk), inputProcessors: inputProcessors(k) });
        return async () => {
          for (let call = 0; call < profile.generateCalls; call++) {
            const text = await agent.generate('Hello');
            if (text !== 'x') throw new Error(`${(subject as BenchSubject).name}: generate() returned ${JSON.stringify(text)}`);
          }
        };
      },
    });
  }
  const script = toolLoopScript(profile.toolSteps);
  for (const k of [0, 5]) {
    list.push({
      row: rowName.toolLoop(k),
      by: '*',
      unit: 'ms',
      count: profile.toolSteps + 1,
      warmUp: profile.warmUp,
      prepare: (subject) => {
        const processors = stepProcessors(k);
        const model = minimalModel(script);
        const agent = (subject as BenchSubject).agent({ model, inputProcessors: processors, outputProcessors: processors, tools: true });
        return async () => {
          const text = await agent.generate('Hello', profile.toolSteps + 5);
          if (text !== 'x' || model.stats.calls !== profile.toolSteps + 1) {
            throw new Error(`${(subject as BenchSubject).name}: tool loop made ${model.stats.calls} calls, text ${JSON.stringify(text)}`);
          }
        };
      },
    });
  }
  for (const stages of [0, 1, 5, 10]) {
    list.push({ row: rowName.floorMap(stages), by: 'floor', unit: 'µs', count: answer.length, prepare: () => () => syncMapFloor(answer, stages) });
    list.push({
      row: rowName.floorAwait(stages),
      by: 'floor',
      unit: 'µs',
      count: answer.length,
      prepare: () => {
        const model = minimalModel(() => answer);
        return () => forAwaitFloor(model, stages);
      },
    });
    list.push({
      row: rowName.floorAwaitSync(stages),
      by: 'floor',
      unit: 'µs',
      count: answer.length,
      prepare: () => {
        const model = minimalModel(() => answer);
        return () => forAwaitSyncFloor(model, stages);
      },
    });
  }
  return list;
}

/** Rows warmed up in this process, by subject and row. */
const warmed = new Set<string>();

/** A per-call row's untimed warm-up, once per process and subject (see {@link SuiteProfile.warmUp}). */
async function warmUpOnce(workload: Workload, subject: BenchSubject | undefined): Promise<void> {
  const key = `${subject?.name ?? 'floor'}\u0000${workload.row}`;
  if (workload.warmUp === undefined || warmed.has(key)) return;
  warmed.add(key);
  const started = now();
  for (let units = 0; units < workload.warmUp.calls && now() - started < workload.warmUp.ms; units += workload.count) {
    await workload.prepare(subject)();
  }
}

/** One timing: per unit, wall clock and process CPU time. */
export interface Timing {
  wall: number;
  cpu: number;
}

/**
 * Times one row on `subject`. No forced GC before a sample: a full `gc()` makes V8 drop compiled
 * code, and the next sample then measures warm-up again (3–10× slower here); GC that the workload
 * itself causes is part of its cost.
 */
export async function timeWorkload(workload: Workload, subject: BenchSubject | undefined): Promise<Timing> {
  await warmUpOnce(workload, subject);
  const action = workload.prepare(subject);
  await settle();
  const cpuStart = process.cpuUsage();
  const wallStart = now();
  await action();
  const wallMs = now() - wallStart;
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const scale = workload.unit === 'µs' ? 1000 : 1;
  return { wall: (wallMs * scale) / workload.count, cpu: (cpuMs * scale) / workload.count };
}

/** Something that measures rows: an in-process subject, a worker process, or the floors. */
export interface Runner {
  readonly name: string;
  measures(workload: Workload): boolean;
  measure(workload: Workload): Promise<Timing>;
  close?(): void;
}

/** A runner in this process. */
export function localRunner(subject: BenchSubject | undefined, name = subject?.name ?? 'floor'): Runner {
  return {
    name,
    measures: (workload) => workload.by === name || (workload.by === '*' && subject !== undefined),
    measure: (workload) => timeWorkload(workload, subject),
  };
}

/** Samples of both metrics. */
export interface SuiteSamples {
  wall: Samples;
  cpu: Samples;
}

/** Runs every row `profile.warmup + profile.reps` times on every runner, interleaved. */
export async function runSuite(runners: readonly Runner[], profile: SuiteProfile, log: (line: string) => void = () => undefined): Promise<SuiteSamples> {
  const samples: SuiteSamples = { wall: new Samples(), cpu: new Samples() };
  const list = workloads(profile);
  const total = profile.warmup + profile.reps;
  for (let rep = 0; rep < total; rep++) {
    const measured = rep >= profile.warmup;
    const started = now();
    for (const [index, workload] of list.entries()) {
      const eligible = runners.filter((runner) => runner.measures(workload));
      const ordered = (rep + index) % 2 === 0 ? eligible : [...eligible].reverse();
      for (const runner of ordered) {
        if (process.env.BENCH_TRACE) log(`  ${runner.name}: ${workload.row}`);
        const timing = await runner.measure(workload);
        if (!measured) continue;
        samples.wall.add(runner.name, workload.row, timing.wall);
        samples.cpu.add(runner.name, workload.row, timing.cpu);
      }
    }
    log(`rep ${rep + 1}/${total}${measured ? '' : ' (warm-up)'} in ${((now() - started) / 1000).toFixed(1)} s`);
  }
  for (const metric of [samples.wall, samples.cpu]) {
    for (const runner of runners) derive(metric, runner.name, profile);
  }
  return samples;
}

/** Per-repetition derived figures (slopes), so their medians come from matched samples. */
function derive(samples: Samples, name: string, profile: SuiteProfile): void {
  const ks = profile.streamKs;
  const low = Math.min(...ks.filter((k) => k > 0));
  const high = Math.max(...ks);
  const pairs: Array<[string, string, string, number]> = [
    [rowName.sliceSync, rowName.stream(low, 'sync'), rowName.stream(high, 'sync'), high - low],
    [rowName.sliceAsync, rowName.stream(low, 'async'), rowName.stream(high, 'async'), high - low],
    [rowName.generatePerProcessor, rowName.generate(0), rowName.generate(10), 10],
    [rowName.toolPerProcessor, rowName.toolLoop(0), rowName.toolLoop(5), 5],
  ];
  for (const [row, from, to, span] of pairs) {
    const a = samples.get(name, from);
    const b = samples.get(name, to);
    for (let index = 0; index < Math.min(a.length, b.length); index++) {
      samples.add(name, row, ((b[index] as number) - (a[index] as number)) / span);
    }
  }
}

/** One streamed run read by a consumer that takes one chunk per millisecond. */
export async function slowConsumer(subject: BenchSubject, chunks: number, processors: 'none' | 'async'): Promise<{ maxBuffered: number; received: number }> {
  const model: MinimalModel = minimalModel(() => textAnswerParts(chunks));
  const agent = subject.agent({ model, outputProcessors: processors === 'none' ? [] : outputStreamProcessors(1, 'async') });
  const reader = (await agent.stream('Hello')).getReader();
  let received = 0;
  let maxBuffered = 0;
  for (;;) {
    const { done } = await reader.read();
    if (done) break;
    received++;
    // parts the model handed out that the consumer has not got yet (stream-start and finish
    // become no chunk of their own, start and step-start have no part: about ±2)
    maxBuffered = Math.max(maxBuffered, model.stats.pulled - received);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return { maxBuffered, received };
}
