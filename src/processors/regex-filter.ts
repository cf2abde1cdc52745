import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { MastraDBMessage } from '../message-list/index.js';
import type {
  ChunkType,
  ProcessInputArgs,
  ProcessLLMRequestArgs,
  Processor,
  ProcessorViolation,
  ProcessOutputResultArgs,
  ProcessOutputStreamArgs,
  ProcessToolResultArgs,
} from '../contract/index.js';
import { emitInOrder } from './internal/emit-in-order.js';
import { InvalidProcessorOptionError } from '../contract/index.js';
import { booleanOption, compileProblem, functionOption, listOfOption, oneOfOption, stringOption, wholeNumberOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';
import { storedShape } from './internal/message-text.js';
import { REGEX_PRESETS, type RegexPreset, type RegexRule } from './internal/regex-presets.js';
import { RegexMatcher, STRICTNESS } from './internal/regex-matcher.js';
import { filterMessages, filterPrompt, withoutFragments } from './internal/regex-messages.js';
import { streamFragments, streamOutputs, type StreamFilter } from './internal/regex-stream.js';
import type { RegexFilterChannel, RegexFilterOptions, RegexFilterPhase, RegexFilterStrategy, RegexMatch } from './regex-filter-types.js';

export { REGEX_PRESETS, type RegexPreset, type RegexRule };
export type { RegexFilterChannel, RegexFilterOptions, RegexFilterPhase, RegexFilterStrategy, RegexMatch, RegexRedaction } from './regex-filter-types.js';

const ALL_CHANNELS: readonly RegexFilterChannel[] = ['text', 'reasoning', 'tool-input', 'tool-result', 'tool-error', 'data', 'object', 'file'];
const DEFAULT_CARRYOVER = 128;
/** Most text a straddling match may keep held (beyond the carry-over). */
const MAX_HOLD = 8192;

/** The presets, checked: one of `REGEX_PRESETS`' own names, or an array of them. */
function presetsOption(value: unknown): readonly RegexPreset[] {
  if (value === undefined) return [];
  const presets: unknown[] = Array.isArray(value) ? value : [value];
  for (const preset of presets) {
    // own keys only: `'toString' in REGEX_PRESETS` is true too
    if (typeof preset !== 'string' || !Object.hasOwn(REGEX_PRESETS, preset)) {
      throw new InvalidProcessorOptionError('regex-filter', 'presets', preset, `one of ${Object.keys(REGEX_PRESETS).map((name) => `'${name}'`).join(', ')}, or an array of them`);
    }
  }
  return presets as RegexPreset[];
}

/** The option names {@link RegexFilterProcessor} knows (the reference's are all among them). */
const REGEX_FILTER_OPTION_KEYS = optionKeys(
  'regex-filter',
  optionNames<RegexFilterOptions>({
    rules: true,
    presets: true,
    strategy: true,
    phase: true,
    includeRedactedValues: true,
    streamCarryoverSize: true,
    channels: true,
    normalize: true,
    onViolation: true,
  }),
);

/** The names a rule may hold (the reference's `name`, `pattern`, `replacement` among them): a misspelt rule `strategy` must not leave the rule at the processor's. */
const RULE_KEYS = optionKeys('regex-filter', optionNames<RegexRule>({ name: true, pattern: true, flags: true, replacement: true, validate: true, maxMatchLength: true, strategy: true }));

/**
 * The rules, checked one field at a time, each error naming `rules[i].<field>`: a non-empty name, a
 * RegExp or a pattern string that compiles with its `flags`, a string replacement, a `validate`
 * function, a whole `maxMatchLength` of at least 1, a known strategy.
 */
function rulesOption(value: unknown, strategies: readonly RegexFilterStrategy[], strategy: RegexFilterStrategy): readonly RegexRule[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidProcessorOptionError('regex-filter', 'rules', value, 'an array of rules');
  value.forEach((rule: unknown, index) => {
    const at = `rules[${index}]`;
    if (typeof rule !== 'object' || rule === null) throw new InvalidProcessorOptionError('regex-filter', at, rule, 'an object { name, pattern }');
    checkOptionKeys(RULE_KEYS, rule, at);
    const { name, pattern, flags, replacement, validate, maxMatchLength, strategy: own } = rule as Partial<Record<keyof RegexRule, unknown>>;
    if (typeof name !== 'string' || name.trim() === '') throw new InvalidProcessorOptionError('regex-filter', `${at}.name`, name, 'a non-empty string');
    const givenFlags = stringOption('regex-filter', `${at}.flags`, flags, '');
    if (pattern instanceof RegExp) {
      if (flags !== undefined) throw new InvalidProcessorOptionError('regex-filter', `${at}.flags`, flags, 'left out when the pattern is a RegExp (its own flags are used)');
    } else if (typeof pattern === 'string') {
      try {
        new RegExp('', givenFlags.replace(/[gy]/g, ''));
      } catch {
        throw new InvalidProcessorOptionError('regex-filter', `${at}.flags`, flags, 'regular-expression flags (d, i, m, s, u, v)');
      }
      try {
        new RegExp(pattern, givenFlags.replace(/[gy]/g, ''));
      } catch (error) {
        throw new InvalidProcessorOptionError('regex-filter', `${at}.pattern`, pattern, `a valid regular expression (${compileProblem(error)})`);
      }
    } else {
      throw new InvalidProcessorOptionError('regex-filter', `${at}.pattern`, pattern, 'a RegExp or a pattern string');
    }
    stringOption('regex-filter', `${at}.replacement`, replacement, undefined);
    functionOption('regex-filter', `${at}.validate`, validate as RegexRule['validate']);
    wholeNumberOption('regex-filter', `${at}.maxMatchLength`, maxMatchLength, 1, 1);
    // a rule's own strategy is read on the same path as the processor's
    oneOfOption('regex-filter', `${at}.strategy`, own, strategies, strategy);
  });
  return value as RegexRule[];
}

/**
 * Finds, blocks, redacts or reports text matching regular expressions — your `rules` and the
 * `pii`, `secrets` and `urls` presets — in the input and in everything the output can carry to a
 * client, the model or a store: streamed text and reasoning, tool-call input (streamed and final),
 * tool results (`processToolResult`), tool errors, `data-*` chunks, structured-output objects and
 * the stored reply. No model call.
 *
 * Matching runs on a normalised view of the text that reads like the screen (invisible characters
 * dropped; full-width forms, other-script digits, Unicode's confusables and dashes folded; text
 * behind bidi overrides also read in display order), and the original span is redacted. Streamed channels hold back their last `streamCarryoverSize` characters, so a match
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
  private readonly matcher: RegexMatcher;
  private readonly phase: RegexFilterPhase;
  private readonly channels: ReadonlySet<RegexFilterChannel>;
  /** The matcher, the channels and the hold-back sizes, for the stream and message halves. */
  private readonly filter: StreamFilter;

  constructor(options: RegexFilterOptions = {}) {
    checkOptionKeys(REGEX_FILTER_OPTION_KEYS, options);
    // own keys only: `'toString' in STRICTNESS` is true too
    const strategies = Object.keys(STRICTNESS) as RegexFilterStrategy[];
    const strategy = oneOfOption('regex-filter', 'strategy', options.strategy, strategies, 'block');
    const presets = presetsOption(options.presets);
    const ownRules = rulesOption(options.rules, strategies, strategy);
    const rules = [...presets.flatMap((preset) => REGEX_PRESETS[preset]), ...ownRules];
    if (rules.length === 0) throw new InvalidProcessorOptionError('regex-filter', 'rules', options.rules, 'at least one rule, or a preset in presets');
    this.onViolation = functionOption('regex-filter', 'onViolation', options.onViolation);
    const includeValues = booleanOption('regex-filter', 'includeRedactedValues', options.includeRedactedValues, false);
    const normalize = booleanOption('regex-filter', 'normalize', options.normalize, true);
    this.matcher = new RegexMatcher({ processor: this, rules, strategy, includeValues, normalize });
    this.phase = oneOfOption('regex-filter', 'phase', options.phase, ['input', 'output', 'all'], 'all');
    const carryover = options.streamCarryoverSize === undefined ? undefined : wholeNumberOption('regex-filter', 'streamCarryoverSize', options.streamCarryoverSize, DEFAULT_CARRYOVER, 1);
    const customLongest = Math.max(0, ...ownRules.map((rule) => rule.maxMatchLength ?? 0));
    const resolvedCarryover = carryover ?? Math.max(DEFAULT_CARRYOVER, customLongest);
    this.channels = new Set(listOfOption('regex-filter', 'channels', options.channels, ALL_CHANNELS, ALL_CHANNELS));
    this.filter = {
      matcher: this.matcher,
      channels: this.channels,
      carryover: resolvedCarryover,
      maxHold: Math.min(MAX_HOLD, resolvedCarryover + this.matcher.longestMatch),
      scanStep: Math.max(1, resolvedCarryover >> 1),
    };
  }

  /** Every match in `text`, merged where they overlap (earliest first; the longest owns a region). */
  scan(text: string): RegexMatch[] {
    return this.matcher.regionsOf(text, 0).map((region) => this.matcher.toMatch(text, region));
  }

  /** `text` with its `redact` matches replaced. */
  redactText(text: string): string {
    const regions = this.matcher.regionsOf(text, 0).filter((region) => this.matcher.strategyOf(region) === 'redact');
    let result = '';
    let cursor = 0;
    for (const region of regions) {
      result += text.slice(cursor, region.start) + this.matcher.replacementOf(region);
      cursor = region.end;
    }
    return result + text.slice(cursor);
  }

  /** The `processInput` hook: the input messages filtered (the same array when nothing matched, as the reference returns it). */
  processInput({ messages, abort }: ProcessInputArgs): MastraDBMessage[] {
    if (this.phase === 'output') return messages;
    // called directly (as the reference's own tests do), a message may have string content
    const stored = messages.map(storedShape);
    const filtered = filterMessages(this.filter, stored, 'input', abort);
    return filtered === stored ? messages : filtered;
  }

  processOutputStream({ part, state, abort, retryCount }: ProcessOutputStreamArgs): ChunkType | null {
    if (this.phase === 'input') return part;
    state.streamed = true;
    return emitInOrder(state, streamOutputs(this.filter, part, state, abort, retryCount ?? 0));
  }

  /** The `processToolResult` hook (see `Processor.processToolResult` for when it runs and what it may return). */
  processToolResult({ result, toolCallId, toolName, args, messageList, abort }: ProcessToolResultArgs): undefined {
    if (this.phase === 'input' || !this.channels.has('tool-result')) return undefined;
    const filtered = this.matcher.filterValue(result, 'output', abort);
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
    const filtered = filterPrompt(this.matcher, prompt, abort);
    return filtered === undefined ? undefined : { prompt: filtered };
  }

  /** The `processOutputResult` hook (see `Processor.processOutputResult` for when it runs and what it may return). */
  /**
   * The `processOutputResult` hook: the reply filtered — the same array when nothing changed, as the
   * reference returns it (the runtime takes it as "no change"). Called directly (as the reference's
   * own tests do), messages may have string content and `state` may be missing.
   */
  processOutputResult({ messages, state = {}, abort }: ProcessOutputResultArgs): MastraDBMessage[] {
    if (this.phase === 'input') return messages;
    // Warnings about text the stream hook already saw were reported there.
    this.matcher.quietWarnings = state.streamed === true;
    const stored = messages.map(storedShape);
    let filtered: MastraDBMessage[];
    try {
      filtered = filterMessages(this.filter, stored, 'output', abort);
    } finally {
      this.matcher.quietWarnings = false;
    }
    const fragments = streamFragments(state);
    if (fragments.length > 0) filtered = withoutFragments(filtered, fragments);
    return filtered === stored ? messages : filtered;
  }
}
