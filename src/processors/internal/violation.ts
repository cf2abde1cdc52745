/** Calls a processor's `onViolation` for a non-blocking violation (warn, filter, redact…). */
import type { Processor } from '../../contract/index.js';

/**
 * Calls `processor.onViolation({ processorId, message, detail })`, swallowing whatever it throws or
 * rejects with. Blocking violations go through `abort()` instead, which the runtime reports to
 * `onViolation` itself (so each violation is reported exactly once).
 */
export function reportViolation(processor: Pick<Processor, 'id' | 'onViolation'>, message: string, detail?: unknown): void {
  const onViolation = processor.onViolation;
  if (onViolation === undefined) return;
  try {
    const returned: unknown = onViolation.call(processor, { processorId: processor.id, message, detail });
    if (returned !== null && typeof returned === 'object' && typeof (returned as Promise<void>).catch === 'function') {
      (returned as Promise<void>).catch(() => undefined);
    }
  } catch {
    // onViolation never interferes with processing.
  }
}
