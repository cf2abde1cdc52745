import type { MastraDBMessage } from '../message-list/index.js';
import type {
  ChunkOfType,
  ChunkType,
  ProcessInputStepArgs,
  ProcessInputStepResult,
  Processor,
  ProcessorViolation,
  ProcessOutputStreamArgs,
} from '../contract/index.js';
import { defaultTokenizer, type Tokenizer } from './internal/lazy-tokenizer.js';
import { reportViolation } from './internal/violation.js';
import { functionOption, numberOption, oneOfOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';
import { InvalidProcessorOptionError } from '../contract/index.js';

/**
 * What to do when the output exceeds its budget: cut the text there, or abort the run.
 *
 * @example
 * ```ts
 * const strategy: TokenLimitStrategy = 'abort';
 * ```
 */
export type TokenLimitStrategy = 'truncate' | 'abort';

/**
 * Output counting: the run's text so far (`'cumulative'`) or each chunk on its own (`'part'`).
 *
 * @example
 * ```ts
 * const countMode: TokenCountMode = 'part';
 * ```
 */
export type TokenCountMode = 'cumulative' | 'part';

/**
 * Options of {@link TokenLimiterProcessor}.
 *
 * @example
 * ```ts
 * const options: TokenLimiterOptions = { limit: 8000, outputLimit: 1000, strategy: 'truncate' };
 * ```
 */
export interface TokenLimiterOptions {
  /** Token budget of the prompt (system messages + messages), and of the output unless `outputLimit` is set. */
  limit: number;
  /** Token budget of the streamed output text. Default: `limit`. */
  outputLimit?: number;
  /** Output over budget: `'truncate'` (default) cuts the text and drops later text deltas; `'abort'` ends the run. */
  strategy?: TokenLimitStrategy;
  /** Default `'cumulative'`. */
  countMode?: TokenCountMode;
  /**
   * Counts the tokens of a text. Default: the `o200k_base` encoding of `gpt-tokenizer` (an optional
   * peer dependency, imported on first use: install it, or pass a counter), over pieces of at most
   * 512 characters (linear time on any input; a piece cut inside a word may count one token more).
   */
  tokenCounter?: (text: string) => number;
  /** Called when the input or output is over the limit; its throws are swallowed. */
  onViolation?: (violation: ProcessorViolation) => void | Promise<void>;
  /** @deprecated The reference's option (ignored there too): accepted without effect (warned once); use `tokenCounter`. */
  encoding?: unknown;
  /** @deprecated The reference's option: accepted without effect (warned once); the oldest messages are dropped first, the current turn kept. */
  trimMode?: 'best-fit' | 'contiguous' | 'memory-only';
  /** @deprecated The reference's option: accepted without effect (warned once); the prompt is trimmed to `limit`. */
  atMaxRemoveTokens?: number;
  /** @deprecated The reference's option: accepted without effect (warned once); trimming changes the step's prompt, never stored memory. */
  onMemoryTrim?: (...args: never[]) => unknown;
}

/** The option names {@link TokenLimiterProcessor} knows (the reference's among them). */
const TOKEN_LIMITER_OPTION_KEYS = optionKeys(
  'token-limiter',
  optionNames<TokenLimiterOptions>({
    limit: true,
    outputLimit: true,
    strategy: true,
    countMode: true,
    tokenCounter: true,
    onViolation: true,
    encoding: true,
    trimMode: true,
    atMaxRemoveTokens: true,
    onMemoryTrim: true,
  }),
  {
    encoding: 'tokens are counted with o200k_base, or with tokenCounter',
    trimMode: 'the oldest messages are dropped first, the current turn kept',
    atMaxRemoveTokens: 'the prompt is trimmed to limit',
    onMemoryTrim: "trimming changes the step's prompt, never stored memory",
  },
);

/** Tokens added per message for role and framing (as OpenAI chat formats count them). */
const MESSAGE_OVERHEAD = 4;
const specialTokensAsText = { disallowedSpecial: new Set<string>() };

/** The loaded default tokenizer; a clear error when used before `ready()` (the hooks wait for it themselves). */
function tokenizer(): Tokenizer {
  const loaded = defaultTokenizer.current;
  if (loaded === undefined) {
    throw new Error('TokenLimiterProcessor: the default tokenizer is not loaded yet: `await limiter.ready()` before calling countMessage() directly.');
  }
  return loaded;
}

/**
 * Longest piece the tokenizer sees at once. BPE merging is quadratic in the length of one
 * pre-token (100 KB of one repeated character took 9 s), so long texts are counted in pieces,
 * cut at a whitespace where there is one: linear in the text's length. A cut inside a word can
 * count one token more than the whole word would (never fewer).
 */
const MAX_PIECE = 512;

/** The pieces `text` is counted in (see {@link MAX_PIECE}). */
function pieces(text: string): string[] {
  if (text.length <= MAX_PIECE) return [text];
  const found: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + MAX_PIECE);
    if (end < text.length) {
      let space = end;
      while (space > start + MAX_PIECE / 2 && text.charCodeAt(space) !== 0x20) space--;
      if (space > start + MAX_PIECE / 2) end = space;
    }
    found.push(text.slice(start, end));
    start = end;
  }
  return found;
}

function defaultCounter(text: string): number {
  if (text === '') return 0;
  const loaded = tokenizer();
  let tokens = 0;
  for (const piece of pieces(text)) tokens += loaded.countTokens(piece, specialTokensAsText);
  return tokens;
}

/** The longest prefix of `text` within `budget` tokens of the default encoding (piecewise, linear). */
function defaultTruncate(text: string, budget: number): string {
  const loaded = tokenizer();
  let kept = '';
  let left = budget;
  for (const piece of pieces(text)) {
    const tokens = loaded.encode(piece, specialTokensAsText);
    if (tokens.length <= left) {
      kept += piece;
      left -= tokens.length;
      continue;
    }
    return kept + loaded.decode(tokens.slice(0, left));
  }
  return kept;
}

function stringify(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

/** The tool call ids a message carries (calls and results). */
function toolCallIdsOf(message: MastraDBMessage): string[] {
  const ids: string[] = [];
  for (const part of message.content.parts) if (part.type === 'tool-invocation') ids.push(part.toolInvocation.toolCallId);
  return ids;
}

/**
 * Keeps the prompt within a token budget and limits the length of the output. No model call.
 *
 * Input (`processInputStep`, every step): when the system messages plus the messages exceed
 * `limit`, the oldest messages are dropped from the step's list until it fits. Rules:
 * - messages that share a tool call id (a call and its result) are dropped together, never split;
 * - the latest user message and everything after it (the current turn, including its tool calls
 *   and results) are never dropped, so the input is never emptied and a running tool loop keeps
 *   its history; if that alone exceeds the budget the list is left as it is and `onViolation` is
 *   told. Dropped messages leave the run's `MessageList` (older, remembered ones stay in storage).
 *
 * Output (`processOutputStream`): text deltas are counted (`countMode`); past `outputLimit`,
 * `'truncate'` cuts the delta at the budget and drops later text deltas (other chunks pass, so the
 * stream stays well-formed) and reports once; `'abort'` aborts the run.
 *
 * @example
 * ```ts
 * import { TokenLimiterProcessor } from 'rxagent/processors';
 * const limiter = new TokenLimiterProcessor({ limit: 8000, outputLimit: 1000 });
 * const agent = new Agent({ id: 'a', instructions: '…', model, inputProcessors: [limiter], outputProcessors: [limiter] });
 * ```
 */
export class TokenLimiterProcessor implements Processor<'token-limiter'> {
  /** The processor's id. */
  readonly id = 'token-limiter';
  /** A human-readable name. */
  readonly name = 'Token Limiter';
  /** What the processor does. */
  readonly description = 'Trims the prompt to a token budget and limits the output length.';
  readonly onViolation: ((violation: ProcessorViolation) => void | Promise<void>) | undefined;
  private readonly limit: number;
  private readonly outputLimit: number;
  private readonly strategy: TokenLimitStrategy;
  private readonly countMode: TokenCountMode;
  private readonly counter: (text: string) => number;
  private readonly customCounter: boolean;

  /** `options`, or the limit alone (`new TokenLimiterProcessor(4000)`, as the reference accepts it). */
  constructor(options: TokenLimiterOptions | number) {
    if (typeof options === 'number') options = { limit: options };
    checkOptionKeys(TOKEN_LIMITER_OPTION_KEYS, options);
    if (options.limit === undefined) throw new InvalidProcessorOptionError('token-limiter', 'limit', undefined, 'a number above 0');
    this.limit = numberOption('token-limiter', 'limit', options.limit, 0, { above: 0 });
    this.outputLimit = numberOption('token-limiter', 'outputLimit', options.outputLimit, this.limit, { above: 0 });
    this.strategy = oneOfOption('token-limiter', 'strategy', options.strategy, ['truncate', 'abort'], 'truncate');
    this.countMode = oneOfOption('token-limiter', 'countMode', options.countMode, ['cumulative', 'part'], 'cumulative');
    const tokenCounter = functionOption('token-limiter', 'tokenCounter', options.tokenCounter);
    this.counter = tokenCounter ?? defaultCounter;
    this.customCounter = tokenCounter !== undefined;
    this.onViolation = functionOption('token-limiter', 'onViolation', options.onViolation);
    // start loading the default tokenizer now, so the first hook rarely waits (a failure is reported by that hook)
    if (!this.customCounter) defaultTokenizer.load().catch(() => undefined);
  }

  /**
   * Resolves when the counter is usable: at once with a `tokenCounter`, else once `gpt-tokenizer`
   * is loaded (rejects with a clear error when it is not installed). The hooks wait by themselves;
   * call it before using {@link countMessage} directly, or to fail fast at start-up.
   */
  async ready(): Promise<this> {
    if (!this.customCounter) await defaultTokenizer.load();
    return this;
  }

  /** True while the default tokenizer is still loading (the hooks then wait for it once). */
  private get waitsForTokenizer(): boolean {
    return !this.customCounter && defaultTokenizer.current === undefined;
  }

  /** Tokens of one stored message: text, reasoning, tool calls and results, plus framing. */
  countMessage(message: MastraDBMessage): number {
    let tokens = MESSAGE_OVERHEAD;
    for (const part of message.content.parts) {
      switch (part.type) {
        case 'text':
          tokens += this.counter(part.text);
          break;
        case 'reasoning':
          tokens += this.counter(part.reasoning);
          break;
        case 'tool-invocation':
          tokens += this.counter(part.toolInvocation.toolName) + this.counter(stringify(part.toolInvocation.args));
          tokens += this.counter(stringify(part.toolInvocation.result));
          break;
        case 'file':
          tokens += this.counter(`${part.mimeType} ${part.filename ?? ''}`);
          break;
        default:
          break;
      }
    }
    if (message.content.parts.length === 0 && typeof message.content.content === 'string') tokens += this.counter(message.content.content);
    return tokens;
  }

  /**
   * The `processInputStep` hook (see `Processor.processInputStep` for when it runs and what it may
   * return). While the default tokenizer loads, the hook's answer is a promise of its work once it
   * has loaded: the hook runs once per step, as the operator called it (a subclass that overrides
   * it is not called again).
   */
  processInputStep(args: ProcessInputStepArgs): ProcessInputStepResult | undefined | Promise<ProcessInputStepResult | undefined> {
    if (this.waitsForTokenizer) return defaultTokenizer.load().then(() => this.limitInput(args));
    return this.limitInput(args);
  }

  /** `processInputStep`'s work, with the counter ready: the oldest turns dropped until the prompt fits. */
  private limitInput(args: ProcessInputStepArgs): ProcessInputStepResult | undefined {
    const { messages, systemMessages } = args;
    const systemTokens = systemMessages.reduce((sum, message) => sum + MESSAGE_OVERHEAD + this.counter(message.content), 0);
    const sizes = messages.map((message) => this.countMessage(message));
    let total = systemTokens + sizes.reduce((sum, size) => sum + size, 0);
    if (total <= this.limit || messages.length === 0) return undefined;

    const groupOf = groupByToolCalls(messages);
    let latestUser = -1;
    for (let index = messages.length - 1; index >= 0 && latestUser === -1; index--) if (messages[index]?.role === 'user') latestUser = index;
    const protectedFrom = latestUser === -1 ? messages.length - 1 : latestUser;
    const protectedGroups = new Set<number>();
    for (let index = protectedFrom; index < messages.length; index++) protectedGroups.add(groupOf[index] as number);

    const dropped = new Set<number>();
    for (let index = 0; index < protectedFrom && total > this.limit; index++) {
      const group = groupOf[index] as number;
      if (dropped.has(group) || protectedGroups.has(group)) continue;
      dropped.add(group);
      messages.forEach((_, member) => {
        if (groupOf[member] === group) total -= sizes[member] as number;
      });
    }
    if (total > this.limit) {
      reportViolation(this, `token-limiter: the current turn alone needs ${total} tokens (limit ${this.limit}); sent as is`, {
        phase: 'input',
        tokens: total,
        limit: this.limit,
      });
    }
    if (dropped.size === 0) return undefined;
    return { messages: messages.filter((_, index) => !dropped.has(groupOf[index] as number)) };
  }

  /**
   * The `processOutputStream` hook (see `Processor.processOutputStream` for when it runs and what it
   * may return). A text delta that comes while the default tokenizer loads is answered with a
   * promise of the hook's work once it has loaded (the hook itself is not called again).
   */
  processOutputStream(args: ProcessOutputStreamArgs): ChunkType | null | Promise<ChunkType | null> {
    const { part, state } = args;
    if (part.type === 'step-start' && this.countMode === 'cumulative') {
      startAttempt(state, part.payload.stepNumber, args.retryCount ?? 0);
      return part;
    }
    if (part.type !== 'text-delta') return part;
    if (this.waitsForTokenizer) return defaultTokenizer.load().then(() => this.limitDelta(part, args));
    return this.limitDelta(part, args);
  }

  /** `processOutputStream`'s work on a text delta, with the counter ready: the delta kept, cut, dropped, or the run aborted. */
  private limitDelta(part: ChunkOfType<'text-delta'>, { state, abort }: ProcessOutputStreamArgs): ChunkType | null {
    if (state.truncated === true && this.countMode === 'cumulative') return null;
    const used = this.countMode === 'cumulative' ? ((state.outputTokens as number | undefined) ?? 0) : 0;
    const tokens = this.counter(part.payload.text);
    if (used + tokens <= this.outputLimit) {
      state.outputTokens = used + tokens;
      return part;
    }
    if (this.strategy === 'abort') {
      abort(`Output exceeded the token limit (${this.outputLimit})`, {
        metadata: { limit: this.outputLimit, tokens: used + tokens, countMode: this.countMode },
      });
    }
    const text = this.truncate(part.payload.text, Math.max(0, this.outputLimit - used));
    if (state.truncated !== true) {
      reportViolation(this, `token-limiter: output truncated at ${this.outputLimit} tokens`, { phase: 'output', limit: this.outputLimit });
    }
    state.truncated = true;
    state.outputTokens = this.outputLimit;
    return text === '' ? null : { ...part, payload: { ...part.payload, text } };
  }

  /** The longest prefix of `text` within `budget` tokens. */
  private truncate(text: string, budget: number): string {
    if (budget <= 0) return '';
    if (!this.customCounter) return defaultTruncate(text, budget);
    let low = 0;
    let high = text.length;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (this.counter(text.slice(0, middle)) <= budget) low = middle;
      else high = middle - 1;
    }
    return text.slice(0, low);
  }
}

/** Where the output count stood when the current attempt's step started (plain JSON in `state`). */
interface AttemptStart {
  readonly stepNumber: number;
  readonly retryCount: number;
  readonly outputTokens: number;
  readonly truncated: boolean;
}

/**
 * A step starts (cumulative counting): when it follows a rejected attempt — a tripwire retry
 * (`retryCount` grew) or an API-error retry (the same step number again) — the rejected attempt's
 * tokens are taken back, since nobody sees its text; then the count at this start is kept.
 */
function startAttempt(state: Record<string, unknown>, stepNumber: number, retryCount: number): void {
  const previous = state.attemptStart as AttemptStart | undefined;
  if (previous !== undefined && (retryCount > previous.retryCount || stepNumber <= previous.stepNumber)) {
    state.outputTokens = previous.outputTokens;
    if (previous.truncated) state.truncated = true;
    else delete state.truncated;
  }
  const start: AttemptStart = { stepNumber, retryCount, outputTokens: (state.outputTokens as number | undefined) ?? 0, truncated: state.truncated === true };
  state.attemptStart = start;
}

/** For each message, the index of its group: messages sharing a tool call id are in one group. */
function groupByToolCalls(messages: readonly MastraDBMessage[]): number[] {
  const parent = messages.map((_, index) => index);
  const find = (index: number): number => {
    let root = index;
    while (parent[root] !== root) root = parent[root] as number;
    parent[index] = root;
    return root;
  };
  const owner = new Map<string, number>();
  messages.forEach((message, index) => {
    for (const toolCallId of toolCallIdsOf(message)) {
      const first = owner.get(toolCallId);
      if (first === undefined) owner.set(toolCallId, index);
      else parent[find(index)] = find(first);
    }
  });
  return messages.map((_, index) => find(index));
}
