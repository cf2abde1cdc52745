/**
 * Matching rules on the normalised view of a text (see `normalized-text.ts`) and turning the
 * matches into disjoint regions of the original text, as the regex guards redact them.
 */
import { normalizeForMatching, originalSpan, viewOffset, type NormalizedText } from './normalized-text.js';

/** One compiled rule. `regex` has the `g` flag; `validate` sees the matched (normalised) value. */
export interface ScanRule {
  readonly regex: RegExp;
  readonly validate: ((value: string) => boolean) | undefined;
  /** Finds the same matches as `regex`, faster (offsets into the scanned text). */
  readonly find?: ((text: string, from: number) => Array<[number, number]>) | undefined;
}

/** One match: original offsets, the rule's index and the matched normalised value. */
export interface ScanMatch {
  rule: number;
  start: number;
  end: number;
  /** The matched text of the normalised view (what the rule saw). */
  value: string;
}

/** Disjoint span of the original text covering one or more overlapping matches. */
export interface ScanRegion {
  start: number;
  end: number;
  /** The longest match of the region (its rule gives the replacement). */
  owner: ScanMatch;
  /** Every rule that matched inside the region (more than one when matches overlapped). */
  rules: number[];
}

/**
 * Every match of every rule in `text` starting at or after original offset `from` (matches may
 * see the text before `from` through lookbehinds, they never start there).
 */
export function scanMatches(text: string, rules: readonly ScanRule[], from = 0, view: NormalizedText = normalizeForMatching(text)): ScanMatch[] {
  const matches: ScanMatch[] = [];
  const viewFrom = viewOffset(view, from);
  for (let ruleIndex = 0; ruleIndex < rules.length; ruleIndex++) {
    const rule = rules[ruleIndex] as ScanRule;
    if (rule.find !== undefined) {
      for (const [start, end] of rule.find(view.text, viewFrom)) {
        const value = view.text.slice(start, end);
        if (rule.validate !== undefined && !rule.validate(value)) continue;
        const span = originalSpan(view, start, end);
        if (span.start < from) continue; // a display-order paragraph reaches back before `from`
        matches.push({ rule: ruleIndex, start: span.start, end: span.end, value });
      }
      continue;
    }
    const regex = rule.regex;
    regex.lastIndex = viewFrom;
    for (let match = regex.exec(view.text); match !== null; match = regex.exec(view.text)) {
      const value = match[0];
      if (value === '') {
        regex.lastIndex++;
        continue;
      }
      if (rule.validate !== undefined && !rule.validate(value)) continue;
      const span = originalSpan(view, match.index, match.index + value.length);
      if (span.start < from) continue;
      matches.push({ rule: ruleIndex, start: span.start, end: span.end, value });
    }
  }
  return matches;
}

/**
 * Merges matches into disjoint regions in text order: overlapping matches are unioned (so no
 * tail of a longer match survives), the longest match owns the region.
 */
export function mergeRegions(matches: readonly ScanMatch[]): ScanRegion[] {
  const ordered = [...matches].sort((a, b) => a.start - b.start || b.end - b.start - (a.end - a.start));
  const regions: ScanRegion[] = [];
  for (const match of ordered) {
    const current = regions[regions.length - 1];
    if (current !== undefined && match.start < current.end) {
      current.end = Math.max(current.end, match.end);
      if (!current.rules.includes(match.rule)) current.rules.push(match.rule);
      if (match.end - match.start > current.owner.end - current.owner.start) current.owner = match;
    } else {
      regions.push({ start: match.start, end: match.end, owner: match, rules: [match.rule] });
    }
  }
  return regions;
}

/** `text` with each region replaced by `replacement(region)`. */
export function replaceRegions(text: string, regions: readonly ScanRegion[], replacement: (region: ScanRegion) => string): string {
  if (regions.length === 0) return text;
  let result = '';
  let cursor = 0;
  for (const region of regions) {
    result += text.slice(cursor, region.start) + replacement(region);
    cursor = region.end;
  }
  return result + text.slice(cursor);
}
