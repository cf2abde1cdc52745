/**
 * A processor stage only where some processor has its hook: with none, the stage's operator
 * (a `defer`, a `concatMap`, an inner `defer` and an `of` per value) is replaced by the identity,
 * which `pipe` skips, so a run without processors subscribes nothing for it.
 */
import { identity, type OperatorFunction } from 'rxjs';
import type { ProcessorHookName } from '../../contract/errors/processor-error.js';
import { hasHook } from '../../contract/has-hook.js';

/**
 * `stage(processors)` when some processor has `hook`, else the identity (the stage would pass its
 * value through unchanged: with no binding, every `process*` operator returns its input).
 *
 * @example
 * ```ts
 * of(request).pipe(whenHooked(env.inputProcessors, 'processLLMRequest', (processors) => processLLMRequest(processors, env.ctx)));
 * ```
 */
export function whenHooked<T, P extends readonly object[]>(
  processors: P,
  hook: ProcessorHookName,
  stage: (processors: P) => OperatorFunction<T, T>,
): OperatorFunction<T, T> {
  return hasHook(processors, hook) ? stage(processors) : identity;
}
