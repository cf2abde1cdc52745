import { catchError, of, throwError, type MonoTypeOperatorFunction } from 'rxjs';
import type { AgentChunk, ChunkType } from '../contract/chunk-types.js';
import { TripWire } from '../contract/errors/trip-wire.js';
import { terminalChunk } from '../contract/terminal-chunk.js';

/**
 * The terminal `tripwire` chunk for a `TripWire`.
 *
 * @example
 * ```ts
 * import { TripWire } from 'rxagent';
 * import { toTripwireChunk } from 'rxagent/operators';
 * toTripwireChunk(new TripWire('blocked', {}, 'guard'), 'run-1').payload.processorId; // 'guard'
 * ```
 */
export function toTripwireChunk(tripwire: TripWire, runId: string): AgentChunk<'tripwire'> {
  return terminalChunk(runId, { error: tripwire });
}

/**
 * Turns a `TripWire` error notification into one terminal `tripwire` chunk and completes; other
 * errors pass through.
 *
 * ```
 * source:  --a--#          (# = TripWire)
 * result:  --a--(t|)       (t = { type: 'tripwire', payload: { reason, retry, metadata, processorId } })
 * ```
 *
 * @example
 * ```ts
 * import { processOutputStream, tripwireToChunk } from 'rxagent/operators';
 * chunks$.pipe(processOutputStream([guard], ctx), tripwireToChunk(ctx.runId)).subscribe(send);
 * ```
 */
export function tripwireToChunk(runId: string): MonoTypeOperatorFunction<ChunkType> {
  return catchError((error: unknown) =>
    TripWire.isInstance(error) ? of<ChunkType>(toTripwireChunk(error, runId)) : throwError(() => error),
  );
}
