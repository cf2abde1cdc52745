/**
 * Whether a processor has a hook: a function under the hook's name (own, inherited from a class, or
 * a getter's value). Every stage decides by this one rule whether it calls a processor and whether
 * it is in the pipeline at all.
 */
import type { ProcessorHookName } from './errors/processor-error.js';

/**
 * Whether `processor` has `hook` (a function under that name).
 *
 * @example
 * ```ts
 * isHooked({ id: 'p', processOutputStream: ({ part }) => part }, 'processOutputStream'); // true
 * ```
 */
export function isHooked(processor: object, hook: ProcessorHookName): boolean {
  return typeof (processor as Record<string, unknown>)[hook] === 'function';
}

/**
 * Whether any of `processors` has `hook` ({@link isHooked}).
 *
 * @example
 * ```ts
 * if (!hasHook(outputProcessors, 'processOutputStream')) return identity;
 * ```
 */
export function hasHook(processors: readonly object[], hook: ProcessorHookName): boolean {
  for (const processor of processors) if (isHooked(processor, hook)) return true;
  return false;
}
