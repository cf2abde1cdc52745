/**
 * The classifier of infrastructure failures and the backoff between attempts live with the
 * stores (`src/storage/infrastructure-error.ts`), which retry such failures themselves; the
 * durable runtime uses the same ones, so a failure a store gave up on fails the attempt, never
 * the run.
 */
import {
  INFRASTRUCTURE_BACKOFF_BASE_MS,
  INFRASTRUCTURE_BACKOFF_MAX_MS,
  infrastructureBackoffMs,
  isInfrastructureError,
  isStorageInfrastructureError,
} from '../../storage/index.js';

export { INFRASTRUCTURE_BACKOFF_BASE_MS, INFRASTRUCTURE_BACKOFF_MAX_MS, infrastructureBackoffMs, isInfrastructureError, isStorageInfrastructureError };
