/**
 * How every model-backed guard reads its judge's answer — one reader, one set of rules:
 *
 * - **The JSON**: the object is read from a ```json fence or from prose around it; single-quoted
 *   strings, trailing commas and Python's `True`/`False`/`None` are repaired before giving up.
 *   An answer that still does not parse is a judge failure (the caller's failure path).
 * - **Labels** (categories, types): compared by {@link labelKey} — case, spaces, `_`, `-`, `/`,
 *   `.`, camelCase and accents do not matter — and through the guard's synonym table
 *   (`judge-synonyms.ts`). A label resolves to one of the guard's configured labels, to a label
 *   the guard knows but was told not to check (ignored), or to nothing: **unknown**, which the
 *   guards treat as a violation, never as "nothing found".
 * - **Values** (the PII or the leaked passage the judge quotes): located in the content as a
 *   reader sees it — the normalised view of `normalized-text.ts` (character references decoded,
 *   no-break and zero-width spaces folded or dropped, compatibility forms folded), and whitespace-
 *   and case-insensitively as a last resort — and mapped back to the stored span that displays as
 *   the value, which is what gets redacted. A value that cannot be located is reported as such
 *   (the guards treat it as a violation of the whole judged text).
 */
import { jsonEscaped } from './judged-spans.js';
import { normalizeForMatching, originalSpan } from './normalized-text.js';
import type { SynonymTable } from './judge-synonyms.js';

/**
 * The comparison key of a label: compatibility-folded, lower-cased, accents and every character
 * that is not a letter or digit removed (`Self Harm`, `self_harm`, `selfHarm`, `SELF-HARM` → `selfharm`).
 *
 * @example
 * ```ts
 * labelKey('Credit_Card'); // 'creditcard'
 * ```
 */
export function labelKey(label: string): string {
  return label.normalize('NFKD').toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

/**
 * What a judge's label is to a guard: one of its configured labels (`known`, with the configured
 * spelling), a label it knows but was configured not to check (`ignored`), or `unknown`.
 *
 * @example
 * ```ts
 * const reading: LabelReading = { kind: 'known', label: 'self-harm', written: 'Self Harm' };
 * ```
 */
export type LabelReading =
  | { kind: 'known'; label: string; written: string }
  | { kind: 'ignored'; label: string; written: string }
  | { kind: 'unknown'; written: string };

/**
 * Resolves the labels a judge writes to a guard's configured labels, through its synonym table.
 *
 * @example
 * ```ts
 * const reader = new LabelReader(['email', 'credit-card'], PII_SYNONYMS);
 * reader.read('creditCard'); // { kind: 'known', label: 'credit-card', written: 'creditCard' }
 * reader.read('Phone number'); // { kind: 'ignored', label: 'phone', … } (known, not configured)
 * reader.read('favourite colour'); // { kind: 'unknown', … }
 * ```
 */
export class LabelReader {
  private readonly byKey = new Map<string, { label: string; configured: boolean }>();

  constructor(configured: readonly string[], table: SynonymTable) {
    const configuredKeys = new Map(configured.map((label) => [labelKey(label), label]));
    // known but not configured first, then the configured labels' synonyms, then the labels themselves
    for (const [canonical, synonyms] of Object.entries(table)) {
      if (configuredKeys.has(labelKey(canonical))) continue;
      for (const spelling of [canonical, ...synonyms]) this.set(spelling, canonical, false);
    }
    for (const [canonical, synonyms] of Object.entries(table)) {
      const label = configuredKeys.get(labelKey(canonical));
      if (label !== undefined) for (const spelling of synonyms) this.set(spelling, label, true);
    }
    for (const [key, label] of configuredKeys) if (key !== '') this.byKey.set(key, { label, configured: true });
  }

  private set(spelling: string, label: string, configured: boolean): void {
    const key = labelKey(spelling);
    if (key !== '') this.byKey.set(key, { label, configured });
  }

  /** What `written` (a label as the judge wrote it) is to the guard. */
  read(written: string): LabelReading {
    const found = this.byKey.get(labelKey(written));
    if (found === undefined) return { kind: 'unknown', written };
    return found.configured ? { kind: 'known', label: found.label, written } : { kind: 'ignored', label: found.label, written };
  }
}

/**
 * Scores read through a {@link LabelReader}: the configured labels at or above the threshold,
 * the unknown labels at or above it (as written), and every score under its resolved label
 * (unknown ones under their written label; a label's highest score wins).
 *
 * @example
 * ```ts
 * const read: ScoreReading = { flagged: ['violence'], unrecognized: ['weapons'], scores: { violence: 0.9, weapons: 0.8 } };
 * ```
 */
export interface ScoreReading {
  /** Configured labels scored at or above the threshold. */
  flagged: string[];
  /** Labels the guard cannot place, scored at or above the threshold (as the judge wrote them). */
  unrecognized: string[];
  /** Every score, under the resolved label (or the written one, when unknown). */
  scores: Record<string, number>;
}

/**
 * Reads `(label, score)` pairs: see {@link ScoreReading}. Ignored labels (known, not configured)
 * are neither flagged nor unrecognized.
 *
 * @example
 * ```ts
 * readScores([['Self Harm', 0.9]], new LabelReader(['self-harm'], MODERATION_SYNONYMS), 0.5).flagged; // ['self-harm']
 * ```
 */
export function readScores(entries: Iterable<readonly [string, number]>, reader: LabelReader, threshold: number): ScoreReading {
  const scores: Record<string, number> = {};
  const flagged = new Set<string>();
  const unrecognized = new Set<string>();
  for (const [written, score] of entries) {
    const reading = reader.read(written);
    const label = reading.kind === 'unknown' ? written : reading.label;
    scores[label] = Math.max(scores[label] ?? 0, score);
    if (score < threshold) continue;
    if (reading.kind === 'known') flagged.add(reading.label);
    else if (reading.kind === 'unknown') unrecognized.add(written);
  }
  return { flagged: [...flagged], unrecognized: [...unrecognized], scores };
}

/**
 * One place a judge's value occurs: the stored text (what gets replaced) and the text as shown
 * (the normalised view of it, what a redaction is derived from).
 *
 * @example
 * ```ts
 * const located: LocatedValue = { stored: 'jane&#64;x.io', shown: 'jane@x.io' };
 * ```
 */
export interface LocatedValue {
  /** The stored span that displays as the value. */
  stored: string;
  /** The value as it displays. */
  shown: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Occurrences `[start, end)` of `needle` in `haystack`: exactly, else whitespace- and case-insensitively. */
function occurrences(haystack: string, needle: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push([at, at + needle.length]);
  if (found.length > 0) return found;
  const words = needle.trim().split(/\s+/u).map(escapeRegExp);
  const loose = new RegExp(words.join('\\s+'), 'giu');
  for (const match of haystack.matchAll(loose)) if (match[0] !== '') found.push([match.index, match.index + match[0].length]);
  return found;
}

/**
 * Where `value` (as a judge quoted it) occurs in `text`: every stored span that displays as it —
 * as written, JSON-escaped (tool-call arguments), or in the normalised view (character references,
 * no-break and zero-width spaces, compatibility forms; JSON escapes for JSON text), exactly or
 * else ignoring case and the width of whitespace. Empty when it cannot be located.
 *
 * @example
 * ```ts
 * locateValue('mail jane&#64;x.io', 'jane@x.io'); // [{ stored: 'jane&#64;x.io', shown: 'jane@x.io' }]
 * ```
 */
export function locateValue(text: string, value: string): LocatedValue[] {
  if (value.trim() === '') return [];
  const located = new Map<string, string>();
  if (text.includes(value) || text.includes(jsonEscaped(value))) located.set(value, value);
  const needle = normalizeForMatching(value).text;
  if (needle.trim() === '') return [...located].map(([stored, shown]) => ({ stored, shown }));
  let previous: string | undefined;
  for (const json of [false, true]) {
    const view = normalizeForMatching(text, { json });
    if (view.text === previous) continue;
    previous = view.text;
    for (const [start, end] of occurrences(view.text, needle)) {
      const span = originalSpan(view, start, end);
      const stored = text.slice(span.start, span.end);
      if (stored !== '' && !located.has(stored)) located.set(stored, view.text.slice(start, end));
    }
  }
  return [...located].map(([stored, shown]) => ({ stored, shown }));
}

/**
 * `candidate` with the near-JSON models write made JSON: single-quoted strings double-quoted,
 * trailing commas before `}`/`]` dropped, bare `True`/`False`/`None` written as JSON literals.
 * Strings are copied as they are (a `'` inside a double-quoted string stays).
 */
function repairJson(candidate: string): string {
  let out = '';
  for (let index = 0; index < candidate.length; index++) {
    const char = candidate[index] as string;
    if (char === '"' || char === "'") {
      let body = '';
      let at = index + 1;
      for (; at < candidate.length && candidate[at] !== char; at++) {
        const inner = candidate[at] as string;
        if (inner === '\\' && at + 1 < candidate.length) {
          const next = candidate[at + 1] as string;
          body += char === "'" && next === "'" ? "'" : `\\${next}`;
          at++;
        } else body += char === "'" && inner === '"' ? '\\"' : inner;
      }
      out += `"${body}"`;
      index = at;
      continue;
    }
    if (char === ',') {
      const rest = /^\s*([}\]])/.exec(candidate.slice(index + 1));
      if (rest !== null) continue;
    }
    const literal = /^(True|False|None)\b/.exec(candidate.slice(index));
    if (literal !== null && !/[\w$]/.test(candidate[index - 1] ?? '')) {
      out += literal[1] === 'True' ? 'true' : literal[1] === 'False' ? 'false' : 'null';
      index += (literal[1] as string).length - 1;
      continue;
    }
    out += char;
  }
  return out;
}

function tryParse(candidate: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(candidate) as unknown };
  } catch {
    return { ok: false };
  }
}

/** The JSON in `text`: the whole of it, else its outermost `{…}`; each as written, then repaired. With the text that parsed. */
function readJson(text: string): { value: unknown; source: string } | undefined {
  const trimmed = text.trim();
  const candidates = [trimmed];
  const first = trimmed.indexOf('{');
  const last = trimmed.lastIndexOf('}');
  if (first !== -1 && last > first) candidates.push(trimmed.slice(first, last + 1));
  for (const repair of [false, true]) {
    for (const candidate of candidates) {
      if (candidate === '') continue;
      const source = repair ? repairJson(candidate) : candidate;
      const parsed = tryParse(source);
      if (parsed.ok) return { value: parsed.value, source };
    }
  }
  return undefined;
}

/**
 * Whether an object in `json` (text that parses) names a key twice — `JSON.parse` would silently
 * keep the last — or names `__proto__`, which an object built from it may not hold as a key.
 */
function hasAmbiguousKey(json: string): boolean {
  const objects: Array<Set<string> | undefined> = []; // the keys of each open object; undefined for an array
  const colon = /\s*:/y;
  for (let at = 0; at < json.length; at++) {
    const char = json[at];
    if (char === '{') objects.push(new Set());
    else if (char === '[') objects.push(undefined);
    else if (char === '}' || char === ']') objects.pop();
    else if (char === '"') {
      let end = at + 1;
      while (end < json.length && json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      colon.lastIndex = end + 1;
      const keys = objects.at(-1);
      if (keys !== undefined && colon.test(json)) {
        const key = JSON.parse(json.slice(at, end + 1)) as string;
        if (key === '__proto__' || keys.has(key)) return true;
        keys.add(key);
      }
      at = end;
    }
  }
  return false;
}

/**
 * Parses a model's JSON answer: the whole answer, else each ```json fence and the prose around
 * them (its outermost `{…}`); each also after repairing single quotes, trailing commas and Python
 * literals. Returns `undefined` when no JSON can be read — and when the answer is not one answer:
 * two that differ or one that cannot be read (a fence, and an object in the prose or a second
 * fence), or an object naming a key twice or naming `__proto__` (what the judge meant cannot be told).
 *
 * @example
 * ```ts
 * parseJsonAnswer("Here: ```json\n{'detections': [],}\n```"); // { detections: [] }
 * parseJsonAnswer('{"flagged": true, "flagged": false}'); // undefined (a key named twice)
 * ```
 */
export function parseJsonAnswer(answer: string): unknown {
  const trimmed = answer.trim();
  const fence = /```(?:json|JSON)?\s*([\s\S]*?)```/g;
  const fenced = [...trimmed.matchAll(fence)].map((match) => match[1] ?? '');
  const prose = trimmed.replace(fence, '\n');
  const whole = tryParse(trimmed);
  // every fence, and the prose when it holds an object too, must read as the same answer
  const readings = whole.ok
    ? [{ value: whole.value, source: trimmed }]
    : [...fenced, ...(fenced.length === 0 || prose.includes('{') ? [prose] : [])].map(readJson);
  const [first] = readings;
  if (first === undefined) return undefined;
  const written = JSON.stringify(first.value);
  if (readings.some((reading) => reading === undefined || JSON.stringify(reading.value) !== written || hasAmbiguousKey(reading.source))) return undefined;
  return first.value;
}

/**
 * `(label, score)` pairs as a record: a label written twice keeps its highest score (never just
 * the last), and every label is an own key (`__proto__` and `constructor` too).
 *
 * @example
 * ```ts
 * scoreRecord([['violence', 0.9], ['violence', 0.1]]); // { violence: 0.9 }
 * ```
 */
export function scoreRecord(entries: Iterable<readonly [string, number]>): Record<string, number> {
  const record: Record<string, number> = {};
  for (const [label, score] of entries) {
    const before = Object.hasOwn(record, label) ? record[label] : undefined;
    Object.defineProperty(record, label, { value: Math.max(before ?? score, score), enumerable: true, writable: true, configurable: true });
  }
  return record;
}

/** Words that say a language is mixed with another, in a region's brackets (`English (mostly)`). */
const MIXING_WORDS = new Set(['with', 'and', 'or', 'plus', 'mixed', 'mostly', 'partly', 'some', 'also']);

/** The canonical label whose key (or a synonym's) is `key`, if the table has one. */
function lookupLabel(key: string, table: SynonymTable): string | undefined {
  if (key === '') return undefined;
  for (const [canonical, synonyms] of Object.entries(table)) {
    if (labelKey(canonical) === key || synonyms.some((synonym) => labelKey(synonym) === key)) return canonical;
  }
  return undefined;
}

/**
 * The canonical label of `written` in `table` (compared by {@link labelKey}), or its key when the
 * table does not know it. A tag (`en-US`, `zh_Hans`) reads as its first subtag, and a name with a
 * region in brackets (`English (US)`, `French (Canada)`) as the name — unless the brackets name a
 * language or a mixture (`English (with German)`, `English (mostly)`). Anything else that names
 * two things (`English and German`, `English, German`) is its key: unknown, never the first word.
 *
 * @example
 * ```ts
 * canonicalLabel('English (US)', LANGUAGE_SYNONYMS); // 'en'
 * canonicalLabel('English and German', LANGUAGE_SYNONYMS); // 'englishandgerman' (unknown: its key)
 * ```
 */
export function canonicalLabel(written: string, table: SynonymTable): string {
  const key = labelKey(written);
  const whole = lookupLabel(key, table);
  if (whole !== undefined) return whole;
  const tag = /^\s*([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]{1,8})+\s*$/u.exec(written);
  if (tag !== null) return lookupLabel(labelKey(tag[1] ?? ''), table) ?? key;
  const bracketed = /^\s*([^()]+?)\s*\(\s*([\p{L} .]{1,40}?)\s*\)\s*$/u.exec(written);
  if (bracketed !== null) {
    const region = (bracketed[2] ?? '').split(/[\s.]+/u).filter((word) => word !== '');
    // a word of two or three letters in the brackets is a region (`French (FR)`); a longer one may name a language
    const mixed = region.some((word) => MIXING_WORDS.has(word.toLowerCase()) || (word.length > 3 && lookupLabel(labelKey(word), table) !== undefined));
    if (!mixed) return lookupLabel(labelKey(bracketed[1] ?? ''), table) ?? key;
  }
  return key;
}
