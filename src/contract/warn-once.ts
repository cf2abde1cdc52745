/**
 * rxagent's one channel for warnings about how a processor is used (a mistake that does not stop
 * the run): `console.warn`, prefixed `[rxagent]`, at most once per processor object and kind of
 * warning in a process — never per chunk or per run. Tests spy on `console.warn`; to route the
 * warnings elsewhere, replace `console.warn` (or filter on the `[rxagent]` prefix).
 */

const warned = new WeakMap<object, Set<string>>();

/**
 * Warns `message` once for `processor` and `kind`; later calls with the same pair do nothing.
 * Returns whether it warned.
 *
 * @example
 * ```ts
 * warnOnce(processor, 'no-hook-in-list', `[rxagent] processor "${processor.id}" …`);
 * ```
 */
export function warnOnce(processor: object, kind: string, message: string): boolean {
  let kinds = warned.get(processor);
  if (kinds === undefined) {
    kinds = new Set();
    warned.set(processor, kinds);
  }
  if (kinds.has(kind)) return false;
  kinds.add(kind);
  console.warn(message.startsWith('[rxagent]') ? message : `[rxagent] ${message}`);
  return true;
}
