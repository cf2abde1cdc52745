/** Rewriting every string inside a JSON-like value (tool arguments, tool results, data chunks). */

const MAX_DEPTH = 64;

/**
 * `value` with each string (at any depth, in arrays and plain objects; keys are left alone) passed
 * through `transform`. Returns the same reference when nothing changed, so untouched values keep
 * their identity. Errors become a copy with a transformed `message`; other class instances
 * (dates, buffers…) and anything deeper than 64 levels are left as they are.
 */
export function mapStrings(value: unknown, transform: (text: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return transform(value);
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const mapped = value.map((item) => {
      const next = mapStrings(item, transform, depth + 1);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? mapped : value;
  }
  if (value instanceof Error) {
    const message = transform(value.message);
    if (message === value.message) return value;
    const copy = new Error(message);
    copy.name = value.name;
    return copy;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  let changed = false;
  const mapped: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const next = mapStrings(item, transform, depth + 1);
    if (next !== item) changed = true;
    mapped[key] = next;
  }
  return changed ? mapped : value;
}
