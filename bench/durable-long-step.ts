/**
 * The long-step rows (issue 32 §4): one open step of `chunks` text deltas (a million by default),
 * written by PostgreSQL itself (INSERT … SELECT generate_series: the writer is not what is
 * measured). Then, on another instance's journal: a takeover's plan (claim + planTakeover, entries
 * read, RSS growth) and a UI resume 5 deltas before the step's end (request → first byte).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { tap } from 'rxjs';
import { resumeUIMessageStreamResponse } from '../src/ai-sdk/resume-ui-message-stream-response.js';
import type { ChunkType } from '../src/contract/chunk-types.js';
import { planTakeover } from '../src/durable/internal/takeover.js';
import { PostgresRunJournal } from '../src/storage/postgres/postgres-run-journal.js';

/** A journal counting the entries it hands out, through either read. */
class CountingJournal extends PostgresRunJournal {
  read = 0;
  override read$(...args: Parameters<PostgresRunJournal['read$']>): ReturnType<PostgresRunJournal['read$']> {
    return super.read$(...args).pipe(tap(() => (this.read += 1)));
  }
  override async readStructure(...args: Parameters<PostgresRunJournal['readStructure']>): ReturnType<PostgresRunJournal['readStructure']> {
    const entries = await super.readStructure(...args);
    this.read += entries.length;
    return entries;
  }
}

export interface LongStepRows {
  chunks: number;
  buildSeconds: number;
  takeoverMs: number;
  takeoverEntries: number;
  takeoverRssMb: number;
  resumeFirstByteMs: number;
  resumeFirstByteMaxMs: number;
  resumeEntries: number;
}

export async function longStepRows(options: { connectionString: string; schema: string; owner: PostgresRunJournal; chunks: number }): Promise<LongStepRows> {
  const { connectionString, schema, owner, chunks } = options;
  const runId = `long-step-${randomUUID()}`;
  const chunk = (type: string, payload: object): ChunkType => ({ type, runId, from: 'AGENT', payload }) as ChunkType;
  await owner.createRun({ runId, agentId: 'bench', input: null });
  const { lease } = await owner.claim(runId, 'dead-owner');
  await owner.append(lease, [chunk('start', { messageId: 'm1' })], { kind: 'input', step: 0, attempt: 0, state: {} });
  await owner.append(lease, [chunk('step-start', { stepNumber: 0, messageId: 'm1' }), chunk('text-start', { id: 'a' }), chunk('text-end', { id: 'a' }), chunk('text-start', { id: 't' })]);
  const db = new pg.Pool({ connectionString, max: 1 });
  const builtAt = performance.now();
  try {
    await db.query(
      `INSERT INTO "${schema}".run_chunks (run_id, seq, epoch, type, chunk)
       SELECT $1, 5 + g, 1, 'text-delta', json_build_object('type', 'text-delta', 'runId', $1::text, 'from', 'AGENT', 'payload', json_build_object('id', 't', 'text', 'token ' || g || ' '))::text
       FROM generate_series(1, $2::int) AS g`,
      [runId, chunks],
    );
    await db.query(`UPDATE "${schema}".runs SET last_seq = 5 + $2::int WHERE id = $1`, [runId, chunks]);
    await db.query(`ANALYZE "${schema}".run_chunks`);
  } finally {
    await db.end();
  }
  const buildSeconds = (performance.now() - builtAt) / 1000;
  const successor = new CountingJournal({ connectionString, schema });
  try {
    await successor.getRun(runId); // a serving instance has a warm pool
    const rssBefore = process.memoryUsage().rss;
    const startedAt = performance.now();
    const plan = await planTakeover(successor, await successor.claim(runId, 'successor'));
    const takeoverMs = performance.now() - startedAt;
    const takeoverRssMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    if (plan.marker.map((marker) => marker.type).join() !== 'text-end,step-finish') throw new Error(`long step: unexpected marker ${plan.marker.map((marker) => marker.type).join()}`);
    const takeoverEntries = successor.read;
    const after = String(chunks); // 5 deltas before the end
    const firstBytes: number[] = [];
    let resumeEntries = 0;
    for (let round = 0; round < 5; round++) {
      successor.read = 0;
      const requestedAt = performance.now();
      const response = await resumeUIMessageStreamResponse(successor, runId, { unsafeNoAuthorization: true, after });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      firstBytes.push(performance.now() - requestedAt);
      await reader.cancel();
      resumeEntries = Math.max(resumeEntries, successor.read);
    }
    const sorted = [...firstBytes].sort((x, y) => x - y);
    return { chunks, buildSeconds, takeoverMs, takeoverEntries, takeoverRssMb, resumeFirstByteMs: sorted[2] as number, resumeFirstByteMaxMs: sorted[4] as number, resumeEntries };
  } finally {
    await successor.close();
  }
}
