/**
 * The contract's rules for reporting a block, in one place: the reference's default abort reasons,
 * and `onViolation` called so that nothing it throws or rejects with reaches the run.
 */
import type { ProcessorHookName } from './errors/processor-error.js';
import type { Processor } from './processor-types.js';

/**
 * Default abort reasons, as the reference implementation words them.
 *
 * @example
 * ```ts
 * defaultAbortReason('guard', 'processOutputStream'); // 'Stream part blocked by guard'
 * ```
 */
export function defaultAbortReason(processorId: string, hook: ProcessorHookName): string {
  return hook === 'processOutputStream' ? `Stream part blocked by ${processorId}` : `Tripwire triggered by ${processorId}`;
}

/**
 * Calls `onViolation`, swallowing whatever it throws or rejects with.
 *
 * @example
 * ```ts
 * notifyViolation(guard, 'blocked: email', { rule: 'email' });
 * ```
 */
export function notifyViolation(processor: Processor, message: string, detail?: unknown): void {
  let onViolation: Processor['onViolation'];
  try {
    onViolation = processor.onViolation;
  } catch {
    return;
  }
  if (typeof onViolation !== 'function') return;
  try {
    const returned: unknown = onViolation.call(processor, { processorId: processor.id, message, detail });
    if (returned !== null && typeof returned === 'object' && typeof (returned as Promise<void>).catch === 'function') {
      (returned as Promise<void>).catch(() => undefined);
    }
  } catch {
    // onViolation's failures never interfere with processing (specification).
  }
}
