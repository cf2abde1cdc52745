/**
 * Journaled runs for the inspector's browser test, made by the real durable worker on the test
 * PostgreSQL (journal in its own schema, pg-boss in another): a run whose owner crashed after its
 * second flush of chunks (a throwing fault point at `chunks-flushed`, epoch 1) and that the worker
 * took over (epoch 2: the takeover marker, then the step again), and a run cancelled mid-stream.
 */
import { randomUUID } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, type Observable } from 'rxjs';
import { Agent } from 'rxagent';
import { createRunWorker, type FaultPointInfo, type RunFaultPoint, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.js';

export interface JournaledRuns {
  journal: PostgresRunJournal;
  takenOver: string;
  cancelled: string;
  close(): Promise<void>;
}

const until = (events$: Observable<RunWorkerEvent>, type: RunWorkerEvent['type'], runId: string) =>
  firstValueFrom(events$.pipe(filter((event) => event.type === type && event.runId === runId)));

export async function makeJournaledRuns(): Promise<JournaledRuns> {
  const suffix = randomUUID().slice(0, 6);
  const server: TestPostgres = await startTestPostgres();
  const journal = new PostgresRunJournal({ connectionString: server.connectionString, schema: `rxagent_inspector_${suffix}` });
  const boss = new PgBoss({ connectionString: server.connectionString, schema: `pgboss_inspector_${suffix}`, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  const agent = (id: string, wordDelayMs: number) =>
    new Agent({ id, model: scriptedModel({ wordDelayMs, rules: [], fallback: { text: 'Your parcel left the warehouse this morning and should arrive on Thursday.' } }) });
  // the first owner dies after its second flush of chunks, mid-step: nothing past the input commit is committed
  const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
    if (point === 'chunks-flushed' && info.epoch === 1 && info.flush === 2 && info.runId.startsWith('crash-')) throw new Error('simulated crash of the first owner');
  };
  const worker: RunWorker = createRunWorker({ journal, boss, agents: [agent('parcels', 15), agent('slow', 200)], faultPoint, workerId: 'instance-a', queue: { pollingIntervalSeconds: 0.5 } });
  await worker.start();
  const takenOver = `crash-${suffix}`;
  const cancelled = `cancel-${suffix}`;
  // listening before submitting: the events are hot
  const done = Promise.all([until(worker.events$, 'completed', takenOver), until(worker.events$, 'completed', cancelled)]);
  const streaming = until(worker.events$, 'committed', cancelled);
  await worker.submit('parcels', 'Where is my parcel?', { runId: takenOver });
  await worker.submit('slow', 'Tell me slowly', { runId: cancelled });
  await streaming;
  await worker.cancel(cancelled, { unsafeNoAuthorization: true, reason: 'user pressed stop' });
  await done;
  // the crashed attempt also ends (failed) before pg-boss hands the run on: wait for the journal's end
  for (const started = Date.now(); (await journal.getRun(takenOver))?.terminal === undefined; ) {
    if (Date.now() - started > 30_000) throw new Error(`run ${takenOver} was not taken over and finished within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    journal,
    takenOver,
    cancelled,
    async close() {
      await worker.close().catch(() => undefined);
      await boss.stop({ graceful: false });
      await journal.close();
      await server.stop();
    },
  };
}
