/**
 * What OpenTelemetry costs an rxagent run, per chunk: `npx tsx bench/telemetry-overhead.ts`.
 *
 * One agent (an input processor, two output processors) on a mock model streaming DELTAS text
 * deltas, run ROUNDS times per configuration (configurations interleaved, after a warm-up):
 *
 * - baseline: `agent.stream$(input)`, no tracing context;
 * - no tracer registered: `createRunTelemetry()` with no global provider — spans are
 *   non-recording, so `onHook` is never set and the operator passes chunks through;
 * - `onHook` set (no-op): the hook path's own cost (timing + event per hook call);
 * - SDK tracer (aggregate): a real `BasicTracerProvider` (spans built, nothing exported), one
 *   `processOutputStream` span per processor and step;
 * - SDK tracer (each): one span per `processOutputStream` call.
 *
 * Prints the median nanoseconds per chunk and the difference to the baseline. Not a test: run it
 * by hand (numbers depend on the machine). tsx compiles with esbuild's `keepNames`, which makes
 * every closure creation cost a `defineProperty`; the traced rows therefore overstate what the
 * built package costs (there, a traced hook call is dominated by its two `performance.now()`).
 */
import { BasicTracerProvider, NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { lastValueFrom, type Observable } from 'rxjs';
import { createRunTelemetry } from '../src/ai-sdk/telemetry.js';
import { Agent } from '../src/loop/agent.js';
import type { ChunkType } from '../src/contract/chunk-types.js';
import type { Processor } from '../src/contract/processor-types.js';
import type { TracingContext } from '../src/contract/tracing-context.js';
import { mockModel } from '../src/testing/mock-model.js';
import { finishPart } from '../src/testing/model-parts.js';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';

const DELTAS = Number(process.env.DELTAS ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 40);
const WARMUP = 8;

const parts: LanguageModelV4StreamPart[] = [
  { type: 'text-start', id: 't' },
  ...Array.from({ length: DELTAS }, (_, index): LanguageModelV4StreamPart => ({ type: 'text-delta', id: 't', delta: `w${index} ` })),
  { type: 'text-end', id: 't' },
  finishPart('stop'),
];

const counter: Processor = { id: 'counter', processOutputStream: ({ part, state }) => ((state.n = ((state.n as number | undefined) ?? 0) + 1), part) };
const shout: Processor = {
  id: 'shout',
  processOutputStream: ({ part }) =>
    part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part,
};
const inputCheck: Processor = { id: 'input-check', processInput: ({ messages }) => messages };

const agent = new Agent({ id: 'bench', model: mockModel({ parts }), inputProcessors: [inputCheck], outputProcessors: [counter, shout] });

const sdkTracer = new BasicTracerProvider({ spanProcessors: [new NoopSpanProcessor()] }).getTracer('bench');

type Config = { name: string; run: () => Observable<ChunkType> };
const configs: Config[] = [
  { name: 'baseline (no tracing context)', run: () => agent.stream$('go') },
  {
    name: 'telemetry, no tracer registered',
    run: () => {
      const telemetry = createRunTelemetry();
      return agent.stream$('go', { tracingContext: telemetry.tracingContext }).pipe(telemetry.operator);
    },
  },
  {
    name: 'onHook set (no-op)',
    run: () => {
      const tracingContext: TracingContext = { onHook: () => undefined };
      return agent.stream$('go', { tracingContext });
    },
  },
  {
    name: 'SDK tracer, aggregate stream spans',
    run: () => {
      const telemetry = createRunTelemetry({ tracer: sdkTracer });
      return agent.stream$('go', { tracingContext: telemetry.tracingContext }).pipe(telemetry.operator);
    },
  },
  {
    name: 'SDK tracer, a span per stream hook call',
    run: () => {
      const telemetry = createRunTelemetry({ tracer: sdkTracer, streamHookSpans: 'each' });
      return agent.stream$('go', { tracingContext: telemetry.tracingContext }).pipe(telemetry.operator);
    },
  },
];

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

async function main(): Promise<void> {
  let perRun = 0;
  await new Promise<void>((resolve) => agent.stream$('go').subscribe({ next: () => void perRun++, complete: resolve }));
  const samples = new Map<string, number[]>(configs.map((config) => [config.name, []]));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    // Rotate the order every round, so no configuration always runs first (or after the same one).
    for (let offset = 0; offset < configs.length; offset++) {
      const config = configs[(round + offset) % configs.length] as Config;
      const start = process.hrtime.bigint();
      await lastValueFrom(config.run(), { defaultValue: undefined });
      const ns = Number(process.hrtime.bigint() - start);
      if (round >= WARMUP) samples.get(config.name)?.push(ns / perRun);
    }
  }
  const baseline = median(samples.get(configs[0]?.name ?? '') ?? []);
  console.log(`rxagent telemetry overhead — Node ${process.version}, ${perRun} chunks per run (${DELTAS} deltas), ${ROUNDS} runs per configuration\n`);
  console.log('| configuration | median ns/chunk | vs baseline |');
  console.log('|---|---:|---:|');
  for (const config of configs) {
    const value = median(samples.get(config.name) ?? []);
    const diff = value - baseline;
    const relative = config === configs[0] ? '—' : `${diff >= 0 ? '+' : ''}${diff.toFixed(0)} ns (${((diff / baseline) * 100).toFixed(1)}%)`;
    console.log(`| ${config.name} | ${value.toFixed(0)} | ${relative} |`);
  }
}

await main();
