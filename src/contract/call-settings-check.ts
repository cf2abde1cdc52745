/**
 * The rules of a model call's settings (`modelSettings`), in one place for every way they reach a
 * step: a call's options and an Agent's `defaultOptions` (an option error), what `processInputStep`
 * returns or edits (a `ProcessorError`), what `prepareStep` does (an option error). Numbers finite,
 * whole where the provider wants a count; `stopSequences` strings; `headers` strings under valid
 * header names, with no CR, LF or NUL (a header split toward the provider).
 */

/** The first thing wrong with a call's settings (see {@link callSettingsProblem}). */
export type CallSettingsProblem =
  /** `field` (`temperature`, `headers["x-user"]`) is not `expected`. */
  | { readonly kind: 'value'; readonly field: string; readonly expected: string; readonly value: unknown }
  /** `name` is no HTTP header name. */
  | { readonly kind: 'header-name'; readonly name: string }
  /** The header at `field` holds CR, LF or NUL. */
  | { readonly kind: 'header-break'; readonly field: string };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A header name: an HTTP token (RFC 9110), so no CR, LF, colon or space. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a header value may not hold: CR, LF or NUL would split the header (header injection toward the provider). */
const HEADER_VALUE_BREAK = /[\r\n\0]/;

const FINITE_SETTINGS = ['temperature', 'topP', 'presencePenalty', 'frequencyPenalty'] as const;
/** Counts: whole numbers at least this. */
const COUNT_SETTINGS = [
  ['maxOutputTokens', 1],
  ['topK', 1],
] as const;

const wrong = (field: string, expected: string, value: unknown): CallSettingsProblem => ({ kind: 'value', field, expected, value });
const wholeAtLeast = (value: unknown, minimum: number): boolean => typeof value === 'number' && Number.isInteger(value) && value >= minimum;

/**
 * The first thing wrong with `settings` (an object), in the order of the fields above; `undefined`
 * when nothing is. Reads each field once; a getter that throws throws.
 *
 * @example
 * ```ts
 * callSettingsProblem({ temperature: Number.NaN }); // { kind: 'value', field: 'temperature', expected: 'a finite number', value: NaN }
 * callSettingsProblem({ headers: { 'x-user': 'a\r\nb' } }); // { kind: 'header-break', field: 'headers["x-user"]' }
 * ```
 */
export function callSettingsProblem(settings: Record<string, unknown>): CallSettingsProblem | undefined {
  for (const key of FINITE_SETTINGS) {
    const value = settings[key];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) return wrong(key, 'a finite number', value);
  }
  for (const [key, minimum] of COUNT_SETTINGS) {
    const value = settings[key];
    if (value !== undefined && !wholeAtLeast(value, minimum)) return wrong(key, `a whole number ≥ ${minimum}`, value);
  }
  const seed = settings.seed;
  if (seed !== undefined && !Number.isInteger(seed)) return wrong('seed', 'a whole number', seed);
  const maxRetries = settings.maxRetries;
  if (maxRetries !== undefined && !wholeAtLeast(maxRetries, 0)) return wrong('maxRetries', 'a whole number ≥ 0', maxRetries);
  const stops = settings.stopSequences;
  if (stops !== undefined && (!Array.isArray(stops) || stops.some((stop) => typeof stop !== 'string'))) return wrong('stopSequences', 'an array of strings', stops);
  const headers = settings.headers;
  if (headers === undefined) return undefined;
  if (!isObject(headers)) return wrong('headers', 'an object of header values (name → string)', headers);
  for (const [name, header] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) return { kind: 'header-name', name };
    const field = `headers[${JSON.stringify(name)}]`;
    if (header === undefined) continue;
    if (typeof header !== 'string') return wrong(field, 'a string', header);
    if (HEADER_VALUE_BREAK.test(header)) return { kind: 'header-break', field };
  }
  return undefined;
}

/**
 * `settings` read once into objects of its own (the settings, their `headers` and
 * `stopSequences`): what is checked is what the step uses, even when the value given has getters
 * that answer differently on a second read, or is shared and edited later. Anything not an object
 * is returned as it is (the check names it). Throws what a getter throws.
 *
 * @example
 * ```ts
 * const own = readCallSettings(given); // then callSettingsProblem(own), and use `own`
 * ```
 */
export function readCallSettings(settings: unknown): unknown {
  if (!isObject(settings)) return settings;
  const copy: Record<string, unknown> = { ...settings };
  if (isObject(copy.headers)) copy.headers = { ...copy.headers };
  if (Array.isArray(copy.stopSequences)) copy.stopSequences = [...(copy.stopSequences as unknown[])];
  return copy;
}
