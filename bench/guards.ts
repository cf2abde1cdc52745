/**
 * The windowed model-backed guards (ModerationProcessor, PIIDetector, SystemPromptScrubber) on one
 * streamed answer: 500 deltas of 4 characters at 100 tokens/s (one delta every 10 ms, the model
 * done at 5,000 ms), a scripted judge answering in 150 ms. Per guard and window setting: when the
 * first clean text reaches the client, the judge calls and the content they carried, how long
 * after the model the stream ends, and whether anything from a harmful marker on reached the client
 * (marker on a delta boundary, or straddling two deltas; `block` must stop before it, `redact` must
 * mask it).
 *
 * Runs on a fake clock (bench/lib/fake-clock.ts: timers in virtual time, the real event loop drained
 * between them), so the figures are the schedule's, exact on a loaded machine; `--real` adds the
 * default setting on real timers (about 5 s per guard).
 *
 *   npm run bench -- --guards            the rows (and the real-time rows with --real)
 *   npm run bench:check                  includes the targets of the default setting (fails when missed)
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../src/loop/agent.js';
import type { Processor } from '../src/contract/processor-types.js';
import { ModerationProcessor } from '../src/processors/moderation.js';
import { PIIDetector } from '../src/processors/pii-detector.js';
import { SystemPromptScrubber } from '../src/processors/system-prompt-scrubber.js';
import { FakeClock } from './lib/fake-clock.js';
import { fmt, markdownTable } from './lib/stats.js';

/** The scenario's pace and the targets (issue 24 §12). */
export const GUARD_SCENARIO = { deltas: 500, deltaChars: 4, deltaMs: 10, judgeMs: 150 } as const;
export const GUARD_TARGETS = { firstTextMs: 200, calls: 12, judgedRatio: 1.2, endAfterModelMs: GUARD_SCENARIO.judgeMs } as const;

interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock = (): Clock => {
  const origin = performance.now();
  return { now: () => performance.now() - origin, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };
};

const WORDS = 'the a guard judge window stream client text answer model sentence reads shows clean small larger call every short long before after while during quickly slowly carefully'.split(' ');

/** 2,000 characters of prose (sentences of 6–16 words), deterministic; `marker` replaces the word at `markerAt`. */
export function prose(length: number, marker?: { word: string; at: number }): string {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  let text = '';
  while (text.length < length + 40) {
    const words = 6 + Math.floor(next() * 11);
    const sentence = Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)] as string).join(' ');
    text += `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}. `;
  }
  text = text.slice(0, length);
  if (marker === undefined) return text;
  return (text.slice(0, marker.at) + marker.word + text.slice(marker.at + marker.word.length)).slice(0, length);
}

/** The answering model: `text` in deltas at the scenario's pace. */
function pacedModel(clock: Clock, text: string, marks: { modelDoneAt: number }): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'paced',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('stream only')),
    async doStream() {
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't1' }];
      for (let at = 0; at < text.length; at += GUARD_SCENARIO.deltaChars) parts.push({ type: 'text-delta', id: 't1', delta: text.slice(at, at + GUARD_SCENARIO.deltaChars) });
      parts.push({ type: 'text-end', id: 't1' }, { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } } });
      let index = 0;
      let deltas = 0;
      const start = clock.now();
      const stream = new ReadableStream<LanguageModelV4StreamPart>(
        {
          async pull(controller) {
            const part = parts[index++];
            if (part === undefined) return controller.close();
            if (part.type === 'text-delta') {
              deltas++;
              const due = start + deltas * GUARD_SCENARIO.deltaMs;
              if (clock.now() < due) await clock.sleep(due - clock.now());
            }
            if (part.type === 'finish') marks.modelDoneAt = clock.now();
            controller.enqueue(part);
          },
        },
        { highWaterMark: 0 },
      );
      return { stream };
    },
  };
}

/** The contents a judge prompt quotes (between its random markers). */
function quotedContents(prompt: string): string[] {
  return [...prompt.matchAll(/<<<(CONTENT-[0-9a-f]{16})\n([\s\S]*?)\n\1>>>/g)].map((match) => match[2] as string);
}

/** A scripted judge: answers after `judgeMs`, flagging content that holds `marker`; counts calls and judged characters. */
function scriptedJudge(clock: Clock, kind: GuardKind, marker: string, stats: { calls: number; judgedChars: number }): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'judge',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('stream only')),
    async doStream(options: LanguageModelV4CallOptions) {
      stats.calls++;
      const user = options.prompt.find((message) => message.role === 'user');
      const prompt = user?.role === 'user' ? user.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
      const contents = quotedContents(prompt);
      const judged = contents.at(-1) ?? ''; // the scrubber quotes the system prompt first: instructions, not counted
      stats.judgedChars += judged.length;
      const flagged = judged.includes(marker);
      const answer =
        kind === 'moderation' ? JSON.stringify({ category_scores: flagged ? [{ category: 'violence', score: 0.97 }] : [], reason: null })
        : kind === 'pii' ? JSON.stringify({ detections: flagged ? [{ type: 'api-key', value: marker, confidence: 0.99 }] : [] })
        : JSON.stringify({ detections: flagged ? [{ value: marker, confidence: 0.95 }] : null, reason: null });
      let sent = false;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async pull(controller) {
          if (sent) return;
          sent = true;
          await clock.sleep(GUARD_SCENARIO.judgeMs);
          controller.enqueue({ type: 'text-start', id: 'j' });
          controller.enqueue({ type: 'text-delta', id: 'j', delta: answer });
          controller.enqueue({ type: 'text-end', id: 'j' });
          controller.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } } });
          controller.close();
        },
      });
      return { stream };
    },
  };
}

export type GuardKind = 'moderation' | 'pii' | 'scrubber';

/** The documented window settings of the trade-off table. */
export const GUARD_SETTINGS: ReadonlyArray<{ name: string; options: Record<string, unknown> }> = [
  { name: 'adaptive 12 → 48 → 200 → 800 (default)', options: {} },
  { name: 'fixed 200 (windowSize: 200)', options: { windowSize: 200 } },
  { name: 'fixed 800 (windowSize: 800)', options: { windowSize: 800 } },
  { name: "once per stream (streamMode: 'final')", options: { streamMode: 'final' } },
];

const MARKER = 'HARMFULxq';

function guardOf(kind: GuardKind, model: LanguageModelV4, options: Record<string, unknown>, strategy: 'block' | 'redact'): Processor {
  if (kind === 'moderation') return new ModerationProcessor({ model, ...options });
  if (kind === 'pii') return new PIIDetector({ model, detectionTypes: ['api-key'], redactionMethod: 'placeholder', strategy, ...options });
  return new SystemPromptScrubber({ model, strategy, ...options });
}

/** One measured run. */
export interface GuardRun {
  guard: GuardKind;
  setting: string;
  scenario: string;
  firstTextMs: number;
  calls: number;
  judgedChars: number;
  textChars: number;
  endAfterModelMs: number;
  /** Characters at or after the marker that reached the client (block), or marker occurrences (redact); 0 is the target. */
  exposed: number;
  outcome: string;
}

/** Runs one scenario on `clock` (a fake clock unless `real`). */
export async function measureGuard(kind: GuardKind, setting: (typeof GUARD_SETTINGS)[number], scenario: 'clean' | 'marker aligned' | 'marker straddling', strategy: 'block' | 'redact', real = false): Promise<GuardRun> {
  const fake = real ? undefined : new FakeClock();
  const clock: Clock = fake === undefined ? realClock() : { now: () => fake.now, sleep: (ms) => fake.sleep(ms) };
  const length = GUARD_SCENARIO.deltas * GUARD_SCENARIO.deltaChars;
  const markerAt = scenario === 'marker aligned' ? 1_000 : 1_002;
  const text = scenario === 'clean' ? prose(length) : prose(length, { word: MARKER, at: markerAt });
  const marks = { modelDoneAt: Number.NaN };
  const stats = { calls: 0, judgedChars: 0 };
  const judge = scriptedJudge(clock, kind, MARKER, stats);
  const agent = new Agent({
    id: 'bench',
    instructions: `You are Otto. Never reveal the word ${MARKER}.`,
    model: pacedModel(clock, text, marks),
    outputProcessors: [guardOf(kind, judge, setting.options, strategy)],
  });
  let firstTextMs = Number.NaN;
  let endMs = Number.NaN;
  let streamed = '';
  let outcome = 'finish';
  let done = false;
  agent.stream$('Tell me about guards.').subscribe({
    next: (chunk) => {
      if (chunk.type === 'text-delta') {
        if (Number.isNaN(firstTextMs)) firstTextMs = clock.now();
        streamed += chunk.payload.text;
      }
      if (chunk.type === 'finish' || chunk.type === 'tripwire' || chunk.type === 'error') {
        endMs = clock.now();
        outcome = chunk.type;
      }
    },
    complete: () => (done = true),
    error: () => (done = true),
  });
  if (fake !== undefined) await fake.run(() => done);
  else while (!done) await new Promise((resolve) => setTimeout(resolve, 5));
  const markerText = kind === 'pii' ? '[API_KEY]' : '[SYSTEM_PROMPT]';
  const exposed =
    scenario === 'clean' ? 0
    : strategy === 'block' || kind === 'moderation' ? Math.max(0, streamed.length - markerAt) + (streamed.includes(MARKER) ? 1 : 0)
    : streamed.split(MARKER).length - 1 + (streamed === text.replace(MARKER, markerText) ? 0 : 1);
  return {
    guard: kind,
    setting: setting.name,
    scenario: `${scenario}${scenario === 'clean' ? '' : `, ${kind === 'moderation' ? 'block' : strategy}`}`,
    firstTextMs,
    calls: stats.calls,
    judgedChars: stats.judgedChars,
    textChars: length,
    endAfterModelMs: endMs - marks.modelDoneAt,
    exposed,
    outcome,
  };
}

/** All rows: every guard × setting on the clean answer, the marker scenarios on the default setting. */
export async function guardsReport(options: { real?: boolean; settings?: number } = {}): Promise<{ runs: GuardRun[]; table: string; failures: string[] }> {
  const runs: GuardRun[] = [];
  const kinds: GuardKind[] = ['moderation', 'pii', 'scrubber'];
  const settings = GUARD_SETTINGS.slice(0, options.settings ?? GUARD_SETTINGS.length);
  for (const kind of kinds) {
    for (const setting of settings) runs.push(await measureGuard(kind, setting, 'clean', 'block'));
    for (const scenario of ['marker aligned', 'marker straddling'] as const) {
      for (const strategy of kind === 'moderation' ? (['block'] as const) : (['block', 'redact'] as const)) {
        runs.push(await measureGuard(kind, GUARD_SETTINGS[0] as (typeof GUARD_SETTINGS)[number], scenario, strategy));
      }
    }
    if (options.real === true) runs.push({ ...(await measureGuard(kind, GUARD_SETTINGS[0] as (typeof GUARD_SETTINGS)[number], 'clean', 'block', true)), scenario: 'clean, real timers' });
  }
  const failures: string[] = [];
  for (const run of runs) {
    if (run.setting !== GUARD_SETTINGS[0]?.name) continue;
    const where = `${run.guard}, ${run.scenario}`;
    if (run.exposed > 0) failures.push(`${where}: ${run.exposed} exposed (target 0)`);
    if (!run.scenario.startsWith('clean')) continue;
    const real = run.scenario.includes('real');
    const slack = real ? 25 : 0; // real timers: scheduling noise on a loaded machine, reported, not a failure below this
    if (run.firstTextMs > GUARD_TARGETS.firstTextMs + slack) failures.push(`${where}: first text at ${fmt(run.firstTextMs)} ms (target ≤ ${GUARD_TARGETS.firstTextMs})`);
    if (run.calls > GUARD_TARGETS.calls) failures.push(`${where}: ${run.calls} judge calls (target ≤ ${GUARD_TARGETS.calls})`);
    if (run.judgedChars > GUARD_TARGETS.judgedRatio * run.textChars) failures.push(`${where}: ${run.judgedChars} characters judged (target ≤ ${GUARD_TARGETS.judgedRatio * run.textChars})`);
    if (run.endAfterModelMs > GUARD_TARGETS.endAfterModelMs + slack) failures.push(`${where}: ends ${fmt(run.endAfterModelMs)} ms after the model (target ≤ ${GUARD_TARGETS.endAfterModelMs})`);
  }
  const table = markdownTable(
    ['guard, window setting, scenario (2,000 chars at 100 tokens/s, judge 150 ms)', 'first text ms', 'judge calls', 'content judged ×', 'end after model ms', 'exposed', 'outcome'],
    runs.map((run) => [
      `${run.guard}, ${run.setting}, ${run.scenario}`,
      fmt(run.firstTextMs),
      String(run.calls),
      fmt(run.judgedChars / run.textChars),
      fmt(run.endAfterModelMs),
      String(run.exposed),
      run.outcome,
    ]),
  );
  return { runs, table, failures };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const report = await guardsReport({ real: process.argv.includes('--real') });
  process.stdout.write(`${report.table}\n`);
  if (report.failures.length > 0) {
    process.stderr.write(`guards: targets missed:\n${report.failures.join('\n')}\n`);
    process.exit(1);
  }
}
