/**
 * The `x-rxagent-run-id` header: how a run id travels between the durable readers and
 * `DurableChatTransport`. A header carries bytes, not text: an id a header cannot carry as it is
 * (past U+007E, a control character, leading or trailing space) goes encoded, in RFC 8187's form
 * (`utf-8''` and percent-encoded UTF-8); every other id goes as it is, as it always did.
 */

/** The header that names a run, in the readers' responses and the transport's requests. */
export const RUN_ID_HEADER = 'x-rxagent-run-id';

const ENCODED = "utf-8''";
/** What a header carries unchanged: visible ASCII, spaces only inside. */
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** RFC 8187's `attr-char`s and `%XX` escapes: all an encoded value may hold. */
const ENCODED_VALUE = /^(?:[A-Za-z0-9!#$&+\-.^_`|~]|%[0-9A-Fa-f]{2})*$/;
/** What `encodeURIComponent` leaves as it is but RFC 8187's `attr-char` does not allow. */
const NOT_ATTR_CHAR = /['()*]/g;

const isEncoded = (value: string): boolean => value.slice(0, ENCODED.length).toLowerCase() === ENCODED;

/**
 * The value of `x-rxagent-run-id` for `runId`: the id itself when a header carries it as it is
 * (visible ASCII, spaces only inside, not starting with `utf-8''`), else `utf-8''` and its
 * percent-encoded UTF-8. Always visible ASCII. `TypeError` for a string that is not well-formed
 * UTF-16 (no store holds one).
 *
 * @example
 * ```ts
 * import { encodeRunIdHeader } from 'rxagent/durable';
 * encodeRunIdHeader('run-1');  // 'run-1'
 * encodeRunIdHeader('运行-1'); // "utf-8''%E8%BF%90%E8%A1%8C-1"
 * ```
 */
export function encodeRunIdHeader(runId: string): string {
  if (typeof runId !== 'string') throw new TypeError(`encodeRunIdHeader: expected a run id string, got ${runId === null ? 'null' : typeof runId}`);
  if (PLAIN.test(runId) && !isEncoded(runId)) return runId;
  let encoded: string;
  try {
    encoded = encodeURIComponent(runId);
  } catch {
    throw new TypeError('encodeRunIdHeader: the run id is not well-formed UTF-16 (it holds a lone surrogate)');
  }
  return ENCODED + encoded.replace(NOT_ATTR_CHAR, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The run id an `x-rxagent-run-id` value names: the value itself, or, for a value in the encoded
 * form (`utf-8''…`, any case), the id it encodes. `undefined` when there is no header, or when the
 * value is not an encoding {@link encodeRunIdHeader} makes (a bad escape, bytes that are not UTF-8,
 * an encoded surrogate, a character outside RFC 8187's): it names no run. What an app's resume
 * and stop routes read the header with.
 *
 * @example
 * ```ts
 * import { RUN_ID_HEADER, decodeRunIdHeader } from 'rxagent/durable';
 * const runId = decodeRunIdHeader(request.headers.get(RUN_ID_HEADER)) ?? (await journal.activeRun(chatId))?.runId;
 * ```
 */
export function decodeRunIdHeader(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (!isEncoded(value)) return value;
  const encoded = value.slice(ENCODED.length);
  if (!ENCODED_VALUE.test(encoded)) return undefined;
  try {
    // strict: a cut, overlong or surrogate sequence is a URIError
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}
