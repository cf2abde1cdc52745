/**
 * `start()`'s check that an agent's memory can fence a durable run's save: the save of a stale
 * owner must be refused by the store itself, against this journal's runs (the same PostgreSQL
 * database and schema, or the `InMemoryRunJournal` an `InMemoryStorage` was built with). Checked
 * by doing it: a probe run of this journal is created and claimed, and a save under an epoch below
 * the claim's must come back as `FencedError` naming the claim's epoch (or a later one). A store on
 * another database, another schema or another journal cannot see the probe's epoch; a store that
 * cannot fence refuses a fenced save. Nothing is saved either way (the save carries no message).
 * The probe run is erased right after (`deleteRun`), whatever the outcome: it never stays behind
 * as a run stuck `running` (only a process killed inside the check leaves its probe).
 */
import { randomUUID } from 'node:crypto';
import { FencedError, type RunJournal } from '../../storage/index.js';
import type { AgentConfig } from '../../loop/index.js';
import { NotDurableError } from '../errors/not-durable-error.js';

/**
 * The prefix of probe run ids (`<prefix>.<uuid>`, one run per check). Earlier versions claimed one run of exactly
 * this id in every check and left it `running`: each check erases that one too.
 */
export const FENCE_PROBE_RUN_ID = 'rxagent.fence-probe';

/** What the probe needs of a store (`MemoryStorage.saveMessages`). */
interface FencedSaver {
  saveMessages(options: { threadId: string; resourceId: string; messages: []; fence: { runId: string; epoch: number } }): Promise<void>;
}

function saverOf(memory: unknown): FencedSaver | undefined {
  const storage = (memory as { storage?: unknown } | undefined)?.storage;
  if (typeof storage !== 'object' || storage === null) return undefined;
  return typeof (storage as { saveMessages?: unknown }).saveMessages === 'function' ? (storage as FencedSaver) : undefined;
}

/** Rejects with `NotDurableError` when `config`'s memory cannot fence saves against `journal`. */
export async function checkMemoryFence(journal: RunJournal, config: AgentConfig, workerId: string): Promise<void> {
  if (config.memory === undefined) return;
  const what = `agent "${config.id}"'s memory`;
  const saver = saverOf(config.memory);
  if (saver === undefined) {
    throw new NotDurableError({ what, message: 'durable runs need a Memory whose storage fences saves (new Memory({ storage: new PostgresStorage(…) }) on the journal’s database and schema)' });
  }
  const probeRunId = `${FENCE_PROBE_RUN_ID}.${randomUUID()}`;
  await journal.createRun({ runId: probeRunId, agentId: FENCE_PROBE_RUN_ID, input: null });
  let outcome: unknown;
  try {
    const { lease } = await journal.claim(probeRunId, `${workerId}.probe`);
    try {
      await saver.saveMessages({ threadId: FENCE_PROBE_RUN_ID, resourceId: FENCE_PROBE_RUN_ID, messages: [], fence: { runId: probeRunId, epoch: lease.epoch - 1 } });
    } catch (error) {
      outcome = error;
    }
    if (FencedError.isInstance(outcome) && outcome.currentEpoch >= lease.epoch) return;
  } finally {
    // the probe is no run: erased whatever the outcome (and the one run earlier versions left `running`)
    await journal.deleteRun(probeRunId, { force: true });
    await journal.deleteRun(FENCE_PROBE_RUN_ID, { force: true });
  }
  const why =
    outcome === undefined
      ? 'its storage saved under a stale fence (it does not check fences)'
      : `its storage cannot fence this journal's runs (${outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : String(outcome)})`;
  throw new NotDurableError({
    what,
    message: `${why}: use a PostgresStorage on the journal's database and schema (or, in one process, new InMemoryStorage({ runJournal }) with the worker's InMemoryRunJournal)`,
    ...(outcome === undefined ? {} : { cause: outcome }),
  });
}
