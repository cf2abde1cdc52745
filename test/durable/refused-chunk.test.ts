/**
 * A chunk the codec refuses inside a worker (issue 32 §3): a processor's `writer.custom()` data
 * with a `BigInt`, and a tool whose result nests deeper than the codec writes, in the middle of a
 * streaming step. The run's step ends as docs/durable.md says — the open parts closed, the step
 * finished with reason `error`, an `error` naming the chunk's type and path — and the run ends
 * `failed` in its first epoch: no takeover spent, no attempt failed, nothing left `running`, and
 * every reader (the UI message) gets the error instead of throwing.
 */
import { randomUUID } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, type ChunkType, type Processor } from 'rxagent';
import { createRunWorker, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { finishPart, mockModel, textParts, toolCallParts } from 'rxagent/testing';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { journalEntries, uiMessageOf } from './fixtures/matrix-checks.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_refused_${suffix}`;
const bossSchema = `pgboss_refused_${suffix}`;

/** `{ a: { a: … } }` nested `depth` levels. */
function deep(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
}

/** Writes a data chunk holding a BigInt at the tenth text delta of the run's first step. */
class BigIntProgress implements Processor {
  readonly id = 'bigint-progress';
  processOutputStream({ part, state, writer }: Parameters<NonNullable<Processor['processOutputStream']>>[0]) {
    if (part.type === 'text-delta') {
      const seen = ((state['deltas'] as number | undefined) ?? 0) + 1;
      state['deltas'] = seen;
      if (seen === 10) void writer?.custom({ type: 'data-progress', data: { bytes: 10n } } as never);
    }
    return part;
  }
}

function refusingAgent(id: 'bigint' | 'deep'): Agent {
  let call = 0;
  return new Agent({
    id,
    model: mockModel({
      modelId: id,
      stream: () => {
        call += 1;
        return id === 'deep' && call === 1
          ? [...textParts('Looking.', { id: 't0', chunkSize: 3 }), ...toolCallParts('inspect', { what: 'tree' }, { toolCallId: 'call-1' }), finishPart('tool-calls')]
          : [...textParts('A long answer streamed in many small deltas, well past the tenth one.', { id: `t${call}`, chunkSize: 3 }), finishPart('stop')];
      },
    }),
    outputProcessors: id === 'bigint' ? [new BigIntProgress()] : [],
    tools: {
      inspect: {
        description: 'Returns a tree',
        inputSchema: z.object({ what: z.string() }),
        idempotent: true,
        execute: async () => deep(1_500),
      },
    },
  });
}

let server: TestPostgres;
let journal: PostgresRunJournal;
let boss: PgBoss;
let worker: RunWorker;
const events: RunWorkerEvent[] = [];

beforeAll(async () => {
  server = await startTestPostgres();
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  boss = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  worker = createRunWorker({ journal, boss, agents: [refusingAgent('bigint'), refusingAgent('deep')], concurrency: 2, queue: { pollingIntervalSeconds: 0.5 } });
  worker.events$.subscribe((event) => events.push(event));
  await worker.start();
}, 60_000);

afterAll(async () => {
  await worker?.close().catch(() => undefined);
  await boss?.stop({ graceful: false });
  await journal?.close();
  await server?.stop();
}, 60_000);

async function runToEnd(agentId: 'bigint' | 'deep'): Promise<{ runId: string; chunks: ChunkType[] }> {
  const runId = `refused-${agentId}-${suffix}`;
  const completed = firstValueFrom(worker.events$.pipe(filter((event) => event.type === 'completed' && event.runId === runId)));
  await worker.submit(agentId, 'Go', { runId });
  await completed;
  // a moment for any attempt a refused chunk might wrongly spend to show up
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  return { runId, chunks: (await journalEntries(journal, runId)).map((entry) => entry.chunk) };
}

/** Every part a step opened is closed in `chunks`, and every step-start has its step-finish. */
function balanced(chunks: readonly ChunkType[]): void {
  const open = new Set<string>();
  for (const chunk of chunks) {
    if (chunk.type === 'text-start') open.add(`text:${chunk.payload.id}`);
    if (chunk.type === 'text-end') open.delete(`text:${chunk.payload.id}`);
    if (chunk.type === 'step-start') open.add(`step:${chunk.payload.stepNumber}`);
    if (chunk.type === 'step-finish') open.delete(`step:${chunk.payload.stepNumber}`);
  }
  expect([...open]).toEqual([]);
}

describe('a chunk the codec refuses inside a worker', () => {
  it.each([
    // a processor's writer.custom() refuses the chunk where it is written, naming the processor (the journal's codec refused it later, naming no one)
    ['bigint', 'data-progress', 'ProcessorError', /bigint-progress.*processOutputStream.*data\.bytes.*bigint/i],
    ['deep', 'tool result', 'JsonEncodingError', /tool result is not JSON at \$[.a]+…[.a]+: depth > 1000/],
  ] as const)('%s: the step closed with reason error, an error naming the %s and its path, the run failed in epoch 1 with no attempt spent', async (agentId, _chunkType, name, why) => {
    const { runId, chunks } = await runToEnd(agentId);
    const run = await journal.getRun(runId);
    expect(run).toMatchObject({ status: 'failed', epoch: 1 });

    const last = chunks.at(-1);
    expect(last?.type).toBe('error');
    const error = (last as ChunkType & { type: 'error' }).payload.error as { name?: string; message?: string };
    expect(error.name).toBe(name);
    expect(error.message).toMatch(why);
    // a client may see this error: a path 1,500 levels deep is shortened, not 3,000 characters
    expect(error.message!.length).toBeLessThan(260);
    const stepFinish = chunks.filter((chunk): chunk is ChunkType & { type: 'step-finish' } => chunk.type === 'step-finish').at(-1);
    expect(stepFinish?.payload.stepResult.reason).toBe('error');
    balanced(chunks);
    // the refused chunk itself is nowhere in the journal
    expect(chunks.some((chunk) => chunk.type === 'data-progress')).toBe(false);

    // one claim, one completion, no attempt failed or handed on
    const mine = events.filter((event) => event.runId === runId);
    expect(mine.filter((event) => event.type === 'claimed')).toHaveLength(1);
    expect(mine.filter((event) => event.type === 'completed')).toEqual([expect.objectContaining({ status: 'failed', epoch: 1 })]);
    expect(mine.some((event) => event.type === 'failed' || event.type === 'released' || event.type === 'fenced')).toBe(false);

    // readers serve it: the UI message ends, and a second read gives the same journal
    await expect(uiMessageOf(journal, runId)).resolves.toBeDefined();
    const again = await firstValueFrom(journal.read$(runId, { after: 0, live: false }).pipe(toArray()));
    expect(again.map((entry) => entry.chunk.type)).toEqual(chunks.map((chunk) => chunk.type));
  }, 30_000);
});
