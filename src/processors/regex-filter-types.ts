/** The public option and result types of `RegexFilterProcessor` (see `regex-filter.ts`). */
import type { ProcessorViolation } from '../contract/index.js';
import type { RegexPreset, RegexRule } from './internal/regex-presets.js';

/**
 * What to do with a match: abort the run (default, as the reference), replace the match, or only report it.
 *
 * @example
 * ```ts
 * const strategy: RegexFilterStrategy = 'redact';
 * ```
 */
export type RegexFilterStrategy = 'block' | 'redact' | 'warn';

/**
 * Where the filter applies: the input messages, the model's output (every output channel and the
 * stored reply), or both.
 *
 * @example
 * ```ts
 * const phase: RegexFilterPhase = 'output';
 * ```
 */
export type RegexFilterPhase = 'input' | 'output' | 'all';

/**
 * The output channels the filter checks (default: all of them).
 * - `text`, `reasoning`: streamed text and reasoning (held back, see `streamCarryoverSize`);
 * - `tool-input`: streamed tool-call input (`tool-call-delta`) and the final `tool-call` arguments
 *   (the tool then runs with the redacted arguments);
 * - `tool-result`: `processToolResult` and `tool-result` chunks; `tool-error`: `tool-error` chunks
 *   and stored error texts;
 * - `data`: `data-*` chunks (from tools or processors) and stored data parts;
 * - `object`: structured-output `object` / `object-result` chunks;
 * - `file`: files the model generates (`file` chunks) and file parts of the stored reply — their
 *   names, and their content when they are text files (input attachments are always checked).
 *
 * @example
 * ```ts
 * const channels: RegexFilterChannel[] = ['text', 'reasoning'];
 * ```
 */
export type RegexFilterChannel = 'text' | 'reasoning' | 'tool-input' | 'tool-result' | 'tool-error' | 'data' | 'object' | 'file';

/**
 * Options of {@link RegexFilterProcessor}: the reference's options (`rules`, `presets`,
 * `strategy`, `phase`, `includeRedactedValues`, `streamCarryoverSize`) plus rxagent's
 * `channels`, `normalize` and `onViolation`.
 *
 * @example
 * ```ts
 * const options: RegexFilterOptions = { presets: ['pii'], strategy: 'block', phase: 'input' };
 * ```
 */
export interface RegexFilterOptions {
  /** Your own rules, checked with the presets'. */
  rules?: RegexRule[];
  /** One preset or a list. */
  presets?: RegexPreset | RegexPreset[];
  /** Default `'block'` (as the reference). */
  strategy?: RegexFilterStrategy;
  /** Default `'all'`. */
  phase?: RegexFilterPhase;
  /** Put the matched values in violations (`redactions[].value`). Default `false` (they are secrets). */
  includeRedactedValues?: boolean;
  /**
   * Trailing characters held back at the end of each streamed channel, so a match split across
   * chunks (or across the text blocks of a step) is handled before any of it reaches the client.
   * A positive integer; default 128 (as the reference), raised to the longest `maxMatchLength` of
   * your rules. A match crossing the cut holds more, up to its rule's `maxMatchLength`.
   */
  streamCarryoverSize?: number;
  /** Output channels to check. Default: all ({@link RegexFilterChannel}). */
  channels?: RegexFilterChannel[];
  /**
   * Match on the normalised view of the text (invisible characters dropped, NFKC, digits of every
   * script, Unicode's confusables and every dash folded to ASCII, bidi-controlled paragraphs also in
   * display order) and redact the original span. Default `true`.
   */
  normalize?: boolean;
  /** Told of each match that blocks, redacts or warns (the matched values only with `includeRedactedValues`). */
  onViolation?: (violation: ProcessorViolation) => void | Promise<void>;
}

/**
 * One match found by {@link RegexFilterProcessor}: the reference's `{ rule, match, index }` plus
 * rxagent's `start`, `end`, `value` and `strategy`. Offsets are in the original text; `value` is
 * the original text, `match` too (`'[REDACTED_MATCH]'` in tripwire metadata).
 *
 * @example
 * ```ts
 * const matches: RegexMatch[] = new RegexFilterProcessor({ presets: ['pii'] }).scan('mail a@b.io');
 * ```
 */
export interface RegexMatch {
  /** The name of the rule that matched. */
  rule: string;
  /** The matched text (the original text's span). */
  match: string;
  /** Where the match starts in the original text (as `start`). */
  index: number;
  /** What the processor does with it (`block`, `redact` or `warn`). */
  strategy: RegexFilterStrategy;
  /** Offset of the match's first character in the original text. */
  start: number;
  /** Offset just past its last character. */
  end: number;
  /** The original text of the span. */
  value: string;
}

/**
 * One span the `redact` strategy rewrote (reported in `onViolation`'s `detail.redactions`).
 *
 * @example
 * ```ts
 * const redaction: RegexRedaction = { rule: 'email', index: 5, length: 9, replacement: '[EMAIL]' };
 * ```
 */
export interface RegexRedaction {
  /** The name of the rule that matched. */
  rule: string;
  /** Where the span starts in the original text. */
  index: number;
  /** The span's length in the original text. */
  length: number;
  /** What the span was replaced with. */
  replacement: string;
  /** The rules whose matches overlapped in this span (when more than one). */
  overlappingRules?: string[];
  /** The redacted text itself (only with `includeRedactedValues`). */
  value?: string;
}
