/**
 * Cost independent of a step's length (issue 32 §4), on the test PostgreSQL: a run whose open step
 * holds `RXAGENT_LONG_STEP_CHUNKS` text deltas (default 200,000 here; `npm run bench:durable --
 * --long-step` runs a million), built with one INSERT … SELECT generate_series. A takeover plans
 * from the step's structure (entries read counted: the same for any length) within 2 s, and a UI
 * resume near the end of the step sends its first byte within 250 ms.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { tap } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { planTakeover } from '../../src/durable/internal/takeover.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { commit, start } from '../storage/journal-suite.js';

const chunks = Number(process.env['RXAGENT_LONG_STEP_CHUNKS'] ?? 200_000);
const schema = `rxagent_long_${randomUUID().slice(0, 6)}`;
let server: TestPostgres;
let db: pg.Pool;

/** A journal that counts the entries it hands out, through either read. */
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

let journal: CountingJournal;
const runId = `long-${randomUUID()}`;

beforeAll(async () => {
  server = await startTestPostgres();
  db = new pg.Pool({ connectionString: server.connectionString, max: 1 });
  journal = new CountingJournal({ connectionString: server.connectionString, schema });
  await journal.createRun({ runId, agentId: 'a', input: null });
  const { lease } = await journal.claim(runId, 'dead');
  const chunk = (type: string, payload: object) => ({ type, runId, from: 'AGENT', payload }) as never;
  await journal.append(lease, [start(runId)], commit('input'));
  await journal.append(lease, [chunk('step-start', { stepNumber: 0, messageId: 'm1' }), chunk('text-start', { id: 'a' }), chunk('text-end', { id: 'a' }), chunk('text-start', { id: 't' })]);
  // the step's deltas, seq 6 … 5 + chunks, written by the database itself
  await db.query(
    `INSERT INTO "${schema}".run_chunks (run_id, seq, epoch, type, chunk)
     SELECT $1, 5 + g, 1, 'text-delta', json_build_object('type', 'text-delta', 'runId', $1::text, 'from', 'AGENT', 'payload', json_build_object('id', 't', 'text', 'word ' || g))::text
     FROM generate_series(1, $2::int) AS g`,
    [runId, chunks],
  );
  await db.query(`UPDATE "${schema}".runs SET last_seq = 5 + $2::int WHERE id = $1`, [runId, chunks]);
  await db.query(`ANALYZE "${schema}".run_chunks`);
}, 120_000);

afterAll(async () => {
  await journal?.close();
  await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await db?.end();
  await server?.stop();
}, 60_000);

describe(`a step of ${chunks.toLocaleString('en')} chunks`, () => {
  it('a takeover inside it reads the structure only, in ≤ 2 s: marker closes the open text and the step', async () => {
    journal.read = 0;
    const started = performance.now();
    const plan = await planTakeover(journal, await journal.claim(runId, 'next'));
    const ms = performance.now() - started;
    expect(plan.marker.map((marker) => marker.type)).toEqual(['text-end', 'step-finish']);
    expect(journal.read).toBe(4); // step-start, text-start a, text-end a, text-start t
    expect(ms).toBeLessThan(2000);
    console.log(`long step: ${chunks} chunks, takeover plan ${ms.toFixed(1)} ms, ${journal.read} entries read`);
  });

  it('a UI resume near its end sends its first byte in ≤ 250 ms, reading no delta before its cursor', async () => {
    const after = chunks; // 5 entries before the deltas: the cursor is 5 deltas before the end
    const resume = async (): Promise<{ ms: number; first: string; status: number }> => {
      const started = performance.now();
      const response = await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true, after: String(after) });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      const ms = performance.now() - started;
      await reader.cancel();
      return { ms, first: new TextDecoder().decode(first.value), status: response.status };
    };
    journal.read = 0;
    const cold = await resume(); // the first reader of the process also opens the journal's LISTEN connection
    const entriesRead = journal.read;
    const warm: number[] = [];
    for (let round = 0; round < 3; round++) warm.push((await resume()).ms);
    const median = [...warm].sort((a, b) => a - b)[1] as number;
    expect(cold.status).toBe(200);
    expect(cold.first).toMatch(new RegExp(`^id: ${after + 1}:0\\ndata: \\{"type":"text-delta","id":"t","delta":"word ${after - 4}"\\}`));
    expect(median).toBeLessThan(250);
    expect(entriesRead).toBeLessThan(600); // the structure (4) and one page after the cursor, not the step
    const ms = `cold ${cold.ms.toFixed(1)} ms, then median ${median.toFixed(1)} ms of 3; ${entriesRead}`;
    console.log(`long step: UI resume first byte ${ms} entries read`);
  });
});
