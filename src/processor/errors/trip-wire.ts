import { RxAgentError, hasMarker } from '../../message-list/errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.TripWire');

/** Options of `abort(reason, options)`: ask for a retry, attach metadata. */
export interface TripWireOptions<TMetadata = unknown> {
  /** Re-run the step with `reason` as feedback (needs `maxProcessorRetries`). */
  retry?: boolean;
  /** Structured data carried to the `tripwire` chunk. */
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
  readonly options: TripWireOptions<TMetadata>;
  /** Id of the processor that aborted. */
  readonly processorId: string | undefined;

  constructor(reason: string, options: TripWireOptions<TMetadata> = {}, processorId?: string) {
    super('TripWire', reason);
    this.reason = reason;
    this.options = options;
    this.processorId = processorId;
  }

  /** Whether the processor asked for a retry. */
  get retry(): boolean {
    return this.options.retry === true;
  }

  /** The metadata given to `abort()`. */
  get metadata(): TMetadata | undefined {
    return this.options.metadata;
  }

  static override isInstance(error: unknown): error is TripWire {
    return hasMarker(error, marker);
  }
}
