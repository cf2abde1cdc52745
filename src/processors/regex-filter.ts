import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { MastraDBMessage, MastraMessagePart } from '../message-list/index.js';
import type {
  AbortFunction,
  ChunkType,
  ProcessInputArgs,
  ProcessLLMRequestArgs,
  Processor,
  ProcessorState,
  ProcessorViolation,
  ProcessOutputResultArgs,
  ProcessOutputStreamArgs,
  ProcessToolResultArgs,
} from '../contract/index.js';
import { mapStrings } from './internal/deep-strings.js';
import { emitInOrder } from './internal/emit-in-order.js';
import { storedShape } from './internal/message-text.js';
import { channelOf, heldText, holdChunk, holdText, openChannel, releaseHeld, type HeldChannel, type HeldRegion } from './internal/held-stream.js';
import { normalizeForMatching } from './internal/normalized-text.js';
import { PRESET_FINDERS, REGEX_PRESETS, type RegexPreset, type RegexRule } from './internal/regex-presets.js';
import { mergeRegions, scanMatches, type ScanRegion, type ScanRule } from './internal/text-scan.js';
import { reportViolation } from './internal/violation.js';

export { REGEX_PRESETS, type RegexPreset, type RegexRule };

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
 * - `object`: structured-output `object` / `object-result` chunks.
 *
 * @example
 * ```ts
 * const channels: RegexFilterChannel[] = ['text', 'reasoning'];
 * ```
 */
export type RegexFilterChannel = 'text' | 'reasoning' | 'tool-input' | 'tool-result' | 'tool-error' | 'data' | 'object';

const ALL_CHANNELS: readonly RegexFilterChannel[] = ['text', 'reasoning', 'tool-input', 'tool-result', 'tool-error', 'data', 'object'];

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
  /** The rules: regular expressions with their replacement or strategy. */
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
   * script, Cyrillic/Greek homoglyphs in Latin words) and redact the original span. Default `true`.
   */
  normalize?: boolean;
  /** Called on every violation (abort or warning); its throws are swallowed. */
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
  /** The rule that matched. */
  rule: string;
  /** The matched text. */
  match: string;
  /** Its position. */
  index: number;
  /** What the rule does with a match: `block`, `redact` or `warn`. */
  strategy: RegexFilterStrategy;
  /** Where the match starts (offset in the text). */
  start: number;
  /** Where the match ends (exclusive). */
  end: number;
  /** The matched value. */
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
  /** The rule that matched. */
  rule: string;
  /** Its position. */
  index: number;
  /** The length of the matched text. */
  length: number;
  /** What replaced it. */
  replacement: string;
  /** Other rules that matched the same span. */
  overlappingRules?: string[];
  /** The matched value. */
  value?: string;
}

interface CompiledRule extends ScanRule {
  name: string;
  source: RegExp;
  replacement: string;
  maxMatchLength: number;
  strategy: RegexFilterStrategy;
}

type Where = 'input' | 'output';
const DEFAULT_CARRYOVER = 128;
const DEFAULT_MAX_MATCH_LENGTH = 128;
/** Most text a straddling match may keep held (beyond the carry-over). */
const MAX_HOLD = 8192;
const HELD_KEY = 'regexFilterHeld';
const CONTEXT_KEY = 'regexFilterContext';
/** Starts of matches the stream released before their continuation arrived (state key). */
const FRAGMENTS_KEY = 'regexFilterFragments';
/** Characters of already released text kept as look-behind context for the next scan. */
const CONTEXT_SIZE = 32;
const STRICTNESS: Record<RegexFilterStrategy, number> = { warn: 0, redact: 1, block: 2 };

function compileRule(rule: RegexRule, defaultStrategy: RegexFilterStrategy): CompiledRule {
  if (typeof rule.name !== 'string' || rule.name === '') throw new TypeError('RegexFilterProcessor: every rule needs a name');
  const isRegExp = rule.pattern instanceof RegExp;
  if (!isRegExp && typeof rule.pattern !== 'string') throw new TypeError(`RegexFilterProcessor: rule '${rule.name}' needs a RegExp or string pattern`);
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

/**
 * Finds, blocks, redacts or reports text matching regular expressions — your `rules` and the
 * `pii`, `secrets` and `urls` presets — in the input and in everything the output can carry to a
 * client, the model or a store: streamed text and reasoning, tool-call input (streamed and final),
 * tool results (`processToolResult`), tool errors, `data-*` chunks, structured-output objects and
 * the stored reply. No model call.
 *
 * Matching runs on a normalised view of the text (zero-width and soft-hyphen characters dropped,
 * full-width and other-script digits and common homoglyphs folded), and the original span is
 * redacted. Streamed channels hold back their last `streamCarryoverSize` characters, so a match
 * split across chunks or across a step's text blocks is handled before any of it is emitted.
 * Scanning is incremental: n streamed characters cost O(n).
 *
 * `block` aborts the run (a tripwire; `retry: false`); `redact` replaces each match with its
 * rule's replacement (`$1`, `$&` expanded) and reports to `onViolation`; `warn` only reports.
 *
 * Hooks: `processInput` (phase `input`/`all`), `processOutputStream`, `processToolResult`,
 * `processOutputResult` and, when the filter is also an input processor, `processLLMRequest`
 * (tool outputs in each prompt; phase `output`/`all`). Use the same instance in `inputProcessors`
 * and `outputProcessors` to cover every channel.
 *
 * @example
 * ```ts
 * import { RegexFilterProcessor } from 'rxagent/processors';
 * const filter = new RegexFilterProcessor({ presets: ['pii', 'secrets'], strategy: 'redact' });
 * const agent = new Agent({ id: 'a', instructions: '…', model, inputProcessors: [filter], outputProcessors: [filter] });
 * ```
 */
export class RegexFilterProcessor implements Processor<'regex-filter'> {
  /** The processor's id. */
  readonly id = 'regex-filter';
  /** A human-readable name. */
  readonly name = 'Regex Filter';
  /** What the processor does. */
  readonly description = 'Blocks, redacts or reports text matching regular expressions.';
  /** Data chunks are checked (channel `data`) and release the held text first, so they never overtake it. */
  readonly processDataParts = true;
  readonly onViolation: ((violation: ProcessorViolation) => void | Promise<void>) | undefined;
  private readonly rules: CompiledRule[];
  private readonly phase: RegexFilterPhase;
  private readonly includeValues: boolean;
  private readonly carryover: number;
  private readonly maxHold: number;
  private readonly scanStep: number;
  private readonly channels: ReadonlySet<RegexFilterChannel>;
  private readonly normalize: boolean;
  /** Set only during one synchronous `processOutputResult` call (no state crosses calls). */
  private quietWarnings = false;

  constructor(options: RegexFilterOptions = {}) {
    const strategy = options.strategy ?? 'block';
    if (!(strategy in STRICTNESS)) throw new TypeError(`RegexFilterProcessor: unknown strategy '${String(strategy)}'`);
    const presets = options.presets === undefined ? [] : Array.isArray(options.presets) ? options.presets : [options.presets];
    for (const preset of presets) {
      if (!(preset in REGEX_PRESETS)) throw new TypeError(`RegexFilterProcessor: unknown preset '${String(preset)}' (pii, secrets, urls)`);
    }
    const rules = [...presets.flatMap((preset) => REGEX_PRESETS[preset]), ...(options.rules ?? [])];
    if (rules.length === 0) throw new TypeError('RegexFilterProcessor needs at least one rule or preset.');
    this.rules = rules.map((rule) => compileRule(rule, strategy));
    this.phase = options.phase ?? 'all';
    this.includeValues = options.includeRedactedValues ?? false;
    const carryover = options.streamCarryoverSize;
    if (carryover !== undefined && (!Number.isSafeInteger(carryover) || carryover < 1)) {
      throw new RangeError(`RegexFilterProcessor: streamCarryoverSize must be a positive safe integer, got ${String(carryover)}`);
    }
    const customLongest = Math.max(0, ...(options.rules ?? []).map((rule) => rule.maxMatchLength ?? 0));
    this.carryover = carryover ?? Math.max(DEFAULT_CARRYOVER, customLongest);
    this.maxHold = Math.min(MAX_HOLD, this.carryover + Math.max(...this.rules.map((rule) => rule.maxMatchLength)));
    this.scanStep = Math.max(1, this.carryover >> 1);
    this.channels = new Set(options.channels ?? ALL_CHANNELS);
    this.normalize = options.normalize ?? true;
    this.onViolation = options.onViolation;
  }

  /** Every match in `text`, merged where they overlap (earliest first; the longest owns a region). */
  scan(text: string): RegexMatch[] {
    return this.regionsOf(text, 0).map((region) => this.toMatch(text, region));
  }

  /** `text` with its `redact` matches replaced. */
  redactText(text: string): string {
    const regions = this.regionsOf(text, 0).filter((region) => this.strategyOf(region) === 'redact');
    let result = '';
    let cursor = 0;
    for (const region of regions) {
      result += text.slice(cursor, region.start) + this.replacementOf(region);
      cursor = region.end;
    }
    return result + text.slice(cursor);
  }

  /** The input with matches handled; the same array when nothing matched (as the reference returns it). */
  processInput({ messages, abort }: ProcessInputArgs): MastraDBMessage[] {
    if (this.phase === 'output') return messages;
    const stored = messages.map(storedShape);
    const filtered = this.filterMessages(stored, 'input', abort);
    return filtered === stored ? messages : filtered;
  }

  /** The `processOutputStream` hook (see `Processor.processOutputStream` for when it runs and what it may return). */
  processOutputStream({ part, state, abort }: ProcessOutputStreamArgs): ChunkType | null {
    if (this.phase === 'input') return part;
    state.streamed = true;
    return emitInOrder(state, this.streamOutputs(part, state, abort));
  }

  /** The `processToolResult` hook (see `Processor.processToolResult` for when it runs and what it may return). */
  processToolResult({ result, toolCallId, toolName, args, messageList, abort }: ProcessToolResultArgs): undefined {
    if (this.phase === 'input' || !this.channels.has('tool-result')) return undefined;
    const filtered = this.filterValue(result, 'output', abort);
    if (filtered !== result) {
      messageList.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId, toolName, args, result: filtered } });
    }
    return undefined;
  }

  /**
   * The prompt of each model call: tool outputs in it (results and error texts) are filtered, so
   * a tool error — stored by the runtime before any output hook runs — never reaches the model
   * unfiltered. Runs when the filter is also one of the agent's `inputProcessors`.
   */
  processLLMRequest({ prompt, abort }: ProcessLLMRequestArgs): {
    /** The prompt sent to the model. */
    prompt: LanguageModelV4Prompt;
  } | undefined {
    if (this.phase === 'input') return undefined;
    let changed = false;
    const filtered = prompt.map((message) => {
      if (message.role !== 'tool') return message;
      const content = message.content.map((part) => {
        if (part.type !== 'tool-result') return part;
        const output = this.filterValue(part.output, 'output', abort, 'a tool output sent to the model');
        return output === part.output ? part : { ...part, output: output as typeof part.output };
      });
      if (content.every((part, index) => part === message.content[index])) return message;
      changed = true;
      return { ...message, content };
    });
    return changed ? { prompt: filtered } : undefined;
  }

  /** The `processOutputResult` hook (see `Processor.processOutputResult` for when it runs and what it may return). */
  processOutputResult({ messages, state, abort }: ProcessOutputResultArgs): MastraDBMessage[] | undefined {
    if (this.phase === 'input') return undefined;
    // Warnings about text the stream hook already saw were reported there.
    this.quietWarnings = state.streamed === true;
    let filtered: MastraDBMessage[];
    try {
      filtered = this.filterMessages(messages, 'output', abort);
    } finally {
      this.quietWarnings = false;
    }
    const fragments = state[FRAGMENTS_KEY] as string[] | undefined;
    if (fragments !== undefined) filtered = withoutFragments(filtered, fragments);
    return filtered === messages ? undefined : filtered;
  }

  // ---- matching ---------------------------------------------------------------------------

  private regionsOf(text: string, from: number): ScanRegion[] {
    if (text === '') return [];
    const view = this.normalize ? normalizeForMatching(text) : { text, starts: undefined, ends: undefined };
    return mergeRegions(scanMatches(text, this.rules, from, view));
  }

  private strategyOf(region: ScanRegion): RegexFilterStrategy {
    let strictest: RegexFilterStrategy = 'warn';
    for (const index of region.rules) {
      const strategy = (this.rules[index] as CompiledRule).strategy;
      if (STRICTNESS[strategy] > STRICTNESS[strictest]) strictest = strategy;
    }
    return strictest;
  }

  /** The replacement of a region: the owner's replacement, `$` references expanded when the rule alone covers the match. */
  private replacementOf(region: ScanRegion): string {
    const rule = this.rules[region.owner.rule] as CompiledRule;
    if (region.rules.length > 1 || !rule.replacement.includes('$')) return rule.replacement;
    const matched = region.owner.value;
    const isolated = rule.source.exec(matched);
    if (isolated === null || isolated.index !== 0 || isolated[0].length !== matched.length) return rule.replacement;
    return matched.replace(rule.source, rule.replacement);
  }

  private toMatch(text: string, region: ScanRegion): RegexMatch {
    const value = text.slice(region.start, region.end);
    const rule = (this.rules[region.owner.rule] as CompiledRule).name;
    return { rule, match: value, index: region.start, strategy: this.strategyOf(region), start: region.start, end: region.end, value };
  }

  /**
   * Applies the strategies to regions of `text`: aborts on a block, reports, and returns the
   * replacement of each region (the original text for `warn`).
   */
  private enforce(text: string, regions: readonly ScanRegion[], where: Where, abort: AbortFunction, location: string): Map<ScanRegion, string> {
    const replacements = new Map<ScanRegion, string>();
    if (regions.length === 0) return replacements;
    const matches = regions.map((region) => this.toMatch(text, region));
    const blocking = matches.filter((match) => match.strategy === 'block');
    if (blocking.length > 0) {
      const rules = [...new Set(blocking.map((match) => match.rule))];
      abort(`Regex filter: blocked ${location === 'streaming content' ? location : 'content'} matching patterns: ${rules.join(', ')}`, {
        retry: false,
        metadata: {
          processorId: this.id,
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
      reportViolation(this, `Regex filter: redacted content matching patterns: ${rules.join(', ')}`, {
        strategy: 'redact',
        phase,
        where: location,
        redactions,
      });
    }
    if (warned.length > 0 && !this.quietWarnings) {
      const rules = [...new Set(warned.map((match) => match.rule))];
      reportViolation(this, `Regex filter: matched patterns: ${rules.join(', ')}`, {
        strategy: 'warn',
        phase,
        where: location,
        matches: warned.map((match) => ({ rule: match.rule, index: match.index, ...(this.includeValues ? { match: match.value } : {}) })),
      });
    }
    return replacements;
  }

  /** A complete text through the strategies. */
  private filterText(text: string, where: Where, abort: AbortFunction, location: string): string {
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

  private filterValue(value: unknown, where: Where, abort: AbortFunction, location = 'tool output'): unknown {
    return mapStrings(value, (text) => this.filterText(text, where, abort, location));
  }

  // ---- messages -----------------------------------------------------------------------------

  /**
   * Every part of the messages: the text parts of all messages as one text (a match split across
   * parts or steps is found), reasoning, tool calls, results and errors, data parts.
   */
  private filterMessages(messages: MastraDBMessage[], where: Where, abort: AbortFunction): MastraDBMessage[] {
    const location = where === 'input' ? 'content' : 'the stored reply';
    const texts = this.filterJoinedTexts(messages, where, abort, location);
    let changed = false;
    const result = messages.map((message, messageIndex) => {
      let partsChanged = false;
      const parts = message.content.parts.map((part, partIndex): MastraMessagePart => {
        const next = this.filterPart(part, texts.get(`${messageIndex}:${partIndex}`), where, abort);
        if (next !== part) partsChanged = true;
        return next;
      });
      const legacy = message.content.content;
      const legacyText = typeof legacy === 'string' ? texts.get(`${messageIndex}:legacy`) : undefined;
      if (!partsChanged && legacyText === undefined) return message;
      changed = true;
      const content = { ...message.content, parts };
      if (legacyText !== undefined) content.content = legacyText;
      else if (typeof legacy === 'string' && parts.some((part) => part.type === 'text')) {
        content.content = parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
      }
      return { ...message, content };
    });
    return changed ? result : messages;
  }

  /** The new text of each text part (key `message:part`) whose text changed, matched as one joined text. */
  private filterJoinedTexts(messages: readonly MastraDBMessage[], where: Where, abort: AbortFunction, location: string): Map<string, string> {
    const pieces: Array<{ key: string; start: number; text: string }> = [];
    let joined = '';
    messages.forEach((message, messageIndex) => {
      const parts = message.content.parts;
      let hasText = false;
      parts.forEach((part, partIndex) => {
        if (part.type !== 'text') return;
        hasText = true;
        pieces.push({ key: `${messageIndex}:${partIndex}`, start: joined.length, text: part.text });
        joined += part.text;
      });
      if (!hasText && typeof message.content.content === 'string') {
        pieces.push({ key: `${messageIndex}:legacy`, start: joined.length, text: message.content.content });
        joined += message.content.content;
      }
    });
    const changedTexts = new Map<string, string>();
    const regions = this.regionsOf(joined, 0);
    if (regions.length === 0) return changedTexts;
    const replacements = this.enforce(joined, regions, where, abort, location);
    const heldRegions: HeldRegion[] = [];
    for (const region of regions) {
      const replacement = replacements.get(region);
      if (replacement !== undefined) heldRegions.push({ start: region.start, end: region.end, replacement });
    }
    for (const piece of pieces) {
      const text = spliceRegions(piece.text, piece.start, heldRegions);
      if (text !== piece.text) changedTexts.set(piece.key, text);
    }
    return changedTexts;
  }

  private filterPart(part: MastraMessagePart, newText: string | undefined, where: Where, abort: AbortFunction): MastraMessagePart {
    const location = where === 'input' ? 'content' : 'the stored reply';
    switch (part.type) {
      case 'text':
        return newText === undefined ? part : { ...part, text: newText };
      case 'reasoning': {
        if (where === 'output' && !this.channels.has('reasoning')) return part;
        const reasoning = this.filterText(part.reasoning, where, abort, location);
        const details = mapStrings(part.details, (text) => this.filterText(text, where, abort, location)) as typeof part.details;
        return reasoning === part.reasoning && details === part.details ? part : { ...part, reasoning, details };
      }
      case 'tool-invocation': {
        const invocation = part.toolInvocation as typeof part.toolInvocation & { errorText?: unknown };
        const check = (channel: RegexFilterChannel) => where === 'input' || this.channels.has(channel);
        const args = check('tool-input') ? this.filterValue(invocation.args, where, abort, location) : invocation.args;
        const result = 'result' in invocation && check('tool-result') ? this.filterValue(invocation.result, where, abort, location) : undefined;
        const errorText = typeof invocation.errorText === 'string' && check('tool-error') ? this.filterText(invocation.errorText, where, abort, location) : invocation.errorText;
        const resultChanged = 'result' in invocation && result !== invocation.result;
        if (args === invocation.args && !resultChanged && errorText === invocation.errorText) return part;
        return {
          ...part,
          toolInvocation: { ...invocation, args, ...(resultChanged ? { result } : {}), ...(errorText === undefined ? {} : { errorText }) } as typeof part.toolInvocation,
        };
      }
      default:
        if (part.type.startsWith('data-') && (where === 'input' || this.channels.has('data'))) {
          const data = (part as { data?: unknown }).data;
          const filtered = this.filterValue(data, where, abort, location);
          return filtered === data ? part : ({ ...part, data: filtered } as MastraMessagePart);
        }
        return part;
    }
  }

  // ---- stream -------------------------------------------------------------------------------

  private streamOutputs(part: ChunkType, state: ProcessorState, abort: AbortFunction): ChunkType[] {
    const outputs: ChunkType[] = [];
    let held = state[HELD_KEY] as HeldChannel | undefined;
    const channel = channelOf(part);
    const checked = channel !== undefined && this.channels.has(channel.channel.startsWith('tool-input:') ? 'tool-input' : (channel.channel as RegexFilterChannel));
    if (held !== undefined && (!checked || held.channel !== channel?.channel)) {
      outputs.push(...this.flush(held, state, abort));
      held = undefined;
      state[HELD_KEY] = undefined;
    }
    if (channel === undefined || !checked) {
      outputs.push(this.filterChunk(part, abort));
      return outputs;
    }
    if (channel.text === undefined) {
      // A block boundary (`text-end`, the next `text-start`) is held with the text before it, so a
      // match continuing in the next block of the channel is replaced whole. The hold is released
      // by any other chunk: a tool call, the step's end, or the `finish` the runtime sends through
      // the processors at the end of the last step's output, before the step's message is built.
      if (held !== undefined && held.items.length > 0) holdChunk(held, part);
      else outputs.push(part);
      return outputs;
    }
    if (held === undefined) {
      held = openChannel(channel.channel);
      state[HELD_KEY] = held;
    }
    holdText(held, channel.id, channel.text, part);
    if (held.length >= held.nextScanAt) outputs.push(...this.releaseReady(held, state, abort, false));
    return outputs;
  }

  /** Scans the held text and releases what can no longer be part of a match (all of it when `flushing`). */
  private releaseReady(held: HeldChannel, state: ProcessorState, abort: AbortFunction, flushing: boolean): ChunkType[] {
    const contexts = (state[CONTEXT_KEY] as Record<string, string> | undefined) ?? {};
    const context = contexts[held.channel] ?? '';
    const text = heldText(held);
    const logical = context + text;
    // Scan from the context's start: a match begun in text already released (the previous block,
    // or a cut forced through a long match) has its continuation here redacted.
    const found = this.regionsOf(logical, 0).filter((region) => region.end > context.length);
    let cut = flushing ? text.length : Math.max(0, text.length - this.carryover);
    if (!flushing) {
      for (const region of found) {
        const start = region.start - context.length;
        if (start < cut && region.end - context.length > cut) cut = Math.max(0, start);
      }
      // A match may hold the text back only up to `maxHold`; past that, the cut goes through it.
      if (text.length - cut > this.maxHold) cut = text.length - this.carryover;
    }
    const released = found.filter((region) => region.start - context.length < cut);
    const replacements = this.enforce(logical, released, 'output', abort, 'streaming content');
    const regions: HeldRegion[] = [];
    for (const region of released) {
      const replacement = replacements.get(region);
      if (replacement === undefined) continue;
      if (region.start < context.length && held.channel === 'text' && replacement !== logical.slice(region.start, region.end)) {
        // A match begun in text released before a tool call (the next step continues it): that
        // part has streamed; the stored reply loses it (see processOutputResult).
        const fragments = (state[FRAGMENTS_KEY] as string[] | undefined) ?? [];
        fragments.push(logical.slice(region.start, context.length));
        state[FRAGMENTS_KEY] = fragments;
      }
      regions.push({ start: Math.max(0, region.start - context.length), end: Math.min(cut, region.end - context.length), replacement });
    }
    const outputs = cut > 0 || flushing ? releaseHeld(held, cut, regions, !flushing) : [];
    contexts[held.channel] = logical.slice(Math.max(0, context.length + cut - CONTEXT_SIZE), context.length + cut);
    state[CONTEXT_KEY] = contexts;
    held.nextScanAt = held.length + this.scanStep;
    return outputs;
  }

  private flush(held: HeldChannel, state: ProcessorState, abort: AbortFunction): ChunkType[] {
    return this.releaseReady(held, state, abort, true);
  }

  /** A chunk that is not held: its text-bearing fields go through the strategies. */
  private filterChunk(part: ChunkType, abort: AbortFunction): ChunkType {
    const location = 'streaming content';
    switch (part.type) {
      case 'tool-call': {
        if (!this.channels.has('tool-input')) return part;
        const args = this.filterValue(part.payload.args, 'output', abort, location);
        return args === part.payload.args ? part : { ...part, payload: { ...part.payload, args } };
      }
      case 'tool-result': {
        if (!this.channels.has('tool-result')) return part;
        const result = this.filterValue(part.payload.result, 'output', abort, location);
        const args = this.channels.has('tool-input') ? this.filterValue(part.payload.args, 'output', abort, location) : part.payload.args;
        return result === part.payload.result && args === part.payload.args ? part : { ...part, payload: { ...part.payload, result, args } };
      }
      case 'tool-error': {
        if (!this.channels.has('tool-error')) return part;
        const error = this.filterValue(part.payload.error, 'output', abort, location);
        const args = this.channels.has('tool-input') ? this.filterValue(part.payload.args, 'output', abort, location) : part.payload.args;
        return error === part.payload.error && args === part.payload.args ? part : { ...part, payload: { ...part.payload, error, args } };
      }
      case 'object':
      case 'object-result': {
        if (!this.channels.has('object')) return part;
        const object = this.filterValue(part.payload.object, 'output', abort, location);
        return object === part.payload.object ? part : ({ ...part, payload: { ...part.payload, object } } as ChunkType);
      }
      default:
        if (part.type.startsWith('data-') && this.channels.has('data')) {
          const data = (part as { data?: unknown }).data;
          const filtered = this.filterValue(data, 'output', abort, location);
          return filtered === data ? part : ({ ...part, data: filtered } as ChunkType);
        }
        return part;
    }
  }
}

/** The piece of a joined text starting at `offset`, with the regions (offsets into the joined text) replaced. */
function spliceRegions(text: string, offset: number, regions: readonly HeldRegion[]): string {
  let result = '';
  let cursor = 0;
  const end = offset + text.length;
  for (const region of regions) {
    if (region.end <= offset || region.start >= end) continue;
    const start = Math.max(region.start, offset) - offset;
    result += text.slice(cursor, Math.max(cursor, start));
    if (region.start >= offset) result += region.replacement;
    cursor = Math.max(cursor, Math.min(region.end, end) - offset);
  }
  return result + text.slice(cursor);
}

/**
 * Removes from the stored reply the start of each match that continued past a step boundary (a
 * tool call): the text part that ends with that start loses it, so the stored reply holds the
 * replacement only (the continuation was replaced in the stream).
 */
function withoutFragments(messages: MastraDBMessage[], fragments: readonly string[]): MastraDBMessage[] {
  const pending = [...fragments];
  let changed = false;
  const result = messages.map((message) => {
    if (message.role !== 'assistant' || pending.length === 0) return message;
    let partsChanged = false;
    const parts = message.content.parts.map((part): MastraMessagePart => {
      const fragment = pending[0];
      if (part.type !== 'text' || fragment === undefined || !part.text.endsWith(fragment)) return part;
      pending.shift();
      partsChanged = true;
      return { ...part, text: part.text.slice(0, part.text.length - fragment.length) };
    });
    if (!partsChanged) return message;
    changed = true;
    return { ...message, content: { ...message.content, parts } };
  });
  return changed ? result : messages;
}
