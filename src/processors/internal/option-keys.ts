/**
 * The names a processor's options object may hold, checked once at construction (before any
 * value is read): a key the processor does not know — a misspelt `stratgy`, a `Strategy` — is an
 * `InvalidProcessorOptionError` naming the processor and the key, with the closest known name;
 * never an option silently left at its default.
 *
 * A processor knows its own options and every option the reference's processor of the same name
 * accepts (so code written for the reference keeps constructing). A reference option rxagent does
 * not implement is accepted and warned about once per process and processor (`warnOnce`), with
 * what to use instead.
 *
 * What counts as a key: every own property of the options object — string keys, enumerable or
 * not, and symbol keys. An option given as a getter is refused (it is read when the processor is
 * made; a getter may throw, or answer one thing to the check and another later), and so are options,
 * or an option's value, that cannot be read (a revoked Proxy): each an `InvalidProcessorOptionError`
 * naming it, never a plain `TypeError` from deep inside a constructor. The options object holds option names and nothing else, so a symbol key
 * is refused too. A class instance is accepted when its options are own properties (class fields);
 * a property its prototype chain (below `Object.prototype`) adds — a getter, a method — is refused:
 * the processors read some options directly and pass others on as a spread, which drops inherited
 * and non-enumerable properties, so such an option would be read by one part and not by another.
 */
import { InvalidProcessorOptionError, RxAgentError, closestKey, warnOnce } from '../../contract/index.js';

/** Why an option given as a getter is refused. */
const GETTER_PROBLEM = 'is a getter: give it as a plain value (an option is read when the processor is made; a getter may throw or answer differently each time)';

/**
 * `true` for each option name of `T` — every one (a new option left out of the list fails to
 * compile), and no other (an object literal of this type refuses extra names).
 *
 * @example
 * ```ts
 * const names = optionNames<UnicodeNormalizerOptions>({ stripControlChars: true, preserveEmojis: true, collapseWhitespace: true, trim: true });
 * ```
 */
export type OptionNames<T> = { readonly [K in keyof T]-?: true };

/**
 * The option names of `T`, listed by an {@link OptionNames} record.
 *
 * @example
 * ```ts
 * const names = optionNames<BatchPartsOptions>({ batchSize: true, maxWaitTime: true, emitOnNonText: true, scheduler: true });
 * ```
 */
export function optionNames<T>(names: OptionNames<T>): readonly string[] {
  return Object.freeze(Object.keys(names));
}

/**
 * What one processor (or one nested options object) knows.
 *
 * @example
 * ```ts
 * const keys = optionKeys('batch-parts', optionNames<BatchPartsOptions>({ … }));
 * checkOptionKeys(keys, options);
 * ```
 */
export interface OptionKeys {
  /** The processor's id (the error's `processorId`). */
  readonly processorId: string;
  /** Every name accepted: the processor's own options, the reference's it implements, and {@link OptionKeys.ignored}'s. */
  readonly known: readonly string[];
  /** The reference's option names accepted without effect, each with what to use instead. */
  readonly ignored: Readonly<Record<string, string>>;
}

/**
 * The {@link OptionKeys} of a processor: `names` (lists of its own and shared options) and the
 * reference's options it accepts without effect (`ignored`: name → what to use instead).
 *
 * @example
 * ```ts
 * const keys = optionKeys('moderation', [...GUARD_JUDGE_OPTION_NAMES, ...own], { chunkWindow: 'output is judged per window' });
 * ```
 */
export function optionKeys(processorId: string, names: readonly string[], ignored: Readonly<Record<string, string>> = {}): OptionKeys {
  const known = [...new Set([...names, ...Object.keys(ignored)])];
  return Object.freeze({ processorId, known: Object.freeze(known), ignored: Object.freeze({ ...ignored }) });
}

/**
 * Throws an `InvalidProcessorOptionError` for the first key of `options` that `keys` does not know
 * (naming the closest known one), a symbol key, a non-enumerable one, or a property its prototype
 * chain adds; warns once per process for each reference option accepted without effect. `path`
 * prefixes the key for a nested object (`rules[0]` gives `rules[0].stratgy`). `options` that is no
 * object is refused naming `path` (or `options`).
 *
 * @example
 * ```ts
 * checkOptionKeys(UNICODE_NORMALIZER_KEYS, options); // { trimm: true } throws: did you mean trim?
 * ```
 */
export function checkOptionKeys(keys: OptionKeys, options: unknown, path?: string): void {
  const { processorId, known } = keys;
  const where = path ?? 'options';
  if (typeof options !== 'object' || options === null || !readable(options) || Array.isArray(options)) {
    throw readable(options) ? new InvalidProcessorOptionError(processorId, where, options, 'an options object') : unreadable(processorId, where, options);
  }
  const named = (key: string) => (path === undefined ? key : `${path}.${key}`);
  const ownKeys = ownKeysOf(processorId, where, options);
  for (const key of ownKeys) {
    const name = typeof key === 'symbol' ? String(key) : key;
    let descriptor: PropertyDescriptor | undefined;
    try {
      descriptor = Reflect.getOwnPropertyDescriptor(options, key);
    } catch {
      throw unreadable(processorId, named(name), undefined);
    }
    // the value is not read through a getter: it may throw, or answer differently each time
    const value: unknown = descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
    if (typeof key === 'symbol') throw keyError(processorId, named(name), value, 'is a symbol key: the options object holds option names only');
    if (!known.includes(key)) throw unknownKey(keys, named(key), key, value);
    if (descriptor?.enumerable !== true) {
      throw keyError(processorId, named(key), value, 'is not enumerable: give it as an ordinary property (a spread of the options would drop it)');
    }
    if (!('value' in descriptor)) {
      throw keyError(processorId, named(key), undefined, GETTER_PROBLEM);
    }
    checkOptionValue(processorId, named(key), value);
    const instead = keys.ignored[key];
    if (instead !== undefined) {
      // once per process and processor kind: a processor made per request must not warn per request
      warnOnce(keys, `ignored-option:${named(key)}`, `[rxagent] ${processorId}: option ${named(key)} is the reference's and has no effect here — ${instead}.`);
    }
  }
  let inherited: Array<string | symbol> = [];
  try {
    for (let prototype = Object.getPrototypeOf(options) as object | null; prototype !== null && prototype !== Object.prototype; prototype = Object.getPrototypeOf(prototype) as object | null) {
      inherited = [...inherited, ...Reflect.ownKeys(prototype)];
    }
  } catch {
    throw unreadable(processorId, where, options);
  }
  for (const key of inherited) {
    if (key === 'constructor') continue;
    const name = typeof key === 'symbol' ? String(key) : key;
    if (typeof key === 'string' && !known.includes(key)) throw unknownKey(keys, named(name), key, undefined);
    throw keyError(processorId, named(name), undefined, "is inherited from the options' prototype: give options as own properties (an object literal or class fields)");
  }
}

/** `value`'s own keys, or an `InvalidProcessorOptionError` naming `at` when a Proxy's trap throws on them. */
function ownKeysOf(processorId: string, at: string, value: object): Array<string | symbol> {
  try {
    return Reflect.ownKeys(value);
  } catch {
    throw unreadable(processorId, at, value);
  }
}

/**
 * Whether `value` can be inspected: false for a revoked Proxy, or one whose `getPrototypeOf` trap
 * throws (every option reader would throw a plain `TypeError` on it). Never throws.
 */
function readable(value: unknown): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return true;
  try {
    Array.isArray(value);
    Reflect.getPrototypeOf(value);
    return true;
  } catch {
    return false;
  }
}

/** Arrays, and objects of `Object.prototype` or none: option data, looked into by {@link checkOptionValue}. */
function plainData(value: object): boolean {
  if (Array.isArray(value)) return true;
  const prototype = Reflect.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Throws an `InvalidProcessorOptionError` naming the first place inside an option's `value` — the
 * value itself, or an entry or property at any depth of its arrays and plain objects (`rules[1]`,
 * `channels[0]`, `providerOptions.openai`) — that cannot be read: a revoked Proxy, a Proxy whose
 * traps throw or whose entries throw when read, a list entry given as a getter. A getter on a plain
 * object deeper down is neither called nor refused (the object is the caller's: a lazy schema reads
 * so); the option-shaped objects (a rule, a matcher, a choice) refuse theirs through
 * {@link checkOptionKeys}. Objects of a class (a model instance, a schema, a store, a RegExp) are
 * the caller's: their own data properties are read once (a Proxy posing as one, whose reads throw,
 * is refused), never looked into further. Walks without recursion, each object once (shared or
 * cyclic data is fine); never calls a getter.
 *
 * @example
 * ```ts
 * checkOptionValue('regex-filter', 'rules', [{ name: 'a', pattern: /a/ }, revoked]); // throws naming rules[1]
 * ```
 */
export function checkOptionValue(processorId: string, option: string, value: unknown): void {
  const seen = new Set<object>();
  const pending: Array<readonly [string, unknown]> = [[option, value]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [at, current] = next;
    if (!readable(current)) throw unreadable(processorId, at, current);
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    if (!plainData(current)) {
      answersReads(processorId, at, current);
      continue;
    }
    const array = Array.isArray(current);
    const entries: Array<readonly [string, unknown]> = [];
    const keys = ownKeysOf(processorId, at, current);
    for (const key of keys) {
      const name = typeof key === 'symbol' ? `${at}[${String(key)}]` : array && /^\d+$/.test(key) ? `${at}[${key}]` : `${at}.${key}`;
      let descriptor: PropertyDescriptor | undefined;
      let entry: unknown;
      try {
        descriptor = Reflect.getOwnPropertyDescriptor(current, key);
        // read as the processor reads it: a Proxy whose reads throw is itself what cannot be read
        if (descriptor === undefined || 'value' in descriptor) entry = Reflect.get(current, key);
      } catch {
        throw unreadable(processorId, at, current);
      }
      if (descriptor !== undefined && !('value' in descriptor)) {
        if (array) throw keyError(processorId, name, undefined, GETTER_PROBLEM);
        continue;
      }
      entries.push([name, entry]);
    }
    // the first entry is looked at first: the error names the first place that cannot be read
    pending.push(...entries.reverse());
  }
}

/**
 * Throws when reading an own data property of `value` (an object of a class: a model, a store, a
 * schema — not looked into further) throws: a Proxy posing as one, whose reads throw, is refused
 * naming `option` here rather than throwing a plain error from the processor's first read. Byte
 * arrays are not read (their entries are numbers); never calls a getter.
 */
function answersReads(processorId: string, option: string, value: object): void {
  if (ArrayBuffer.isView(value)) return;
  try {
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
      if (descriptor !== undefined && 'value' in descriptor) Reflect.get(value, key);
    }
  } catch {
    throw unreadable(processorId, option, value);
  }
}

/**
 * `read()`, reading the caller's object under `option` (a model, a tool) at construction: what it
 * throws — a getter that throws, a Proxy whose traps throw on the key read — is an
 * `InvalidProcessorOptionError` naming `option`; rxagent's own errors (a model that is no model: a
 * `ModelResolutionError`) pass as they are.
 *
 * @example
 * ```ts
 * this.model = readingOption(processorId, 'model', () => resolveProcessorModel(options.model, options.registry));
 * ```
 */
export function readingOption<T>(processorId: string, option: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (RxAgentError.isInstance(error)) throw error;
    throw unreadable(processorId, option, undefined);
  }
}

/** An options object, or an option's value, that cannot be read. */
function unreadable(processorId: string, option: string, value: unknown): InvalidProcessorOptionError {
  return keyError(processorId, option, value, 'cannot be read (a revoked Proxy, or one whose traps throw): give a plain value');
}

/** An unknown key, with the closest known name. */
function unknownKey(keys: OptionKeys, option: string, key: string, value: unknown): InvalidProcessorOptionError {
  const closest = closestKey(key, keys.known);
  const hint = keys.known.length === 0 ? 'it takes none' : closest === undefined ? `its options are ${keys.known.join(', ')}` : `did you mean ${closest}?`;
  return keyError(keys.processorId, option, value, `is not one of its options (${hint})`);
}

/**
 * The error for a key (not a value): its message leaves the value out — a misspelt `hashKey` must
 * not put the key material in a log —, the error's `value` keeps it.
 */
function keyError(processorId: string, option: string, value: unknown, problem: string): InvalidProcessorOptionError {
  return new InvalidProcessorOptionError(processorId, option, value, { problem });
}
