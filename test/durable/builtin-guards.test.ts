/**
 * Every built-in processor in a durable run, taken over inside the work of its busiest hook (issue
 * 32 §2). One worker on the test PostgreSQL runs, for each built-in, a crash-free run and a run
 * whose owner crashes (a throwing fault point: the attempt stops as a crash would, pg-boss gives
 * the job back, the next claim restores the last commit) at the first flush of chunks after step
 * 0's `step` commit — mid step 1, while its output hooks stream and judge, after its input-step,
 * LLM-request and API-error hooks ran on the state restored from step 0. Each crashed run must
 * complete with the client view (the journal's chunks as a client keeps them, the `useChat`
 * message) and the thread in memory of the crash-free run, and the built-in must have done its
 * work in both (a redaction, a truncation, a retry…).
 */
import { randomUUID } from 'node:crypto';
import { APICallError, type LanguageModelV4CallOptions, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { PgBoss } from 'pg-boss';
import { concatMap, filter, firstValueFrom, from, of, throwError, timer, map, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, RequestContext, type ChunkType, type Processor } from 'rxagent';
import { NotDurableError, createRunWorker, type FaultPointInfo, type RunFaultPoint, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { Memory } from 'rxagent/memory';
import {
  BatchPartsProcessor,
  LanguageDetector,
  ModelSelectionProcessor,
  ModerationProcessor,
  PIIDetector,
  PrefillErrorHandler,
  PromptInjectionDetector,
  RegexFilterProcessor,
  ResponseCache,
  StreamErrorRetryProcessor,
  StructuredOutputProcessor,
  SystemPromptScrubber,
  TokenLimiterProcessor,
  ToolCallFilter,
  ToolSearchProcessor,
  UnicodeNormalizer,
} from 'rxagent/processors';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { finishPart, mockModel, textParts, toolCallParts } from 'rxagent/testing';
import { judgeModel } from '../processors/support/harness.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { effectiveChunks, journalEntries, memoryShape, normalise, uiMessageOf } from './fixtures/matrix-checks.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_guards_${suffix}`;
const bossSchema = `pgboss_guards_${suffix}`;

const SECRET = 'You are Otto, the shop assistant. The discount code is PANDA-42.';
const LEAK = 'The discount code is PANDA-42.';
const EMAIL = 'ada.lovelace@example.com';
/** Step 1's answer: long enough for several windows and several flushes, with an e-mail address and a leak. */
const ANSWER =
  `Here is what I found for you. Your order shipped on Monday and should arrive within three days. ` +
  `If it does not, write to ${EMAIL} and we will send a new one at once. ${LEAK} ` +
  'The parcel is insured, so nothing is lost if the carrier misplaces it. Thank you for shopping with us today, and have a good week.';
const LOOKING = 'Let me look that up for you.';

/** The steps whose first call failed already, per run (a provider's blip happens once, whoever owns the run). */
const failedSteps = new Map<string, Set<number>>();

/** A provider error on the first call of the given steps of a run. */
type ModelFault = { error: 'retryable' | 'prefill'; steps: readonly number[] } | undefined;

/**
 * The agent's model, made for each run execution: step 0 says it looks and calls `lookup`; step 1
 * answers from the result. Text ids come from the step (not from a call counter), so a restored
 * owner streams the same chunks. With a fault, the first call of each of its steps fails (once per run).
 */
function shopModel(requestContext: RequestContext, fault: ModelFault) {
  const runId = requestContext.get('run') as string;
  const failed = failedSteps.get(runId) ?? new Set<number>();
  failedSteps.set(runId, failed);
  return mockModel({
    modelId: 'shop',
    stream: ({ options }: { options: LanguageModelV4CallOptions }): Observable<LanguageModelV4StreamPart> => {
      const step = options.prompt.some((message) => message.role === 'tool') ? 1 : 0;
      if (fault !== undefined && fault.steps.includes(step) && !failed.has(step)) {
        failed.add(step);
        return throwError(() =>
          fault.error === 'retryable'
            ? new APICallError({ message: 'Overloaded', url: 'https://api.example.test/v1', requestBodyValues: {}, statusCode: 503, isRetryable: true })
            : new APICallError({ message: 'This model does not support assistant message prefill.', url: 'https://api.example.test/v1', requestBodyValues: {}, statusCode: 400, isRetryable: false }),
        );
      }
      const parts =
        step === 0
          ? [...textParts(LOOKING, { id: 'text-0', chunkSize: 6 }), ...toolCallParts('lookup', { order: 'A-17' }, { toolCallId: 'call-lookup' }), finishPart('tool-calls')]
          : [...textParts(ANSWER, { id: 'text-1', chunkSize: 12 }), finishPart('stop')];
      return from(parts).pipe(concatMap((part) => (part.type === 'text-delta' ? timer(4).pipe(map(() => part)) : of(part))));
    },
  });
}

/** Judges answering from the judged text only (so any owner gets the same verdicts). */
const judges = {
  moderation: () => judgeModel(() => '{"categories": {"violence": 0.02, "hate": 0}}'),
  injection: () => judgeModel(() => '{"categories": {"injection": 0.01}}'),
  pii: () => judgeModel(({ prompt }) => JSON.stringify({ detections: prompt.includes(EMAIL) ? [{ type: 'email', value: EMAIL, confidence: 0.95 }] : [] })),
  language: () => judgeModel(() => '{"language": "en", "confidence": 0.99}'),
  scrubber: () =>
    judgeModel(({ prompt }) => (prompt.split('Response passage')[1]?.includes(LEAK) ? JSON.stringify({ detections: [{ value: LEAK, confidence: 0.9 }] }) : '{"detections": []}')),
  router: () => judgeModel(() => '{"choice": "shop", "confidence": 0.9}'),
  structurer: () => judgeModel(() => '{"shipped": true, "days": 3}'),
};

interface GuardCase {
  input?: (requestContext: RequestContext) => Processor[];
  output?: () => Processor[];
  error?: () => Processor[];
  fault?: ModelFault;
  /** What the built-in did, seen in the crash-free run's client view (its streamed text). */
  did: (text: string, chunks: readonly ChunkType[]) => void;
}

const answered = (text: string) => expect(text).toContain('insured');

/** Every export of `rxagent/processors` that is a processor, with its busiest hook exercised. */
const GUARDS: Record<string, GuardCase> = {
  'unicode-normalizer': { input: () => [new UnicodeNormalizer()], did: answered },
  'regex-filter': {
    input: () => [new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' })],
    output: () => [new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' })],
    did: (text) => expect(text).toContain('write to [EMAIL]'),
  },
  'batch-parts': { output: () => [new BatchPartsProcessor({ batchSize: 4 })], did: (text, chunks) => {
    expect(text).toContain(EMAIL);
    expect(chunks.filter((chunk) => chunk.type === 'text-delta').length).toBeLessThan(Math.ceil((LOOKING.length + ANSWER.length) / 6));
  } },
  // cumulative: step 0's count comes back from the commit, so step 1 is cut at the same place
  'token-limiter': { output: () => [new TokenLimiterProcessor({ limit: 100_000, outputLimit: 40 })], did: (text) => {
    expect(text).toContain('Your order');
    expect(text).not.toContain('insured');
  } },
  'tool-call-filter': { input: () => [new ToolCallFilter()], did: answered },
  'tool-search': {
    input: () => [new ToolSearchProcessor({ tools: { refund: { description: 'Refunds an order', inputSchema: z.object({ order: z.string() }), execute: async () => ({ ok: true }) } } })],
    did: answered,
  },
  'stream-error-retry': { error: () => [new StreamErrorRetryProcessor({ maxRetries: 2, delayMs: 1 })], fault: { error: 'retryable', steps: [0, 1] }, did: answered },
  'prefill-error-handler': { error: () => [new PrefillErrorHandler()], fault: { error: 'prefill', steps: [1] }, did: answered },
  'response-cache': { input: () => [new ResponseCache()], did: answered },
  moderation: {
    input: () => [new ModerationProcessor({ model: judges.moderation() })],
    output: () => [new ModerationProcessor({ model: judges.moderation(), streamMode: 'window', windowSchedule: [40, 80] })],
    did: answered,
  },
  'prompt-injection-detector': { input: () => [new PromptInjectionDetector({ model: judges.injection() })], did: answered },
  'pii-detector': {
    input: () => [new PIIDetector({ model: judges.pii() })],
    output: () => [new PIIDetector({ model: judges.pii(), streamMode: 'window', windowSchedule: [40, 80], redactionMethod: 'placeholder' })],
    did: (text) => {
      expect(text).not.toContain(EMAIL);
      expect(text).toContain('write to [EMAIL]');
    },
  },
  'language-detector': { input: () => [new LanguageDetector({ model: judges.language(), targetLanguages: ['en'] })], did: answered },
  'system-prompt-scrubber': {
    output: () => [new SystemPromptScrubber({ model: judges.scrubber(), streamMode: 'window', windowSchedule: [40, 80], redactionMethod: 'placeholder' })],
    did: (text) => {
      expect(text).not.toContain('PANDA-42');
      answered(text);
    },
  },
  'structured-output': {
    output: () => [new StructuredOutputProcessor({ schema: z.object({ shipped: z.boolean(), days: z.number() }), model: judges.structurer() })],
    did: answered,
  },
  'model-selection': {
    input: (requestContext) => [new ModelSelectionProcessor({ model: judges.router(), choices: [{ id: 'shop', model: shopModel(requestContext, undefined), description: 'the shop assistant' }] })],
    did: answered,
  },
};

const guardOf = (requestContext: RequestContext): GuardCase => GUARDS[requestContext.get('guard') as string] as GuardCase;

let server: TestPostgres;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
let worker: RunWorker;
const crashes = new Map<string, number>();

function guardsAgent(): Agent {
  return new Agent({
    id: 'guards',
    instructions: SECRET,
    model: ({ requestContext }) => shopModel(requestContext, guardOf(requestContext).fault),
    memory: new Memory({ storage }),
    inputProcessors: ({ requestContext }) => guardOf(requestContext).input?.(requestContext) ?? [],
    outputProcessors: ({ requestContext }) => guardOf(requestContext).output?.() ?? [],
    errorProcessors: ({ requestContext }) => guardOf(requestContext).error?.() ?? [],
    maxProcessorRetries: 3,
    tools: {
      lookup: {
        description: 'Looks an order up',
        inputSchema: z.object({ order: z.string() }),
        idempotent: true,
        execute: async ({ order }: { order: string }) => ({ order, shipped: 'Monday' }),
      },
    },
  });
}

/** Crashes each `crash-` run once: at its first flush of chunks after step 0's commit (mid step 1), in epoch 1. */
function faultPoint(): (point: RunFaultPoint, info: FaultPointInfo) => void {
  const armed = new Set<string>();
  return (point, { runId, epoch }) => {
    if (!runId.startsWith('crash-') || epoch !== 1) return;
    if (point === 'step-committed') armed.add(runId);
    if (point === 'chunks-flushed' && armed.delete(runId)) {
      crashes.set(runId, (crashes.get(runId) ?? 0) + 1);
      throw new Error('simulated crash mid step 1');
    }
  };
}

interface ClientView {
  status: string | undefined;
  epoch: number | undefined;
  chunks: unknown;
  ui: unknown;
  memory: unknown;
  text: string;
  raw: ChunkType[];
}

/**
 * `normalise` with generated UUIDs (a signal's id, drawn per run) numbered in order of appearance:
 * two runs compare equal when their ids are used the same way.
 */
function normaliseIds(value: unknown, runId: string): unknown {
  const uuids = new Map<string, string>();
  const text = JSON.stringify(normalise(value, runId) ?? null).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (uuid) => {
    if (!uuids.has(uuid)) uuids.set(uuid, `UUID-${uuids.size}`);
    return uuids.get(uuid) as string;
  });
  return JSON.parse(text) as unknown;
}

async function clientView(runId: string, thread: string): Promise<ClientView> {
  const raw = effectiveChunks(await journalEntries(journal, runId));
  const run = await journal.getRun(runId);
  return {
    status: run?.status,
    epoch: run?.epoch,
    chunks: normaliseIds(raw, runId),
    ui: normaliseIds(await uiMessageOf(journal, runId), runId),
    memory: normaliseIds(memoryShape(await storage.getMessages({ threadId: thread }), runId), runId),
    text: raw.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join(''),
    raw,
  };
}

const views = new Map<string, { clean: ClientView; crashed: ClientView }>();

beforeAll(async () => {
  server = await startTestPostgres();
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  storage = new PostgresStorage({ connectionString: server.connectionString, schema });
  boss = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  const names = Object.keys(GUARDS);
  worker = createRunWorker({ journal, boss, agents: [guardsAgent()], concurrency: names.length * 2, queue: { pollingIntervalSeconds: 0.5 }, faultPoint: faultPoint() });
  await worker.start();
  const submitted = names.flatMap((name) =>
    (['clean', 'crashed'] as const).map((kind) => {
      const runId = `${kind === 'clean' ? 'clean' : 'crash'}-${name}-${suffix}`;
      return { name, kind, runId, thread: `t-${runId}` };
    }),
  );
  const ends = submitted.map(({ runId }) => firstValueFrom(worker.events$.pipe(filter((event) => event.type === 'completed' && event.runId === runId))));
  // one after the other: the runs start staggered, not 32 flushing at once on a 2-core machine
  for (const { name, runId, thread } of submitted) {
    await worker.submit('guards', 'Where is my order A-17? Please look it up.', { runId, memory: { thread, resource: 'u1' }, requestContext: { guard: name, run: runId } });
  }
  await Promise.all(ends);
  const seen = await Promise.all(submitted.map(({ runId, thread }) => clientView(runId, thread)));
  submitted.forEach(({ name, kind }, index) => {
    const entry = views.get(name) ?? ({} as { clean: ClientView; crashed: ClientView });
    entry[kind] = seen[index] as ClientView;
    views.set(name, entry);
  });
}, 60_000);

afterAll(async () => {
  await worker?.close().catch(() => undefined);
  await boss?.stop({ graceful: false });
  await journal?.close();
  await storage?.close();
  await server?.stop();
}, 60_000);

describe('every built-in processor in a durable run, taken over mid step 1', () => {
  it.each(Object.keys(GUARDS))('%s: completed after one crash, the client view and memory those of the crash-free run', (name) => {
    const { clean, crashed } = views.get(name)!;
    expect(crashes.get(`crash-${name}-${suffix}`)).toBe(1);
    expect(clean).toMatchObject({ status: 'completed', epoch: 1 });
    expect(crashed).toMatchObject({ status: 'completed', epoch: 2 });
    expect(clean.raw.at(-1)?.type).toBe('finish');
    GUARDS[name]!.did(clean.text, clean.raw);
    expect(crashed.chunks).toEqual(clean.chunks);
    expect(crashed.ui).toEqual(clean.ui);
    expect(crashed.memory).toEqual(clean.memory);
  });

  it('covers every processor class rxagent/processors exports', async () => {
    const exports: Record<string, unknown> = await import('rxagent/processors');
    // the processor classes: their prototypes have hooks (process…)
    const classes = new Set(
      Object.values(exports).filter(
        (value): value is abstract new (...args: never[]) => unknown =>
          typeof value === 'function' && value.prototype !== undefined && Object.getOwnPropertyNames(value.prototype).some((key) => key.startsWith('process')),
      ),
    );
    expect(classes.size).toBe(Object.keys(GUARDS).length);
    for (const processorClass of classes) expect(Object.keys(GUARDS), `${processorClass.name} has no durable case`).toContain(idOf(processorClass.name));
  });

  it("submit() refuses PIIDetector's 'hash' redaction without a hashKey, naming the processor and why; with a hashKey it is durable", async () => {
    const hashing = (hashKey?: string) =>
      createRunWorker({
        journal,
        boss,
        concurrency: 0,
        agents: [new Agent({ id: `hashing-${hashKey ?? 'none'}`, model: mockModel(), outputProcessors: [new PIIDetector({ model: judges.pii(), redactionMethod: 'hash', ...(hashKey === undefined ? {} : { hashKey }) })] })],
      });
    const refused = await hashing().submit('hashing-none', 'Hi').catch((error: unknown) => error);
    expect(NotDurableError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ what: 'processor "pii-detector"', message: expect.stringContaining('hashKey') });
    const { created } = await hashing('a-shared-secret').submit('hashing-a-shared-secret', 'Hi', { runId: `hashing-${suffix}` });
    expect(created).toBe(true);
  });
});

/** A processor class's id in GUARDS (`PIIDetector` → `pii-detector`). */
function idOf(className: string): string {
  const known: Record<string, string> = { PIIDetector: 'pii-detector', RegexFilterProcessor: 'regex-filter', TokenLimiterProcessor: 'token-limiter', TokenLimiter: 'token-limiter' };
  return known[className] ?? className.replace(/Processor$/, '').replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
}
