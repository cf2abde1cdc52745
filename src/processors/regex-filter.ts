import type { MastraDBMessage } from '../message-list/types.js';
import type { ChunkType } from '../processor/chunk-types.js';
import type {
  AbortFunction,
  ProcessInputArgs,
  ProcessOutputResultArgs,
  ProcessOutputStreamArgs,
  Processor,
  ProcessorState,
  ProcessorViolation,
} from '../processor/processor-types.js';
import { textDeltaChunk } from './internal/chunks.js';
import { emitInOrder } from './internal/emit-in-order.js';
import { mapMessageText } from './internal/message-text.js';
import { reportViolation } from './internal/violation.js';

/**
 * What to do with a match: abort the run, replace the match, or only report it.
 *
 * @example
 * ```ts
 * const strategy: RegexFilterStrategy = 'redact';
 * ```
 */
export type RegexFilterStrategy = 'block' | 'redact' | 'warn';

/**
 * Where the filter applies: the input messages, the model's output (stream and stored reply), or both.
 *
 * @example
 * ```ts
 * const phase: RegexFilterPhase = 'output';
 * ```
 */
export type RegexFilterPhase = 'input' | 'output' | 'all';

/**
 * Built-in rule sets.
 *
 * @example
 * ```ts
 * const presets: RegexPreset[] = ['pii', 'secrets'];
 * ```
 */
export type RegexPreset = 'pii' | 'secrets' | 'urls';

/**
 * One pattern to look for.
 *
 * @example
 * ```ts
 * const rule: RegexRule = { name: 'ticket', pattern: /TICKET-\d+/, replacement: '[ticket]', maxMatchLength: 20 };
 * ```
 */
export interface RegexRule {
  /** Shown in violations and in the default replacement `[REDACTED:<name>]`. */
  name: string;
  /** A RegExp (its flags are kept, `g` is added) or a pattern string compiled with `flags`. */
  pattern: RegExp | string;
  /** Flags for a string `pattern`. */
  flags?: string;
  /** Replacement text for `redact`. Default `[REDACTED:<name>]`. */
  replacement?: string;
  /** Extra check of a match (e.g. a Luhn check for card numbers); false ignores the match. */
  validate?: (match: string) => boolean;
  /**
   * The longest text this rule can match. Sizes the stream carry-over (see
   * `streamCarryoverSize`); a longer match split across chunks may be missed. Default 100.
   */
  maxMatchLength?: number;
  /** Overrides the processor's strategy for this rule. */
  strategy?: RegexFilterStrategy;
}

/**
 * Options of {@link RegexFilterProcessor}.
 *
 * @example
 * ```ts
 * const options: RegexFilterOptions = { presets: 'pii', strategy: 'block', phase: 'input' };
 * ```
 */
export interface RegexFilterOptions {
  rules?: RegexRule[];
  presets?: RegexPreset | RegexPreset[];
  /** Default `'redact'`. */
  strategy?: RegexFilterStrategy;
  /** Default `'all'`. */
  phase?: RegexFilterPhase;
  /** Put the matched values in violations and tripwire metadata. Default `false` (they are secrets). */
  includeRedactedValues?: boolean;
  /**
   * Characters held back at the end of the streamed text of each text block, so a match split
   * across chunks is still caught before it reaches the client. Default: the longest
   * `maxMatchLength` of the active rules (100 for `pii`, 800 for `secrets`, 300 for `urls`).
   * The held text is released at `text-end`, `finish` and any other non-text chunk.
   */
  streamCarryoverSize?: number;
  onViolation?: (violation: ProcessorViolation) => void | Promise<void>;
}

/**
 * One match found by {@link RegexFilterProcessor}.
 *
 * @example
 * ```ts
 * const matches: RegexMatch[] = new RegexFilterProcessor({ presets: 'pii' }).scan('mail a@b.io');
 * ```
 */
export interface RegexMatch {
  rule: string;
  strategy: RegexFilterStrategy;
  start: number;
  end: number;
  value: string;
}

interface CompiledRule {
  name: string;
  regex: RegExp;
  replacement: string;
  validate: ((match: string) => boolean) | undefined;
  maxMatchLength: number;
  strategy: RegexFilterStrategy;
}

interface HeldTail {
  id: string;
  text: string;
  template: ChunkType;
}

const DEFAULT_MAX_MATCH_LENGTH = 100;

function luhn(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * The built-in rules of each preset.
 *
 * @example
 * ```ts
 * const emailRule = REGEX_PRESETS.pii.find((rule) => rule.name === 'email');
 * ```
 */
export const REGEX_PRESETS: Readonly<Record<RegexPreset, readonly RegexRule[]>> = {
  pii: [
    { name: 'email', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, maxMatchLength: 100 },
    { name: 'credit-card', pattern: /(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])/g, validate: luhn, maxMatchLength: 23 },
    { name: 'ssn', pattern: /(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)/g, maxMatchLength: 11 },
    {
      name: 'phone',
      pattern: /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)|\d{2,4})[ .-]\d{3,4}[ .-]?\d{3,4}(?!\w)/g,
      maxMatchLength: 24,
    },
    { name: 'ipv4', pattern: /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.])/g, maxMatchLength: 15 },
    { name: 'iban', pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g, maxMatchLength: 42 },
  ],
  secrets: [
    { name: 'aws-access-key', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, maxMatchLength: 20 },
    { name: 'github-token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,100}|github_pat_[A-Za-z0-9_]{22,100})\b/g, maxMatchLength: 100 },
    { name: 'api-key', pattern: /\bsk-[A-Za-z0-9_-]{20,200}/g, maxMatchLength: 203 },
    { name: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, maxMatchLength: 39 },
    { name: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,100}/g, maxMatchLength: 105 },
    { name: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, maxMatchLength: 800 },
  ],
  urls: [{ name: 'url', pattern: /\bhttps?:\/\/[^\s<>"'()[\]]*[^\s<>"'()[\].,;:!?]/g, maxMatchLength: 300 }],
};

function compileRule(rule: RegexRule, defaultStrategy: RegexFilterStrategy): CompiledRule {
  const source = typeof rule.pattern === 'string' ? rule.pattern : rule.pattern.source;
  const baseFlags = typeof rule.pattern === 'string' ? (rule.flags ?? '') : rule.pattern.flags;
  const flags = [...new Set([...baseFlags.replace(/[gy]/g, ''), 'g'])].join('');
  return {
    name: rule.name,
    regex: new RegExp(source, flags),
    replacement: rule.replacement ?? `[REDACTED:${rule.name}]`,
    validate: rule.validate,
    maxMatchLength: Math.max(1, rule.maxMatchLength ?? DEFAULT_MAX_MATCH_LENGTH),
    strategy: rule.strategy ?? defaultStrategy,
  };
}

/**
 * Finds, blocks, redacts or reports text matching regular expressions — your `rules` and the
 * `pii`, `secrets` and `urls` presets — in the input, the streamed output and the stored reply.
 * No model call.
 *
 * In the output stream it holds back the last `streamCarryoverSize` characters of each text
 * block, so a match split across chunks (an e-mail address arriving in three deltas) is handled
 * before any of it reaches the client; held text is released, redacted, at `text-end`, `finish`
 * and any other non-text chunk. `block` aborts the run (`abort()`, which reports the violation);
 * `redact` and `warn` call `onViolation` for each match.
 *
 * Hooks: `processInput` (phase `input`/`all`), `processOutputStream` and `processOutputResult`
 * (phase `output`/`all`; the result hook makes the stored reply match what was streamed).
 *
 * @example
 * ```ts
 * import { RegexFilterProcessor } from 'rxagent/processors';
 * const filter = new RegexFilterProcessor({ presets: ['pii', 'secrets'], strategy: 'redact' });
 * const agent = new Agent({ id: 'a', instructions: '…', model, inputProcessors: [filter], outputProcessors: [filter] });
 * ```
 */
export class RegexFilterProcessor implements Processor<'regex-filter'> {
  readonly id = 'regex-filter';
  readonly name = 'Regex Filter';
  readonly description = 'Blocks, redacts or reports text matching regular expressions.';
  /** Data chunks release the held tail too (they pass unchanged), so they never overtake it. */
  readonly processDataParts = true;
  readonly onViolation: ((violation: ProcessorViolation) => void | Promise<void>) | undefined;
  private readonly rules: CompiledRule[];
  private readonly phase: RegexFilterPhase;
  private readonly includeValues: boolean;
  private readonly carryover: number;

  constructor(options: RegexFilterOptions = {}) {
    const strategy = options.strategy ?? 'redact';
    const presets = options.presets === undefined ? [] : Array.isArray(options.presets) ? options.presets : [options.presets];
    const rules = [...presets.flatMap((preset) => REGEX_PRESETS[preset]), ...(options.rules ?? [])];
    if (rules.length === 0) throw new TypeError('RegexFilterProcessor needs at least one rule or preset.');
    this.rules = rules.map((rule) => compileRule(rule, strategy));
    this.phase = options.phase ?? 'all';
    this.includeValues = options.includeRedactedValues ?? false;
    this.carryover = Math.max(0, Math.floor(options.streamCarryoverSize ?? Math.max(...this.rules.map((rule) => rule.maxMatchLength))));
    this.onViolation = options.onViolation;
  }

  /** Every non-overlapping match in `text` (earliest first; the longest wins at one position). */
  scan(text: string): RegexMatch[] {
    const found: RegexMatch[] = [];
    for (const rule of this.rules) {
      rule.regex.lastIndex = 0;
      for (const match of text.matchAll(rule.regex)) {
        const value = match[0];
        if (value === '' || (rule.validate !== undefined && !rule.validate(value))) continue;
        found.push({ rule: rule.name, strategy: rule.strategy, start: match.index, end: match.index + value.length, value });
      }
    }
    found.sort((a, b) => a.start - b.start || b.end - a.end);
    const kept: RegexMatch[] = [];
    let reach = 0;
    for (const match of found) {
      if (match.start < reach) continue;
      kept.push(match);
      reach = match.end;
    }
    return kept;
  }

  /** `text` with the `redact` matches among `matches` replaced. */
  redact(text: string, matches: readonly RegexMatch[]): string {
    let result = '';
    let last = 0;
    for (const match of matches) {
      if (match.strategy !== 'redact') continue;
      result += text.slice(last, match.start) + this.replacementFor(match.rule);
      last = match.end;
    }
    return result + text.slice(last);
  }

  processInput({ messages, abort }: ProcessInputArgs): MastraDBMessage[] | undefined {
    if (this.phase === 'output') return undefined;
    return messages.map((message) => this.filterMessage(message, 'input', abort));
  }

  processOutputStream({ part, state, abort }: ProcessOutputStreamArgs): ChunkType | null {
    if (this.phase === 'input') return part;
    state.streamed = true;
    return emitInOrder(state, this.streamOutputs(part, state, abort));
  }

  processOutputResult({ messages, state, abort }: ProcessOutputResultArgs): MastraDBMessage[] | undefined {
    if (this.phase === 'input') return undefined;
    // Text that went through the stream hook was already blocked/reported there: only make sure
    // the stored reply is redacted like the streamed one.
    const report = state.streamed !== true;
    return messages.map((message) => (message.role === 'assistant' ? this.filterMessage(message, 'output', abort, report) : message));
  }

  private replacementFor(ruleName: string): string {
    return this.rules.find((rule) => rule.name === ruleName)?.replacement ?? `[REDACTED:${ruleName}]`;
  }

  private filterMessage(message: MastraDBMessage, phase: 'input' | 'output', abort: AbortFunction, report = true): MastraDBMessage {
    return mapMessageText(message, (text) => this.filterText(text, phase, abort, report));
  }

  /** Applies the strategies to a complete text: aborts on a block, reports, returns the redacted text. */
  private filterText(text: string, phase: 'input' | 'output', abort: AbortFunction, report = true): string {
    const matches = this.scan(text);
    if (matches.length === 0) return text;
    if (report) this.enforce(matches, phase, abort);
    return this.redact(text, matches);
  }

  private enforce(matches: readonly RegexMatch[], phase: 'input' | 'output', abort: AbortFunction): void {
    const blocking = matches.filter((match) => match.strategy === 'block');
    if (blocking.length > 0) {
      const rules = [...new Set(blocking.map((match) => match.rule))];
      abort(`Blocked by regex-filter: the ${phase} matched ${rules.join(', ')}`, {
        metadata: { phase, rules, ...(this.includeValues ? { values: blocking.map((match) => match.value) } : {}) },
      });
    }
    for (const match of matches) {
      const action = match.strategy === 'redact' ? 'redacted' : 'detected';
      reportViolation(this, `regex-filter ${action} ${match.rule} in the ${phase}`, {
        phase,
        rule: match.rule,
        strategy: match.strategy,
        ...(this.includeValues ? { value: match.value } : {}),
      });
    }
  }

  private streamOutputs(part: ChunkType, state: ProcessorState, abort: AbortFunction): ChunkType[] {
    const held = state.tail as HeldTail | undefined;
    if (part.type !== 'text-delta') {
      state.tail = undefined;
      return held === undefined ? [part] : [...this.release(held, held.text, abort), part];
    }
    const outputs: ChunkType[] = [];
    let tail = held;
    if (tail !== undefined && tail.id !== part.payload.id) {
      outputs.push(...this.release(tail, tail.text, abort));
      tail = undefined;
    }
    const buffer = (tail?.text ?? '') + part.payload.text;
    let cut = Math.max(0, buffer.length - this.carryover);
    for (const match of this.scan(buffer)) {
      if (match.start < cut && match.end > cut) cut = match.start;
    }
    const current: HeldTail = { id: part.payload.id, text: buffer.slice(cut), template: part };
    state.tail = current.text === '' ? undefined : current;
    if (cut > 0) outputs.push(...this.release(current, buffer.slice(0, cut), abort));
    return outputs;
  }

  private release(held: HeldTail, text: string, abort: AbortFunction): ChunkType[] {
    if (text === '') return [];
    return [textDeltaChunk(held.template, held.id, this.filterText(text, 'output', abort))];
  }
}
