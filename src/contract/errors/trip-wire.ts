import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';
import { thrownMessage } from '../../errors/thrown-message.js';
import { encodeJson } from '../json-codec.js';
import { JsonEncodingError } from './json-encoding-error.js';

const marker = Symbol.for('rxagent.error.TripWire');

/** Options of `abort(reason, options)`: ask for a retry, attach metadata. */
export interface TripWireOptions<TMetadata = unknown> {
  /** Re-run the step with `reason` as feedback (needs `maxProcessorRetries`). */
  retry?: boolean;
  /**
   * Structured data carried to the `tripwire` chunk (and from there to `result.tripwire`, the UI
   * stream's `data-tripwire` part, the durable journal): JSON data as rxagent's codec writes it
   * (a `Date`, an `Error`, bytes included). What cannot be read or written so — a cycle, a
   * `BigInt`, a `Map`, `NaN`, a getter or a Proxy that throws — is refused where the tripwire is made.
   */
  metadata?: TMetadata;
}

/**
 * Thrown by a processor's `abort()`: stops the run (or, with `retry: true` and a retry budget,
 * re-runs the step). In the stream it becomes one terminal `tripwire` chunk.
 *
 * @example
 * ```ts
 * import { TripWire } from 'rxagent';
 * const tripwire = new TripWire('PII found', { metadata: { kind: 'email' } }, 'pii-guard');
 * TripWire.isInstance(tripwire); // true
 * ```
 */
export class TripWire<TMetadata = unknown> extends RxAgentError {
  private readonly [marker] = true;
  /** The human-readable reason (same as `message`). */
  readonly reason: string;
  /** The options given, read once into an object of its own (a getter or a Proxy given is not read again). */
  readonly options: TripWireOptions<TMetadata>;
  /** Id of the processor that aborted. */
  readonly processorId: string | undefined;

  /**
   * Throws when `options` cannot be read, or their `metadata` cannot be read or written as JSON
   * (a `JsonEncodingError` naming the path — `tripwire metadata is not JSON at $.self: cycle` — or a
   * `TypeError` for a value that throws where it is read): in a hook (`abort()`, or `new TripWire()`
   * thrown), the run ends with a `ProcessorError` naming the processor and the hook.
   */
  constructor(reason: string, options: TripWireOptions<TMetadata> = {}, processorId?: string) {
    super('TripWire', reason);
    this.reason = reason;
    // read here, once: `retry` and `metadata` are read again where the run decides and where the
    // tripwire chunk is made, and options that throw (or change) there would fail the run from
    // inside the loop; options that cannot be read throw here, from the code that made them
    this.options = typeof options === 'object' && options !== null ? { ...options } : {};
    if (this.options.metadata !== undefined) checkMetadata(this.options.metadata);
    this.processorId = processorId;
  }

  /** Whether a retry of the step was asked for. */
  get retry(): boolean {
    return this.options.retry === true;
  }

  /** The metadata given to `abort()` (JSON data, checked when the tripwire was made). */
  get metadata(): TMetadata | undefined {
    return this.options.metadata;
  }

  static override isInstance(error: unknown): error is TripWire {
    return hasMarker(error, marker);
  }
}

/**
 * Throws unless `metadata` can be read and written as JSON by the codec every consumer of a
 * tripwire uses (the journal's `encodeJson`; a UI stream's `JSON.stringify` reads the same values):
 * checked once, on the value as given (it is kept, not copied).
 */
function checkMetadata(metadata: unknown): void {
  try {
    encodeJson(metadata, 'tripwire metadata');
  } catch (error) {
    if (JsonEncodingError.isInstance(error)) throw error;
    throw new TypeError(`tripwire metadata cannot be read: ${thrownMessage(error) ?? 'a value that cannot be read either'}`);
  }
}

function constructorName(value: object): string | undefined {
  try {
    const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** A `TripWire` from another copy or package (the reference's): an `Error` named `TripWire`. */
export interface ForeignTripWire extends Error {
  /** Its options (`retry`, `metadata`), when it has them. */
  options?: TripWireOptions;
  /** The processor that threw it, when it says. */
  processorId?: unknown;
}

/**
 * True for a tripwire thrown by another package that follows the processor contract — an `Error`
 * named `TripWire` (by `name` or by its class) carrying `options` (`{ retry?, metadata? }`) and an
 * optional `processorId`, like the reference implementation's `new TripWire(reason, options, processorId)`.
 * rxagent's own `TripWire` (any copy) is matched by `TripWire.isInstance`.
 *
 * @example
 * ```ts
 * import { isForeignTripWire } from 'rxagent';
 * class TripWire extends Error { constructor(reason: string, public options = {}, public processorId?: string) { super(reason); } }
 * isForeignTripWire(new TripWire('blocked', { retry: true }, 'guard')); // true
 * ```
 */
export function isForeignTripWire(error: unknown): error is ForeignTripWire {
  if (typeof error !== 'object' || error === null || !(error instanceof Error)) return false;
  if (error.name !== 'TripWire' && constructorName(error) !== 'TripWire') return false;
  const options: unknown = (error as { options?: unknown }).options;
  if (options !== undefined && (typeof options !== 'object' || options === null)) return false;
  const processorId: unknown = (error as { processorId?: unknown }).processorId;
  return processorId === undefined || typeof processorId === 'string';
}

/**
 * rxagent's `TripWire` for `error` when it is one (ours, or another package's by shape — reason,
 * options with `retry` and `metadata`, and processor id kept as given); `undefined` otherwise.
 *
 * @example
 * ```ts
 * import { toTripWire } from 'rxagent';
 * const tripwire = toTripWire(caught);
 * if (tripwire) console.log(tripwire.reason, tripwire.retry, tripwire.processorId);
 * ```
 */
export function toTripWire(error: unknown): TripWire | undefined {
  if (TripWire.isInstance(error)) return error;
  if (!isForeignTripWire(error)) return undefined;
  const options = error.options ?? {};
  const processorId = typeof error.processorId === 'string' ? error.processorId : undefined;
  return new TripWire(error.message, { ...options }, processorId);
}
