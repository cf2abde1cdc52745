/** Retention options of the run journals, resolved and checked once (the same rules for both). */
import type { PurgeOptions, RunRetentionOptions } from '../journal/types.js';

/** Chunks of ended runs: 7 days (a user back after a weekend can still resume or replay a run). */
export const DEFAULT_CHUNK_RETENTION_SECONDS = 7 * 24 * 3600;
/** Rows of ended runs: 30 days (a late client is told "gone", 410, rather than "unknown", 404). */
export const DEFAULT_RUN_RETENTION_SECONDS = 30 * 24 * 3600;

/** Resolved retention, in seconds. */
export interface Retention {
  readonly chunkSeconds: number;
  readonly runSeconds: number;
}

function seconds(owner: string, field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${owner}: ${field} must be an integer number of seconds ≥ 0 (got ${String(value)})`);
  }
  return value;
}

/** The retention of `options` (defaults above); a `RangeError` naming the field for a bad value. */
export function resolveRetention(owner: string, options: RunRetentionOptions): Retention {
  const chunkSeconds = seconds(owner, 'chunkRetentionSeconds', options.chunkRetentionSeconds, DEFAULT_CHUNK_RETENTION_SECONDS);
  const runSeconds = seconds(owner, 'runRetentionSeconds', options.runRetentionSeconds, Math.max(DEFAULT_RUN_RETENTION_SECONDS, chunkSeconds));
  if (runSeconds < chunkSeconds) {
    throw new RangeError(`${owner}: runRetentionSeconds (${runSeconds}) must be ≥ chunkRetentionSeconds (${chunkSeconds}): a run's row outlives its chunks`);
  }
  return { chunkSeconds, runSeconds };
}

/** `purgeExpired`'s options resolved: rows per statement and statements per call. */
export function resolvePurge(options: PurgeOptions = {}): { batchSize: number; maxStatements: number } {
  const count = (field: keyof PurgeOptions, fallback: number): number => {
    const value = options[field];
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`RunJournal.purgeExpired: ${field} must be an integer ≥ 1 (got ${String(value)})`);
    }
    return value;
  };
  return { batchSize: count('batchSize', 1000), maxStatements: count('maxStatements', 100) };
}
