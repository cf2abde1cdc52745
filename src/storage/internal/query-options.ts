import type { GetMessagesOptions, ListThreadsOptions } from '../types.js';

/** The pagination of a `getMessages` call, checked. */
export interface MessageWindow {
  last?: number;
  limit?: number;
  offset: number;
}

function checkCount(operation: string, name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${operation}: "${name}" must be a non-negative integer, got ${String(value)}`);
  }
  return value;
}

/** Checks `last`/`limit`/`offset` of `getMessages` (non-negative integers; not `last` with `limit`). */
export function messageWindow(options: GetMessagesOptions): MessageWindow {
  const last = checkCount('getMessages', 'last', options.last);
  const limit = checkCount('getMessages', 'limit', options.limit);
  const offset = checkCount('getMessages', 'offset', options.offset) ?? 0;
  if (last !== undefined && limit !== undefined) {
    throw new RangeError('getMessages: "last" and "limit" cannot be combined; use "last" with "offset" to page backwards');
  }
  for (const name of ['after', 'before'] as const) {
    const date = options[name];
    if (date !== undefined && !(date instanceof Date && Number.isFinite(date.getTime()))) {
      throw new RangeError(`getMessages: "${name}" must be a valid Date`);
    }
  }
  return { ...(last === undefined ? {} : { last }), ...(limit === undefined ? {} : { limit }), offset };
}

/** Checks `limit`/`offset` of `listThreads`. */
export function threadWindow(options: ListThreadsOptions): { limit?: number; offset: number } {
  const limit = checkCount('listThreads', 'limit', options.limit);
  const offset = checkCount('listThreads', 'offset', options.offset) ?? 0;
  return { ...(limit === undefined ? {} : { limit }), offset };
}

/** Applies a window to items already in chronological order. */
export function sliceWindow<T>(items: ReadonlyArray<T>, window: MessageWindow): T[] {
  if (window.last !== undefined) {
    const end = Math.max(0, items.length - window.offset);
    return items.slice(Math.max(0, end - window.last), end);
  }
  return items.slice(window.offset, window.limit === undefined ? undefined : window.offset + window.limit);
}
