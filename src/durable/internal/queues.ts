/** pg-boss names for durable runs: one queue per agent, one job per run under a UUID made from the run id and its incarnation. */
import { createHash } from 'node:crypto';

/** The default queue-name prefix (`<prefix><agentId>`). */
export const DEFAULT_QUEUE_PREFIX = 'rxagent.runs.';

const queueNameCharacters = /^[\w.\-/]+$/;

/**
 * The pg-boss queue of an agent's runs: `<prefix><agentId>`, or, for an id with characters
 * pg-boss refuses in queue names, `<prefix><the id's safe characters>.<hash>`.
 */
export function queueNameOf(prefix: string, agentId: string): string {
  if (queueNameCharacters.test(agentId)) return `${prefix}${agentId}`;
  const safe = agentId.replace(/[^\w.\-/]/g, '_').slice(0, 40);
  return `${prefix}${safe}.${createHash('sha256').update(agentId).digest('hex').slice(0, 12)}`;
}

/**
 * The dead-letter queue of an agent's queue, `<queue>/dead-letter`: pg-boss copies a run's job
 * there when it fails for the last time, and a worker of the agent ends the run `failed`.
 */
export function deadLetterQueueOf(queue: string): string {
  return `${queue}/dead-letter`;
}

/**
 * The pg-boss job id of a run: a UUID (pg-boss job ids must be UUIDs) made from a SHA-256 of the
 * run id and its `incarnation` (`RunRecord.incarnation`), in the layout of a name-based UUID
 * (version 8, RFC 9562 variant). One run, one job: a second send of the same run is a no-op; a run
 * created again under the id (after an erase or a purge) is another incarnation, and its job
 * another id (pg-boss keeps the old run's job, and the new run's send was a no-op: it stayed
 * `queued`). Without an incarnation (a run stored before the journal kept one, or a job an earlier
 * build sent): the id made from the run id alone.
 */
export function jobIdOf(runId: string, incarnation?: string): string {
  return uuidOf(incarnation === undefined ? `rxagent.run:${runId}` : `rxagent.run.2:${incarnationName(runId, incarnation)}`);
}

/**
 * The job id of a run's job of `generation`: a handover (`close({ handover: true })`) hands the run
 * on in a new job, generation `n + 1`, with attempts of its own; generation 0 is the submitted job
 * ({@link jobIdOf}). Every generation of one incarnation carries it, so each names its jobs alone.
 */
export function generationJobIdOf(runId: string, generation: number, incarnation?: string): string {
  if (generation === 0) return jobIdOf(runId, incarnation);
  return uuidOf(incarnation === undefined ? `rxagent.run.handover:${generation}:${runId}` : `rxagent.run.handover.2:${generation}:${incarnationName(runId, incarnation)}`);
}

/** A run's incarnation and id in a job's name: the incarnation first, with its length (no pair spells another's; the prefixes `.2` keep them apart from ids without one). */
function incarnationName(runId: string, incarnation: string): string {
  return `${incarnation.length}:${incarnation}:${runId}`;
}

function uuidOf(name: string): string {
  const bytes = createHash('sha256').update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
