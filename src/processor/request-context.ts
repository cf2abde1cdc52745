/** The type stored under `K` in `TValues` (`unknown` for keys it does not declare). */
export type ValueAt<TValues, K extends string> = TValues extends { [P in K]: infer V } ? V : unknown;

/**
 * Request-scoped values shared by every processor and tool of one call (typed `get`/`set`),
 * with `threadId` and `resourceId` when the call uses memory.
 *
 * @example
 * ```ts
 * import { RequestContext } from 'rxagent';
 * const requestContext = new RequestContext<{ userTier: 'free' | 'pro' }>();
 * requestContext.set('userTier', 'pro');
 * await agent.generate('hi', { requestContext });
 * ```
 */
export class RequestContext<TValues extends Record<string, unknown> = Record<string, unknown>> {
  readonly #values: Map<string, unknown>;

  constructor(initial?: Partial<TValues> | Iterable<readonly [string, unknown]>) {
    this.#values = new Map();
    if (initial === undefined) return;
    const entries =
      Symbol.iterator in Object(initial)
        ? (initial as Iterable<readonly [string, unknown]>)
        : Object.entries(initial);
    for (const [key, value] of entries) this.#values.set(key, value);
  }

  /** The value stored under `key`, if any. */
  get<K extends string>(key: K): ValueAt<TValues, K> | undefined {
    return this.#values.get(key) as ValueAt<TValues, K> | undefined;
  }

  /** Stores `value` under `key`. */
  set<K extends string>(key: K, value: ValueAt<TValues, K>): this {
    this.#values.set(key, value);
    return this;
  }

  /** Whether `key` has a value. */
  has(key: string): boolean {
    return this.#values.has(key);
  }

  /** Removes `key`. */
  delete(key: string): boolean {
    return this.#values.delete(key);
  }

  /** The keys with values. */
  keys(): IterableIterator<string> {
    return this.#values.keys();
  }

  /** A plain-object copy of every value. */
  toJSON(): Partial<TValues> {
    return Object.fromEntries(this.#values) as Partial<TValues>;
  }

  /** The memory thread of this call (set by the agent when the call uses memory). */
  get threadId(): string | undefined {
    const value = this.#values.get('threadId');
    return typeof value === 'string' ? value : undefined;
  }

  /** The memory resource (user, tenant…) of this call. */
  get resourceId(): string | undefined {
    const value = this.#values.get('resourceId');
    return typeof value === 'string' ? value : undefined;
  }
}
