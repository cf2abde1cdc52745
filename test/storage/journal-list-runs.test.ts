/**
 * `listRuns` of the built-in journals (what the run inspector lists to open): the runs changed most
 * recently, newest first, at most `limit`; a bad limit is a `RangeError` naming it. In memory and on
 * the test PostgreSQL (its own schema).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import { PostgresRunJournal } from '../../src/storage/postgres/postgres-run-journal.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

let server: TestPostgres | undefined;
afterAll(async () => {
  await server?.stop();
});

const journals: Array<[string, () => Promise<InMemoryRunJournal | PostgresRunJournal>]> = [
  ['InMemoryRunJournal', async () => new InMemoryRunJournal()],
  [
    'PostgresRunJournal',
    async () => {
      server ??= await startTestPostgres();
      return new PostgresRunJournal({ connectionString: server.connectionString, schema: `rxagent_list_${randomUUID().slice(0, 8)}` });
    },
  ],
];

describe.each(journals)('%s.listRuns', (name, make) => {
  it('the runs changed most recently, newest first, at most limit; a bad limit is a RangeError naming it', async () => {
    const journal = await make();
    try {
      const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
      await journal.createRun({ runId: 'run-a', agentId: 'support', input: null });
      await pause();
      await journal.createRun({ runId: 'run-b', agentId: 'support', input: null });
      await pause();
      await journal.createRun({ runId: 'run-c', agentId: 'support', input: null });
      await pause();
      await journal.claim('run-a', 'worker-a'); // a changed last
      const listed = await journal.listRuns({ limit: 2 });
      expect(listed.map((run) => [run.runId, run.status, run.epoch])).toEqual([
        ['run-a', 'running', 1],
        ['run-c', 'queued', 0],
      ]);
      expect(listed[0]).toEqual(await journal.getRun('run-a'));
      expect((await journal.listRuns()).map((run) => run.runId)).toEqual(['run-a', 'run-c', 'run-b']);
      for (const limit of [0, 1001, 1.5]) {
        await expect(journal.listRuns({ limit })).rejects.toThrow(new RangeError(`${name}.listRuns: limit must be an integer from 1 to 1000 (got ${limit})`));
      }
    } finally {
      await journal.close();
    }
  });
});
