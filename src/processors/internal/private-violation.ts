/**
 * Violations with a server side and a client side. What a judge said (its free-text reason, the
 * values it found, a leaked passage) may quote the very content that was blocked: it goes to the
 * developer's `onViolation` only. The tripwire — which the client receives as a chunk, a UI stream
 * part, `result.tripwire` — carries a client-safe reason and metadata (processor id, categories).
 *
 * The runtime reports every `abort()` to the processor's `onViolation` with the tripwire's reason
 * and metadata; a block decided here was already reported with its full detail, so that second
 * report is skipped (each violation reaches `onViolation` once).
 */
import type { ProcessorViolation } from '../../contract/index.js';
import type { Verdict } from './judged-spans.js';

type OnViolation = (violation: ProcessorViolation) => void | Promise<void>;

/**
 * Calls a developer's callback (`onViolation`, `onError`, `onFailOpen`, `onJudge`) so that nothing
 * it throws or rejects with reaches the guard, the run or the process (no unhandled rejection).
 *
 * @example
 * ```ts
 * callQuietly(options.onError, error);
 * ```
 */
export function callQuietly<A>(handler: ((argument: A) => unknown) | undefined, argument: A): void {
  if (handler === undefined) return;
  try {
    const returned: unknown = handler(argument);
    if (returned !== null && (typeof returned === 'object' || typeof returned === 'function')) {
      const then: unknown = (returned as { then?: unknown }).then;
      if (typeof then === 'function') then.call(returned, undefined, () => undefined);
    }
  } catch {
    // a callback never interferes with processing
  }
}

function call(handler: OnViolation | undefined, violation: ProcessorViolation): void {
  callQuietly(handler, violation);
}

/**
 * A processor's violation reporting, split into the server side and the client side.
 *
 * @example
 * ```ts
 * const violations = new PrivateViolations('moderation', options.onViolation);
 * return violations.block('Content flagged for moderation. Categories: hate', { categories: ['hate'] }, { message, detail });
 * ```
 */
export class PrivateViolations {
  /** Client metadata objects of blocks already reported with their full detail. */
  private readonly reported = new WeakSet<object>();
  /** The processor's `onViolation`: the developer's handler, minus the runtime's repeat of a block reported here. */
  readonly onViolation: OnViolation | undefined;

  constructor(
    private readonly processorId: string,
    private readonly handler: OnViolation | undefined,
  ) {
    this.onViolation =
      handler === undefined
        ? undefined
        : (violation) => {
            const detail = violation.detail;
            if (detail !== null && typeof detail === 'object' && this.reported.has(detail)) return undefined;
            return handler(violation);
          };
  }

  /** Reports a violation that does not block (warn, filter, redact…) with its full detail. */
  report(message: string, detail: Record<string, unknown>): void {
    call(this.handler, { processorId: this.processorId, message, detail });
  }

  /**
   * A block: reports `server` (full detail) now and returns the verdict whose `reason` and
   * `metadata` (plus `processorId`) are all the client gets.
   */
  block(reason: string, metadata: Record<string, unknown>, server: { message: string; detail: Record<string, unknown> }): Extract<Verdict, { action: 'block' }> {
    const clientMetadata = { processorId: this.processorId, ...metadata };
    call(this.handler, { processorId: this.processorId, message: server.message, detail: { ...server.detail, blocked: true } });
    this.reported.add(clientMetadata);
    return { action: 'block', reason, metadata: clientMetadata };
  }
}
