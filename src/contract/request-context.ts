/** The type stored under `K` in `TValues` (`unknown` for keys it does not declare). */
export type ValueAt<TValues, K extends string> = TValues extends { [P in K]: infer V } ? V : unknown;

/**
 * What a request context needs to be read through (ours, or another package's with the same
 * methods, such as the reference implementation's `RequestContext`).
 *
 * @example
 * ```ts
 * import { RequestContext, type ReadableRequestContext } from 'rxagent';
 * const caller: ReadableRequestContext = new Map([['tenant', 'acme']]);
 * const runView = RequestContext.readThrough(caller); // reads 'tenant'; writes stay in the view
 * ```
 */
export interface ReadableRequestContext {
  /** The value of `key` (`undefined` when unset). */
  get(key: string): unknown;
  /** Whether `key` has a value. */
  has(key: string): boolean;
  /** Every key with its value. */
  entries(): Iterable<readonly [string, unknown]>;
}

function isReadable(value: unknown): value is ReadableRequestContext {
  return (
    typeof (value as ReadableRequestContext).entries === 'function' &&
    typeof (value as ReadableRequestContext).get === 'function' &&
    typeof (value as ReadableRequestContext).has === 'function'
  );
}

/** The key rxagent redacts in `serializeForSpan()` (the reference implementation's auth token key). */
const AUTH_TOKEN_KEY = 'mastra__authToken';

/** A stored value that `toJSON()` can keep: JSON-serialisable, no functions, symbols or cycles. */
function isSerializable(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  const type = typeof value;
  if (type === 'function' || type === 'symbol' || type === 'bigint') return false;
  if (type !== 'object') return true;
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false; // a cycle, a BigInt inside, a throwing toJSON
  }
}

function isPlainObjectOrArray(value: unknown): boolean {
  if (Array.isArray(value)) return true;
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A request context's own part: the values written on it and the keys it hides from its parent.
 * For a run's view (`requestContextOver`), the run's state holds this object and the view reads
 * and writes it: the run's request-context overlay, what a run snapshot keeps. Both made on first use.
 */
export interface RequestContextOverlay {
  /** The values written on the context, in order. */
  values: Map<string, unknown> | undefined;
  /** The keys of the parent deleted in the view. */
  deleted: Set<string> | undefined;
}

/** A fresh, empty overlay. */
export function emptyOverlay(): RequestContextOverlay {
  return { values: undefined, deleted: undefined };
}

/** Set by `RequestContext`'s static block: makes a view over `parent` (none: a plain context) whose own part is `overlay`. */
let viewOver: (parent: ReadableRequestContext | undefined, overlay: RequestContextOverlay) => RequestContext;

/**
 * A run's request context: reads fall through to the caller's context `parent` (none: a plain
 * context), writes and deletes go to `overlay`, an object the run's state owns.
 */
export function requestContextOver(parent: ReadableRequestContext | undefined, overlay: RequestContextOverlay): RequestContext {
  return viewOver(parent, overlay);
}

/** What a context without own values (and no parent) iterates: empty, never written. */
const NO_VALUES = new Map<string, unknown>();

/**
 * Request-scoped values shared by every processor and tool of one call, with `threadId` and
 * `resourceId` when the call uses memory. It has the reference implementation's whole public
 * surface (`get`/`set`, `getRaw`/`setRaw`/`hasRaw`/`deleteRaw` for keys outside the declared
 * values, `has`, `delete`, `clear`, `keys`, `values`, `entries`, `size()`, `forEach`, `all`,
 * `toJSON`, `serializeForSpan`), typed by `TValues`.
 *
 * A run never writes into the context its caller passed: it works on `RequestContext.readThrough(caller)`,
 * a per-run view that reads the caller's values and keeps its own writes (`threadId`/`resourceId`,
 * and anything hooks or tools set) to itself.
 *
 * @example
 * ```ts
 * import { RequestContext } from 'rxagent';
 * const requestContext = new RequestContext<{ userTier: 'free' | 'pro' }>();
 * requestContext.set('userTier', 'pro');
 * requestContext.setRaw('mastra__resourceId', 'user-42');
 * await agent.generate('hi', { requestContext });
 * ```
 */
export class RequestContext<TValues extends Record<string, unknown> = Record<string, unknown>> {
  /** Own values and the keys hidden from the parent (a run's view: the run's state holds this object). */
  #overlay: RequestContextOverlay;
  /** The context this one reads through to (a per-run view), if any. */
  #parent: ReadableRequestContext | undefined;

  constructor(initial?: Partial<TValues> | Iterable<readonly [string, unknown]> | ReadableRequestContext) {
    this.#overlay = emptyOverlay();
    this.#parent = undefined;
    if (initial === undefined || initial === null) return;
    const entries =
      Symbol.iterator in Object(initial)
        ? (initial as Iterable<readonly [string, unknown]>)
        : isReadable(initial)
          ? initial.entries() // another RequestContext (the reference's is not iterable)
          : Object.entries(initial);
    for (const [key, value] of entries) this.#own().set(key, value);
  }

  static {
    viewOver = (parent, overlay) => {
      const view = emptyRequestContext();
      view.#parent = parent;
      view.#overlay = overlay;
      return view;
    };
  }

  /** The own values, made on first write. */
  #own(): Map<string, unknown> {
    return (this.#overlay.values ??= new Map());
  }

  /**
   * A view over `parent`: reads fall through to `parent` (live), writes and deletes stay in the
   * view. rxagent gives each run such a view of the caller's context.
   *
   * @example
   * ```ts
   * import { RequestContext } from 'rxagent';
   * const shared = new RequestContext([['tenant', 'acme']]);
   * const run = RequestContext.readThrough(shared);
   * run.set('resourceId', 'user-1');
   * shared.has('resourceId'); // false
   * run.get('tenant'); // 'acme'
   * ```
   */
  static readThrough<T extends Record<string, unknown> = Record<string, unknown>>(parent: ReadableRequestContext): RequestContext<T> {
    const view = emptyRequestContext<T>();
    view.#parent = parent;
    return view;
  }

  /**
   * The values `context` holds itself and the keys it hides from its parent: for a per-run view
   * (`readThrough`), the run's own writes and deletes — what a run snapshot keeps.
   *
   * @example
   * ```ts
   * import { RequestContext } from 'rxagent';
   * const run = RequestContext.readThrough(new RequestContext([['tenant', 'acme']]));
   * run.set('step', 2);
   * RequestContext.ownEntriesOf(run); // { values: [['step', 2]], deleted: [] }
   * ```
   */
  static ownEntriesOf(context: RequestContext): {
    /** The entries written on this context, in order. */
    values: Array<[string, unknown]>;
    /** The keys deleted on it (hidden from its parent). */
    deleted: string[];
  } {
    return { values: [...(context.#overlay.values ?? NO_VALUES)], deleted: [...(context.#overlay.deleted ?? [])] };
  }

  #parentOf(): ReadableRequestContext | undefined {
    return this.#parent;
  }

  #read(key: string): { found: boolean; value: unknown } {
    const values = this.#overlay.values;
    if (values !== undefined && values.has(key)) return { found: true, value: values.get(key) };
    const parent = this.#parentOf();
    if (parent === undefined || this.#overlay.deleted?.has(key) === true || !parent.has(key)) return { found: false, value: undefined };
    return { found: true, value: parent.get(key) };
  }

  /** Every entry, own values over the parent's. */
  #all(): Map<string, unknown> {
    const parent = this.#parentOf();
    if (parent === undefined) return this.#overlay.values ?? NO_VALUES;
    const merged = new Map<string, unknown>();
    for (const [key, value] of parent.entries()) if (this.#overlay.deleted?.has(key) !== true) merged.set(key, value);
    if (this.#overlay.values !== undefined) for (const [key, value] of this.#overlay.values) merged.set(key, value);
    return merged;
  }

  /** The value stored under `key`, if any. */
  get<K extends string>(key: K): ValueAt<TValues, K> | undefined {
    if (this.#parentOf() === undefined) return this.#overlay.values?.get(key) as ValueAt<TValues, K> | undefined;
    return this.#read(key).value as ValueAt<TValues, K> | undefined;
  }

  /** A value under a key outside the declared values (e.g. `mastra__resourceId`); narrow it yourself. */
  getRaw(key: string): unknown {
    return this.#read(key).value;
  }

  /** Stores `value` under `key`. */
  set<K extends string>(key: K, value: ValueAt<TValues, K>): this {
    this.#own().set(key, value);
    this.#overlay.deleted?.delete(key);
    return this;
  }

  /** Stores a value under a key outside the declared values. */
  setRaw(key: string, value: unknown): this {
    this.#own().set(key, value);
    this.#overlay.deleted?.delete(key);
    return this;
  }

  /** Whether `key` has a value. */
  has(key: string): boolean {
    return this.#read(key).found;
  }

  /** Whether a key outside the declared values has a value. */
  hasRaw(key: string): boolean {
    return this.#read(key).found;
  }

  /** Removes `key` (in a view, the parent keeps it; the view no longer sees it). */
  delete(key: string): boolean {
    const existed = this.has(key);
    this.#overlay.values?.delete(key);
    const parent = this.#parentOf();
    if (parent !== undefined && parent.has(key)) (this.#overlay.deleted ??= new Set()).add(key);
    return existed;
  }

  /** Removes a key outside the declared values. */
  deleteRaw(key: string): boolean {
    return this.delete(key);
  }

  /** Removes every value (in a view, the parent keeps its values). */
  clear(): void {
    const parent = this.#parentOf();
    if (parent !== undefined) {
      this.#overlay.deleted ??= new Set();
      for (const [key] of parent.entries()) this.#overlay.deleted.add(key);
    }
    this.#overlay.values?.clear();
  }

  /** The keys with values. */
  keys(): IterableIterator<string> {
    return this.#all().keys();
  }

  /** The stored values. */
  values(): IterableIterator<unknown> {
    return this.#all().values();
  }

  /** The `[key, value]` pairs. */
  entries(): IterableIterator<[string, unknown]> {
    return this.#all().entries();
  }

  /** How many keys have values (a method, as in the reference implementation). */
  size(): number {
    return this.#all().size;
  }

  /** Calls `callback(value, key, map)` for each entry. */
  forEach(callback: (value: unknown, key: string, map: Map<string, unknown>) => void): void {
    const all = this.#all();
    all.forEach(callback);
  }

  /** Every value, own values over the parent's, as a plain object. */
  get all(): Partial<TValues> & Record<string, unknown> {
    return Object.fromEntries(this.#all()) as Partial<TValues> & Record<string, unknown>;
  }

  /** A plain-object copy of the JSON-serialisable values (functions, symbols, cycles are left out). */
  toJSON(): Partial<TValues> {
    const result: Record<string, unknown> = {};
    for (const [key, value] of this.#all()) if (isSerializable(value)) result[key] = value;
    return result as Partial<TValues>;
  }

  /**
   * The values for a tracing span: primitives and plain objects/arrays as they are, other objects
   * as `[object]`/`[function]`, and the auth token key (`mastra__authToken`) redacted.
   */
  serializeForSpan(): Record<string, unknown> {
    const safe: Record<string, unknown> = {};
    for (const [key, value] of this.#all()) {
      if (key === AUTH_TOKEN_KEY) safe[key] = '[REDACTED]';
      else if (value === null || (typeof value !== 'object' && typeof value !== 'function')) safe[key] = value;
      else if (isPlainObjectOrArray(value)) safe[key] = value;
      else safe[key] = `[${typeof value}]`;
    }
    return safe;
  }

  /** The thread of the run's memory (`memory: { thread }`; set by the agent in the run's view), if any. */
  get threadId(): string | undefined {
    const value = this.get('threadId');
    return typeof value === 'string' ? value : undefined;
  }

  /** The resource (user, tenant…) of the run's memory (`memory: { resource }`), if any. */
  get resourceId(): string | undefined {
    const value = this.get('resourceId');
    return typeof value === 'string' ? value : undefined;
  }
}

/**
 * `new RequestContext()` from outside the class body: a class that names itself inside its own
 * body is emitted as `var RequestContext = class _RequestContext` by esbuild, so the built class
 * would be called `_RequestContext` (checked by smoke/export-names.mjs).
 */
function emptyRequestContext<T extends Record<string, unknown>>(): RequestContext<T> {
  return new RequestContext<T>();
}
