/**
 * The matching half of `RegexFilterProcessor`: compiled rules, matches merged into regions, and
 * the strategies applied to them (abort on `block`, replacements and reports for `redact`,
 * reports for `warn`). The stream and message halves (`regex-stream.ts`, `regex-messages.ts`) use
 * one matcher per processor.
 */
import type { AbortFunction, Processor } from '../../contract/index.js';
import type { RegexFilterStrategy, RegexMatch, RegexRedaction } from '../regex-filter-types.js';
import { mapStrings } from './deep-strings.js';
import { decodeForReading } from './decoded-text.js';
import { normalizeForMatching, type NormalizedText } from './normalized-text.js';
import { PRESET_FINDERS, type RegexRule } from './regex-presets.js';
import { mergeRegions, scanMatches, type ScanRegion, type ScanRule } from './text-scan.js';
import { reportViolation } from './violation.js';

/** Where a text is checked: the input messages or anything of the output. */
export type Where = 'input' | 'output';

interface CompiledRule extends ScanRule {
  name: string;
  source: RegExp;
  replacement: string;
  maxMatchLength: number;
  strategy: RegexFilterStrategy;
}

const DEFAULT_MAX_MATCH_LENGTH = 128;
export const STRICTNESS: Record<RegexFilterStrategy, number> = { warn: 0, redact: 1, block: 2 };

/** Compiles one rule (`RegexFilterProcessor` checked its fields: see `rulesOption`). */
function compileRule(rule: RegexRule, defaultStrategy: RegexFilterStrategy): CompiledRule {
  const isRegExp = rule.pattern instanceof RegExp;
  const source = isRegExp ? (rule.pattern as RegExp).source : (rule.pattern as string);
  const baseFlags = isRegExp ? (rule.pattern as RegExp).flags : (rule.flags ?? '');
  const flags = [...new Set([...baseFlags.replace(/[gy]/g, ''), 'g'])].join('');
  const maxMatchLength = Math.max(1, Math.floor(rule.maxMatchLength ?? DEFAULT_MAX_MATCH_LENGTH));
  return {
    name: rule.name,
    regex: new RegExp(source, flags),
    source: new RegExp(source, flags.replace('g', '')),
    validate: rule.validate,
    find: PRESET_FINDERS.get(rule),
    replacement: rule.replacement ?? '[REDACTED]',
    maxMatchLength,
    strategy: rule.strategy ?? defaultStrategy,
  };
}

/** What a matcher needs to know besides its rules. */
export interface RegexMatcherOptions {
  /** The processor reported as the violation's source. */
  processor: Pick<Processor, 'id' | 'onViolation'>;
  rules: readonly RegexRule[];
  strategy: RegexFilterStrategy;
  includeValues: boolean;
  normalize: boolean;
}

/** Compiled rules and the strategies of one `RegexFilterProcessor`. */
export class RegexMatcher {
  readonly rules: readonly CompiledRule[];
  /** The longest `maxMatchLength` of the rules. */
  readonly longestMatch: number;
  private readonly processor: Pick<Processor, 'id' | 'onViolation'>;
  private readonly includeValues: boolean;
  private readonly normalize: boolean;
  /** Set only during one synchronous `processOutputResult` call (no state crosses calls). */
  quietWarnings = false;

  constructor(options: RegexMatcherOptions) {
    this.rules = options.rules.map((rule) => compileRule(rule, options.strategy));
    this.longestMatch = Math.max(...this.rules.map((rule) => rule.maxMatchLength));
    this.processor = options.processor;
    this.includeValues = options.includeValues;
    this.normalize = options.normalize;
  }

  /**
   * The view `text` is matched on: the normalised view (`normalize`), or the text itself; JSON text
   * (`json`: streamed tool-call arguments) always has its string escapes undone, as the client and
   * the tool read it.
   */
  viewOf(text: string, json = false): NormalizedText {
    if (this.normalize) return normalizeForMatching(text, { json });
    return (json ? decodeForReading(text, { json: true, markup: false }) : undefined) ?? { text, starts: undefined, ends: undefined };
  }

  /** The merged match regions of `text` (original offsets), matched on `view`. */
  regionsOf(text: string, from: number, view: NormalizedText = this.viewOf(text)): ScanRegion[] {
    if (text === '') return [];
    return mergeRegions(scanMatches(text, this.rules, from, view));
  }

  strategyOf(region: ScanRegion): RegexFilterStrategy {
    let strictest: RegexFilterStrategy = 'warn';
    for (const index of region.rules) {
      const strategy = (this.rules[index] as CompiledRule).strategy;
      if (STRICTNESS[strategy] > STRICTNESS[strictest]) strictest = strategy;
    }
    return strictest;
  }

  /** The replacement of a region: the owner's replacement, `$` references expanded when the rule alone covers the match. */
  replacementOf(region: ScanRegion): string {
    const rule = this.rules[region.owner.rule] as CompiledRule;
    if (region.rules.length > 1 || !rule.replacement.includes('$')) return rule.replacement;
    const matched = region.owner.value;
    const isolated = rule.source.exec(matched);
    if (isolated === null || isolated.index !== 0 || isolated[0].length !== matched.length) return rule.replacement;
    return matched.replace(rule.source, rule.replacement);
  }

  toMatch(text: string, region: ScanRegion): RegexMatch {
    const value = text.slice(region.start, region.end);
    const rule = (this.rules[region.owner.rule] as CompiledRule).name;
    return { rule, match: value, index: region.start, strategy: this.strategyOf(region), start: region.start, end: region.end, value };
  }

  /**
   * Applies the strategies to regions of `text`: aborts on a block, reports, and returns the
   * replacement of each region (none for `warn`).
   */
  enforce(text: string, regions: readonly ScanRegion[], where: Where, abort: AbortFunction, location: string): Map<ScanRegion, string> {
    const replacements = new Map<ScanRegion, string>();
    if (regions.length === 0) return replacements;
    const matches = regions.map((region) => this.toMatch(text, region));
    const blocking = matches.filter((match) => match.strategy === 'block');
    if (blocking.length > 0) {
      const rules = [...new Set(blocking.map((match) => match.rule))];
      abort(`Regex filter: blocked ${location === 'streaming content' ? location : 'content'} matching patterns: ${rules.join(', ')}`, {
        retry: false,
        metadata: {
          processorId: this.processor.id,
          strategy: 'block',
          matches: blocking.map((match) => ({ rule: match.rule, match: '[REDACTED_MATCH]', index: match.index })),
          phase: where,
          rules,
          ...(this.includeValues ? { values: blocking.map((match) => match.value) } : {}),
        },
      });
    }
    const redactions: RegexRedaction[] = [];
    const warned: RegexMatch[] = [];
    regions.forEach((region, index) => {
      const match = matches[index] as RegexMatch;
      if (match.strategy === 'warn') {
        warned.push(match);
        return;
      }
      const replacement = this.replacementOf(region);
      replacements.set(region, replacement);
      const overlapping = region.rules.length > 1 ? region.rules.map((rule) => (this.rules[rule] as CompiledRule).name) : undefined;
      redactions.push({
        rule: match.rule,
        index: match.index,
        length: match.end - match.start,
        replacement,
        ...(overlapping === undefined ? {} : { overlappingRules: overlapping }),
        ...(this.includeValues ? { value: match.value } : {}),
      });
    });
    const phase =
      where === 'input' ? 'processInput'
      : location === 'the stored reply' ? 'processOutputResult'
      : location === 'tool output' ? 'processToolResult'
      : location === 'a tool output sent to the model' ? 'processLLMRequest'
      : 'processOutputStream';
    if (redactions.length > 0) {
      const rules = [...new Set(redactions.map((redaction) => redaction.rule))];
      reportViolation(this.processor, `Regex filter: redacted content matching patterns: ${rules.join(', ')}`, {
        strategy: 'redact',
        phase,
        where: location,
        redactions,
      });
    }
    if (warned.length > 0 && !this.quietWarnings) {
      const rules = [...new Set(warned.map((match) => match.rule))];
      // 'warn' with no onViolation to tell: a console warning, as the reference gives (rule names, never the values)
      if (this.processor.onViolation === undefined) console.warn(`[RegexFilterProcessor] ${location}: matched patterns: ${rules.join(', ')}`);
      reportViolation(this.processor, `Regex filter: matched patterns: ${rules.join(', ')}`, {
        strategy: 'warn',
        phase,
        where: location,
        matches: warned.map((match) => ({ rule: match.rule, index: match.index, ...(this.includeValues ? { match: match.value } : {}) })),
      });
    }
    return replacements;
  }

  /** A complete text through the strategies. */
  filterText(text: string, where: Where, abort: AbortFunction, location: string): string {
    const regions = this.regionsOf(text, 0);
    if (regions.length === 0) return text;
    const replacements = this.enforce(text, regions, where, abort, location);
    let result = '';
    let cursor = 0;
    for (const region of regions) {
      const replacement = replacements.get(region);
      if (replacement === undefined) continue;
      result += text.slice(cursor, region.start) + replacement;
      cursor = region.end;
    }
    return result + text.slice(cursor);
  }

  /** Every string of a structured value through the strategies. */
  filterValue(value: unknown, where: Where, abort: AbortFunction, location = 'tool output'): unknown {
    return mapStrings(value, (text) => this.filterText(text, where, abort, location));
  }
}
