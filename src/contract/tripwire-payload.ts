/** The payload a `TripWire` becomes: the one place a tripwire turns into chunk data. */
import type { TripwirePayload } from './chunk-types.js';
import type { TripWire } from './errors/trip-wire.js';

/**
 * The `tripwire` chunk payload of a `TripWire` (`processorId` `'unknown'` when it has none).
 *
 * @example
 * ```ts
 * tripwirePayload(new TripWire('blocked', { retry: true }, 'guard')); // { reason: 'blocked', retry: true, processorId: 'guard' }
 * ```
 */
export function tripwirePayload(tripwire: TripWire): TripwirePayload {
  return {
    reason: tripwire.reason,
    retry: tripwire.retry,
    ...(tripwire.metadata === undefined ? {} : { metadata: tripwire.metadata }),
    processorId: tripwire.processorId ?? 'unknown',
  };
}
