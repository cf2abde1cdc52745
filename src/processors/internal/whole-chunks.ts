/**
 * Chunks the model-backed guards judge whole, not as streamed text: a `tool-call` (its arguments),
 * a `data-*` chunk (its `data`), a `tool-error` (its error and arguments) and a structured-output
 * `object` / `object-result` (its object: a structurer may have made it from text not judged yet). The judged text is
 * every string of the value, one per line; a verdict is applied to every string.
 */
import type { ChunkType } from '../../contract/index.js';
import { collectStrings, mapStrings } from './deep-strings.js';
import type { Verdict, WholeChannel } from './judged-spans.js';

export type { WholeChannel };
import { replaceAllValues } from './message-text.js';

/** The strings of `value` (at any depth, object keys included), one per line. */
export function stringsOf(value: unknown): string {
  return collectStrings(value).join('\n');
}

/** The text a judge sees for a whole chunk ('' when it carries none). */
export function judgedText(part: ChunkType): string {
  if (part.type === 'tool-call') return stringsOf(part.payload.args);
  if (part.type === 'tool-error') return stringsOf([part.payload.error, part.payload.args ?? null]);
  if (part.type.startsWith('data-')) return stringsOf((part as { data?: unknown }).data);
  if (part.type === 'object' || part.type === 'object-result') return stringsOf(part.payload.object);
  return '';
}

/** `replacements` plus the decoded form of each value written with JSON escapes (a value found in streamed tool input). */
function withDecodedForms(replacements: ReadonlyMap<string, string>): Map<string, string> {
  const all = new Map(replacements);
  for (const [value, replacement] of replacements) {
    if (!value.includes('\\')) continue;
    try {
      const decoded: unknown = JSON.parse(`"${value}"`);
      if (typeof decoded === 'string' && decoded !== '' && !all.has(decoded)) all.set(decoded, replacement);
    } catch {
      // not a JSON string body: only the written form is replaced
    }
  }
  return all;
}

/**
 * `part` with `verdict` applied (`null`: dropped). `fromStream`: the verdict was given on the
 * call's streamed input (JSON source), so values may be written escaped.
 *
 * @example
 * ```ts
 * applyToWhole(dataChunk, { action: 'replace', replacements: new Map([['a@b.co', '[EMAIL]']]) }, false);
 * ```
 */
export function applyToWhole(part: ChunkType, verdict: Verdict, fromStream: boolean): ChunkType | null {
  if (verdict.action === 'keep' || verdict.action === 'block') return part;
  if (verdict.action === 'drop') return null;
  const replacements = fromStream ? withDecodedForms(verdict.replacements) : verdict.replacements;
  const replace = (value: unknown): unknown => mapStrings(value, (text) => replaceAllValues(text, replacements));
  if (part.type === 'tool-call') {
    const args = replace(part.payload.args);
    return args === part.payload.args ? part : { ...part, payload: { ...part.payload, args } };
  }
  if (part.type === 'tool-error') {
    const error = replace(part.payload.error);
    const args = part.payload.args === undefined ? undefined : replace(part.payload.args);
    if (error === part.payload.error && args === part.payload.args) return part;
    return { ...part, payload: { ...part.payload, error, ...(args === undefined ? {} : { args }) } };
  }
  if (part.type.startsWith('data-')) {
    const data = (part as { data?: unknown }).data;
    const next = replace(data);
    return next === data ? part : ({ ...part, data: next } as ChunkType);
  }
  if (part.type === 'object' || part.type === 'object-result') {
    const object = replace(part.payload.object);
    return object === part.payload.object ? part : ({ ...part, payload: { ...part.payload, object } } as ChunkType);
  }
  return part;
}
