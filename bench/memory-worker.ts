/**
 * Memory workload, one implementation per process (so peak RSS is its own):
 * `streams` concurrent `stream()` runs of `chunks` text deltas through `processors` pass-through
 * `processOutputStream` processors. Each consumer reads half its chunks and waits; when every run
 * is in flight (and the process is quiet), a full GC, then `heapUsed` (+ external and array
 * buffers) minus the baseline, per stream. Then the consumers finish. Prints one JSON line.
 *
 * Usage: node --expose-gc --import tsx bench/memory-worker.ts <rxagent|reference|ai-sdk> <streams> <chunks> <processors>
 */
import { minimalModel, textAnswerParts, type MinimalModel } from './minimal-model.js';
import { outputStreamProcessors } from './lib/processors.js';
import { aiSdkSubject } from './lib/ai-sdk-subject.js';
import { rxagentSubject } from './lib/rxagent-subject.js';
import { loadReferenceSubject } from './lib/reference-subject.js';
import { collectGarbage } from './lib/stats.js';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import type { BenchSubject } from './lib/subject.js';

/** What the worker reports. */
export interface MemoryReport {
  subject: string;
  streams: number;
  chunks: number;
  processors: number;
  /** Objects only: code and bytecode compiled meanwhile are `codeBytes` (see `CODE_SPACES`). */
  liveBytesPerStream: number;
  /** Growth of the code spaces between the baseline and the measurement, for the whole process. */
  codeBytes: number;
  /** parts pulled from the model but not yet read by the paused consumer, mean per stream */
  bufferedPerStream: number;
  peakRssBytes: number;
  baselineRssBytes: number;
  node: string;
}

/**
 * The heap spaces that hold compiled code and bytecode (V8's code and trusted spaces), never the
 * objects a run holds. After the warm-up, the full GCs before the baseline flush bytecode of
 * functions idle since, which the measured phase compiles again: ≈ 235 KB however many streams
 * (1.2 KB "per stream" at 200), so it is reported on its own, not per stream.
 */
const CODE_SPACES = new Set(['code_space', 'code_large_object_space', 'trusted_space', 'trusted_large_object_space']);

function codeBytes(): number {
  let bytes = 0;
  for (const space of getHeapSpaceStatistics()) if (CODE_SPACES.has(space.space_name)) bytes += space.space_used_size;
  return bytes;
}

/** Live bytes of objects: the heap without its code spaces, plus external memory and array buffers. */
function liveBytes(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed - codeBytes() + usage.external + usage.arrayBuffers;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const [subjectName = 'rxagent', streamsArg = '1000', chunksArg = '200', processorsArg = '5'] = process.argv.slice(2);
  const streams = Number(streamsArg);
  const chunks = Number(chunksArg);
  const processorCount = Number(processorsArg);
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') throw new Error('memory-worker needs --expose-gc');
  const subject: BenchSubject = subjectName === 'reference' ? await loadReferenceSubject() : subjectName === 'ai-sdk' ? aiSdkSubject : rxagentSubject;

  // warm up until the hot functions are optimised, so compiled code is not counted as per-stream
  // memory: with 3 warm-up streams the heap diff still held ~2.6 KB/stream of code compiled during
  // the measured phase (bench/heap-diff.ts, 'code' rows); 50 leave none of it
  for (let warm = 0; warm < 50; warm++) {
    const agent = subject.agent({ model: minimalModel(() => textAnswerParts(chunks)), outputProcessors: outputStreamProcessors(processorCount, 'sync') });
    const reader = (await agent.stream('Hello')).getReader();
    while (!(await reader.read()).done);
  }

  const parts = textAnswerParts(chunks);
  const models: MinimalModel[] = Array.from({ length: streams }, () => minimalModel(() => parts));
  const agents = models.map((model) => subject.agent({ model, outputProcessors: outputStreamProcessors(processorCount, 'sync') }));
  const hold = Math.floor(chunks / 2);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let waiting = 0;
  let allWaiting!: () => void;
  const everyoneWaiting = new Promise<void>((resolve) => {
    allWaiting = resolve;
  });
  const received = new Array<number>(streams).fill(0);

  collectGarbage();
  await pause(20);
  collectGarbage();
  const baseline = liveBytes();
  const baselineCode = codeBytes();
  /** `RXAGENT_BENCH_HEAPSNAPSHOT=PREFIX`: heap snapshots at the baseline and with every run in flight (PREFIX-base/-live.heapsnapshot). */
  const snapshot = process.env.RXAGENT_BENCH_HEAPSNAPSHOT || undefined;
  if (snapshot !== undefined) writeHeapSnapshot(`${snapshot}-base.heapsnapshot`);
  const baselineRss = process.memoryUsage().rss;
  let peakRss = baselineRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 5);

  const consumers = agents.map(async (agent, index) => {
    const reader = (await agent.stream('Hello')).getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) return;
      received[index] = (received[index] as number) + 1;
      if (received[index] === hold) {
        if (++waiting === streams) allWaiting();
        await gate;
      }
    }
  });
  await everyoneWaiting;
  // let eager implementations read ahead as far as they go
  let pulled = -1;
  for (;;) {
    await pause(50);
    const now = models.reduce((sum, model) => sum + model.stats.pulled, 0);
    if (now === pulled) break;
    pulled = now;
  }
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  collectGarbage();
  const live = liveBytes() - baseline;
  const code = codeBytes() - baselineCode;
  if (snapshot !== undefined) writeHeapSnapshot(`${snapshot}-live.heapsnapshot`);
  const buffered = models.reduce((sum, model, index) => sum + model.stats.pulled - (received[index] as number), 0) / streams;
  release();
  await Promise.all(consumers);
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  const report: MemoryReport = {
    subject: subject.name,
    streams,
    chunks,
    processors: processorCount,
    liveBytesPerStream: live / streams,
    codeBytes: code,
    bufferedPerStream: buffered,
    peakRssBytes: peakRss,
    baselineRssBytes: baselineRss,
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
