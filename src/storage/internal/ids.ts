import { InvalidIdError, MAX_STORAGE_ID_LENGTH, type InvalidIdField, type InvalidIdReason } from '../errors/invalid-id-error.js';

/** A UTF-16 surrogate code unit without its partner (with `u`, a valid pair is one code point). */
const loneSurrogate = /\p{Cs}/u;

/**
 * What is wrong with an id, or `undefined` when every store can hold it: ids are non-empty
 * strings of at most `MAX_STORAGE_ID_LENGTH` code units, without NUL, and well-formed UTF-16
 * (SQL drivers encode a lone surrogate as U+FFFD, so two different ids would name one row).
 */
export function storageIdProblem(value: unknown): { reason: InvalidIdReason; message: string } | undefined {
  if (typeof value !== 'string') return { reason: 'not-a-string', message: `expected a string, got ${value === null ? 'null' : typeof value}` };
  if (value.length === 0) return { reason: 'empty', message: 'the id is empty' };
  if (value.length > MAX_STORAGE_ID_LENGTH) {
    return { reason: 'too-long', message: `${value.length} UTF-16 code units, at most ${MAX_STORAGE_ID_LENGTH} are allowed` };
  }
  if (value.includes('\u0000')) return { reason: 'nul', message: 'the id contains a NUL character (U+0000)' };
  if (loneSurrogate.test(value)) return { reason: 'lone-surrogate', message: 'the id is not well-formed UTF-16 (it holds a lone surrogate)' };
  return undefined;
}

/**
 * Checks a thread or resource id the same way on every store, before anything is read or
 * written (`storageIdProblem`). Throws `InvalidIdError`.
 */
export function assertStorageId(field: InvalidIdField, value: unknown): asserts value is string {
  const problem = storageIdProblem(value);
  if (problem !== undefined) throw new InvalidIdError({ field, ...problem });
}
