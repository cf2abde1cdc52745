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
import { InvalidProcessorOptionError, closestKey, warnOnce } from '../../contract/index.js';

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
  let ownKeys: Array<string | symbol>;
  try {
    ownKeys = Reflect.ownKeys(options);
  } catch {
    throw unreadable(processorId, where, options);
  }
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
      throw keyError(processorId, named(key), undefined, 'is a getter: give it as a plain value (an option is read when the processor is made; a getter may throw or answer differently each time)');
    }
    if (!readable(value)) throw unreadable(processorId, named(key), value);
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
