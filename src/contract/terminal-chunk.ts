/** The one maker of a run's terminal chunks: `finish`, `tripwire`, `error` and `abort`. */
import type { AgentChunk, ChunkPayloads, TerminalChunk } from './chunk-types.js';
import { TripWire } from './errors/trip-wire.js';
import { makeChunk } from './make-chunk.js';
import { tripwirePayload } from './tripwire-payload.js';

/**
 * How a run ends: with its result (`finish`), with an error (`tripwire` for a `TripWire`, `error`
 * for anything else), or by the caller's abort (`abort`, carrying the signal's reason).
 *
 * @example
 * ```ts
 * const ending: RunEnding = { aborted: signal.reason };
 * ```
 */
export type RunEnding =
  | {
      /** The `finish` payload: the last step's finish reason and the run's output. */
      finish: ChunkPayloads['finish'];
    }
  | {
      /** What the run failed with (a `TripWire` ends it as a `tripwire`). */
      error: unknown;
    }
  | {
      /** The caller's abort reason (`abortSignal.reason`). */
      aborted: unknown;
    };

/**
 * The terminal chunk of `ending`: `finish` with its payload, `tripwire` for a `TripWire` error,
 * `error` carrying any other error as it is, `abort` carrying the abort reason.
 *
 * @example
 * ```ts
 * terminalChunk('run-1', { error: new TripWire('blocked', {}, 'guard') }).type; // 'tripwire'
 * terminalChunk('run-1', { error: new Error('boom') }).type; // 'error'
 * terminalChunk('run-1', { aborted: 'user left' }).payload; // { reason: 'user left' }
 * ```
 */
export function terminalChunk(runId: string, ending: { error: TripWire }): AgentChunk<'tripwire'>;
export function terminalChunk(runId: string, ending: { finish: ChunkPayloads['finish'] }): AgentChunk<'finish'>;
export function terminalChunk(runId: string, ending: RunEnding): TerminalChunk;
export function terminalChunk(runId: string, ending: RunEnding): TerminalChunk {
  if ('finish' in ending) return makeChunk(runId, 'finish', ending.finish);
  if ('aborted' in ending) return makeChunk(runId, 'abort', { reason: ending.aborted });
  const { error } = ending;
  return TripWire.isInstance(error) ? makeChunk(runId, 'tripwire', tripwirePayload(error)) : makeChunk(runId, 'error', { error });
}
