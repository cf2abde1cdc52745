/**
 * Hostile-input rows: every built-in processor over 100 KB inputs built to trigger quadratic
 * scanning or catastrophic backtracking (one repeated character, a growing URL or JWT tail, many
 * rule prefixes, homoglyphs, invisible characters), through `processInput` (one 100 KB message)
 * and through `processOutputStream` (the same text as 16-character deltas, the event loop turning
 * as a run streams it). Reported per processor: the longest synchronous hook call (CPU time, and
 * wall clock, which a loaded machine inflates), the longest
 * event-loop delay meanwhile (async hooks' continuations, and GC), and the total time. Each
 * measurement follows a warm-up run on the same input (code optimised, as in a running server),
 * and is the best of three runs (GC and a loaded machine only ever add time).
 *
 * `src` is a directory with the same layout as `src/` (for before/after figures from another copy).
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

/** One hostile input. */
export interface HostileInput {
  name: string;
  text: string;
}

const SIZE = 100_000;
/** Measured runs per processor, input and path (after one warm-up); the best one is reported. */
const MEASURED_RUNS = 3;
const fill = (unit: string, prefix = '') => prefix + unit.repeat(Math.ceil((SIZE - prefix.length) / unit.length)).slice(0, SIZE - prefix.length);

/** The hostile inputs, 100,000 characters each. */
export const HOSTILE_INPUTS: readonly HostileInput[] = [
  { name: "'a' × 100k", text: fill('a') },
  { name: "'1' × 100k", text: fill('1') },
  { name: "'a@' repeated", text: fill('a@') },
  { name: "'1.' repeated", text: fill('1.') },
  { name: 'growing URL', text: fill('a', 'see https://example.com/') },
  { name: 'growing JWT', text: fill('a', 'token eyJhbGciOiJIUzI1NiJ9.') },
  { name: "'eyJ-' repeated", text: fill('eyJ-') },
  { name: "'sk-' repeated", text: fill('sk-') },
  { name: 'homoglyphs АKIA…', text: fill('АКIA') },
  { name: 'zero-width between letters', text: fill('a\u200b') },
  // encodings the guards decode before matching (issue 24 §1)
  { name: "'&#x200b;a' repeated", text: fill('&#x200b;a') },
  { name: "'%E2%80%8Ba' repeated", text: fill('%E2%80%8Ba') },
  { name: "'\\-a&amp' repeated", text: fill('\\-a&amp') },
];

/** A measured row. */
export interface HostileRow {
  processor: string;
  owner: 'guards' | 'compat';
  path: 'input' | 'stream';
  input: string;
  /** Longest synchronous hook call, CPU time (what it blocks the event loop for on an idle core). */
  stallMs: number;
  /** The same call's wall-clock time (inflated when the machine is loaded). */
  wallMs: number;
  /** Longest event-loop delay seen meanwhile (includes GC; the stall of async hooks' continuations). */
  loopMs: number;
  totalMs: number;
}

type Piped = { pipe(...operators: unknown[]): import('rxjs').Observable<unknown> };
type AnyProcessor = Record<string, unknown> & { id: string };
type Factory = { name: string; owner: 'guards' | 'compat'; make: () => AnyProcessor };

/** Wraps every hook so each synchronous call is timed, CPU and wall clock (the longest is a stall). */
function timed(processor: AnyProcessor, record: (cpuMs: number, wallMs: number) => void): AnyProcessor {
  const proxy: AnyProcessor = Object.create(processor) as AnyProcessor;
  for (const hook of ['processInput', 'processInputStep', 'processOutputStream', 'processOutputResult']) {
    const original = processor[hook];
    if (typeof original !== 'function') continue;
    proxy[hook] = (args: unknown) => {
      const cpu = process.cpuUsage();
      const started = performance.now();
      try {
        return (original as (args: unknown) => unknown).call(processor, args);
      } finally {
        const used = process.cpuUsage(cpu);
        record((used.user + used.system) / 1000, performance.now() - started);
      }
    };
  }
  return proxy;
}

const turn = () => new Promise<void>((done) => setImmediate(done));

/** Measures every factory on every hostile input, input and stream paths. */
export async function measureHostile(
  options: { src?: string; only?: 'guards' | 'all'; deltaSize?: number; log?: (line: string) => void } = {},
): Promise<HostileRow[]> {
  const deltaSize = options.deltaSize ?? 16;
  const base = options.src === undefined ? new URL('../../src/', import.meta.url).href : `${pathToFileURL(resolve(options.src)).href}/`;
  const load = async <T>(path: string) => (await import(new URL(path, base).href)) as T;
  const processors = await load<Record<string, new (options: unknown) => AnyProcessor>>('processors/index.ts');
  const { MessageList } = await load<{ MessageList: new () => { add(messages: unknown, source: string): void } }>('message-list/message-list.ts');
  const operators = await load<Record<string, (...args: unknown[]) => unknown>>('operators/index.ts');
  const { mockModel } = await load<{ mockModel: (options: unknown) => unknown }>('testing/mock-model.ts');
  const parts = await load<{ textParts: (text: string) => unknown[]; finishPart: () => unknown }>('testing/model-parts.ts');
  const { chunk } = await load<{ chunk: { textStart(id?: string): unknown; textDelta(text: string, id?: string): unknown; textEnd(id?: string): unknown; finish(): unknown } }>(
    'testing/chunk-builders.ts',
  );
  const { from, lastValueFrom, of, toArray } = await import('rxjs');
  const judge = (answer: string) => mockModel({ parts: [...parts.textParts(answer), parts.finishPart()] });

  const all: Factory[] = [
    { name: 'RegexFilter pii', owner: 'guards', make: () => new (processors.RegexFilterProcessor as new (o: unknown) => AnyProcessor)({ presets: ['pii'], strategy: 'redact' }) },
    { name: 'RegexFilter secrets', owner: 'guards', make: () => new processors.RegexFilterProcessor!({ presets: ['secrets'], strategy: 'redact' }) },
    { name: 'RegexFilter urls', owner: 'guards', make: () => new processors.RegexFilterProcessor!({ presets: ['urls'], strategy: 'redact' }) },
    { name: 'UnicodeNormalizer', owner: 'guards', make: () => new processors.UnicodeNormalizer!({ stripControlChars: true }) },
    { name: 'TokenLimiter', owner: 'guards', make: () => new processors.TokenLimiterProcessor!({ limit: 1_000_000 }) },
    { name: 'PIIDetector (mock judge)', owner: 'guards', make: () => new processors.PIIDetector!({ model: judge('{"detections": []}'), strategy: 'redact' }) },
    { name: 'Moderation (mock judge)', owner: 'compat', make: () => new processors.ModerationProcessor!({ model: judge('{"categories": {}}') }) },
    { name: 'PromptInjection (mock judge)', owner: 'compat', make: () => new processors.PromptInjectionDetector!({ model: judge('{"categories": {}}') }) },
    { name: 'LanguageDetector (mock judge)', owner: 'compat', make: () => new processors.LanguageDetector!({ model: judge('{"language": "en", "confidence": 1}'), targetLanguages: ['en'] }) },
    { name: 'SystemPromptScrubber (mock judge)', owner: 'compat', make: () => new processors.SystemPromptScrubber!({ model: judge('{"detections": []}') }) },
    { name: 'BatchParts', owner: 'compat', make: () => new processors.BatchPartsProcessor!({}) },
  ];
  const factories = all.filter((factory) => options.only !== 'guards' || factory.owner === 'guards');

  const rows: HostileRow[] = [];
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  for (const factory of factories) {
    for (const input of HOSTILE_INPUTS) {
      for (const path of ['input', 'stream'] as const) {
        let stall = 0;
        let wall = 0;
        const record = (cpuMs: number, wallMs: number) => {
          stall = Math.max(stall, cpuMs);
          wall = Math.max(wall, wallMs);
        };
        let processor = timed(factory.make(), record);
        const hasHook = path === 'input' ? typeof processor.processInput === 'function' || typeof processor.processInputStep === 'function' : typeof processor.processOutputStream === 'function';
        if (!hasHook) continue;
        const runOnce = async (text: string) => {
          if (path === 'input') {
            const list = new MessageList();
            const message = { id: 'm1', role: 'user', createdAt: new Date(0), content: { format: 2, parts: [{ type: 'text', text }] } };
            list.add([message], 'input');
            if (typeof processor.processInput === 'function') {
              const ctx = operators.createRunContext!({ messageList: list });
              await lastValueFrom((of(list) as unknown as Piped).pipe(operators.processInput!([processor], ctx)));
            } else {
              (processor.processInputStep as (args: unknown) => unknown)({ messages: [message], systemMessages: [], state: {} });
            }
          } else {
            const deltas: unknown[] = [];
            for (let index = 0; index < text.length; index += deltaSize) deltas.push(chunk.textDelta(text.slice(index, index + deltaSize)));
            const source = from([chunk.textStart(), ...deltas, chunk.textEnd(), chunk.finish()]);
            const ctx = operators.createRunContext!();
            await lastValueFrom((source as unknown as Piped).pipe(operators.processOutputStream!([processor], ctx), toArray()));
          }
        };
        // Warm-up on the same input (a server's code is optimised after a few requests).
        await runOnce(input.text).catch(() => undefined);
        // The best of MEASURED_RUNS runs: a quadratic scan costs the same every run, while GC and
        // a shared machine's scheduling only ever add; the minimum is the processor's own cost.
        let best: { stall: number; wall: number; loop: number; total: number } | undefined;
        for (let run = 0; run < MEASURED_RUNS; run++) {
          processor = timed(factory.make(), record);
          stall = 0;
          wall = 0;
          await turn();
          histogram.reset();
          histogram.enable();
          const started = performance.now();
          try {
            await runOnce(input.text);
          } catch (error) {
            if (run === 0) options.log?.(`${factory.name} / ${input.name} / ${path}: ${error instanceof Error ? error.message.slice(0, 120) : String(error)}`);
          }
          const total = performance.now() - started;
          await new Promise<void>((done) => setTimeout(done, 2));
          histogram.disable();
          const loopMax = histogram.max / 1e6;
          if (best === undefined || stall < best.stall) best = { stall, wall, loop: Number.isFinite(loopMax) ? loopMax : 0, total };
        }
        const measured = best as { stall: number; wall: number; loop: number; total: number };
        rows.push({ processor: factory.name, owner: factory.owner, path, input: input.name, stallMs: measured.stall, wallMs: measured.wall, loopMs: measured.loop, totalMs: measured.total });
      }
    }
    options.log?.(`hostile: ${factory.name} done`);
  }
  return rows;
}

/** The worst row per processor and path. */
export function worstRows(rows: readonly HostileRow[]): HostileRow[] {
  const worst = new Map<string, HostileRow>();
  for (const row of rows) {
    const key = `${row.processor}|${row.path}`;
    const current = worst.get(key);
    if (current === undefined || row.stallMs > current.stallMs) worst.set(key, row);
  }
  return [...worst.values()];
}
