/**
 * The classifier of infrastructure failures and the backoff between attempts live with the
 * stores (`src/storage/infrastructure-error.ts`), which retry such failures themselves; the
 * durable runtime uses the same ones, so a failure a store gave up on fails the attempt, never
 * the run.
 */
import {
  DEFAULT_RETRY_DEADLINE_MS,
  INFRASTRUCTURE_BACKOFF_BASE_MS,
  INFRASTRUCTURE_BACKOFF_MAX_MS,
  infrastructureBackoffMs,
  isInfrastructureError,
  isStorageInfrastructureError,
  retryInfrastructure,
} from '../../storage/index.js';

export { INFRASTRUCTURE_BACKOFF_BASE_MS, INFRASTRUCTURE_BACKOFF_MAX_MS, infrastructureBackoffMs, isInfrastructureError, isStorageInfrastructureError };

/**
 * A submit's write (`createRun`, the queue, the job: each safe to run again — one id names one run
 * and one job) through the infrastructure's blips: tried again with backoff for up to 10 s after
 * its first such failure, as `PostgresStorage` retries a save; anything else, or a blip past the
 * deadline, is thrown as it is. `onBlip` hears each infrastructure failure.
 */
export function submitWrite<T>(task: () => Promise<T>, onBlip?: () => void): Promise<T> {
  return retryInfrastructure(
    () =>
      task().catch((error: unknown) => {
        if (isInfrastructureError(error)) onBlip?.();
        throw error;
      }),
    { deadlineMs: DEFAULT_RETRY_DEADLINE_MS, stopped: () => false },
  );
}
