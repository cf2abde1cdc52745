/**
 * The output-stream gate of the model-backed guards (Moderation, PIIDetector, SystemPromptScrubber):
 * content reaches the client only after a judge saw it, judged spans are released in arrival order,
 * and the stream never waits for a judge while the model is still writing.
 *
 * **Channels.** Every channel a client receives can be judged: text and reasoning (per block id),
 * each tool call's streamed input (`tool-call-delta`, JSON source) and its final `tool-call`, `data-*`
 * chunks and `tool-error` chunks (`channels` chooses). Chunks of channels not judged, and every
 * other chunk, pass in order behind the held content.
 *
 * **Streams.** A text (or reasoning) block is one judged stream; a block that starts after the
 * previous one of its kind ended, with no other block of that kind open, continues its stream (a
 * value split across two consecutive blocks is judged whole). Blocks open at the same time
 * (interleaved ids) are separate streams, each judged on its own text. A tool call's input is one
 * stream, judged whole when it ends (its `tool-call` reuses that verdict when it carries the same
 * arguments). Any chunk that is not content (a tool call, `data-*`, `step-finish`, `finish`…) ends
 * every stream: what they hold is judged and released before it.
 *
 * **Windows (`streamMode: 'window'`).** A stream's text is cut into windows following the schedule
 * (default 12, 48, 200, 800, 800… characters), at sentence ends (the first window, at a word boundary
 * when there is none; see `windowCut`), and
 * each window is judged as soon as it is cut, while the earlier ones show (a first window smaller
 * than the next is a lead: the second waits for its verdict and is judged with it in front) — the hook returns at
 * once, and judged text is released on the next chunk. `'final'` judges a stream once, when it ends.
 *
 * **Data windows.** `data-*` chunks are held per data type in a pending window judged with one call when
 * its text reaches the schedule's size for its index (then doubling, never past one judge call's input)
 * or when any other chunk comes; a part whose `id` is pending replaces it in place (only the latest
 * version is judged and released). The call budget counts windows, not chunks.
 *
 * **Verdicts** are applied when their content is released: `keep`, `replace` (values redacted,
 * JSON-escaped in tool input), `drop` (the span's text, the data chunks of a window; a flagged tool call's input
 * cannot be cut out of the call and blocks), `block` (the hook aborts the run on the first chunk
 * after the verdict arrived, before anything after the flagged content is released).
 */
import { InvalidProcessorOptionError, type AbortFunction, type ChunkType, type ProcessorState } from '../../contract/index.js';
import { emitInOrder } from './emit-in-order.js';
import { merged, newStream, releaseDelta, type Entry, type Judgment, type JudgedStream, type Span } from './gate-release.js';
import { listOfOption, numberOption, oneOfOption } from './guard-options.js';
import { optionNames } from './option-keys.js';
import { windowCut, windowSizeAt, DEFAULT_JUDGE_INPUT_CHARS, DEFAULT_WINDOW_SCHEDULE, type GuardChannel, type JudgedChannel, type Verdict } from './judged-spans.js';

export type { GuardChannel, JudgedChannel };
import { applyToWhole, judgedText } from './whole-chunks.js';

/**
 * How a model-backed processor checks streamed output: per window of text, or once per stream.
 *
 * @example
 * ```ts
 * const streamMode: StreamMode = 'final';
 * ```
 */
export type StreamMode = 'final' | 'window';

/**
 * The fixed window of `windowSize` before window schedules existed: about two sentences.
 *
 * @example
 * ```ts
 * new ModerationProcessor({ model, windowSize: DEFAULT_WINDOW_SIZE }); // fixed 200-character windows
 * ```
 */
export const DEFAULT_WINDOW_SIZE = 200;

/** Judged content the gate asks about. */
export interface JudgeRequest {
  text: string;
  channel: JudgedChannel;
}

/** Judges one text; never throws, never calls `abort()` (it may run after the hook returned). */
export type SpanJudge = (request: JudgeRequest) => Promise<Verdict>;

/** At most this many windows of one run are judged at once (more wait for the next chunk). */
const MAX_IN_FLIGHT = 4;

interface GateState {
  queue: Entry[];
  streams: Map<string, JudgedStream>;
  ended: Map<string, JudgedStream>;
  inFlight: number;
  judgments: Judgment[];
  /** Each tool call's input stream, until its `tool-call` arrives. */
  toolInputs: Map<string, JudgedStream>;
  /** The pending (not yet judged) window of `data-*` chunks, per data type. */
  dataWindows: Map<string, DataWindow>;
  /** Data windows judged so far in this step, per data type (where each type is in the schedule). */
  dataWindowCounts: Map<string, number>;
}

type ChunkEntry = Extract<Entry, { kind: 'chunk' }>;

/** Data chunks of one type held until they are judged together, one call for the window. */
interface DataWindow {
  readonly entries: ChunkEntry[];
  /** The judged text of each entry (same order). */
  readonly texts: string[];
  /** Judged characters held (the texts joined by newlines). */
  size: number;
}

/** The judgment of a data window not yet sent: its chunks stay held (never resolves, never read). */
const PENDING_WINDOW: Judgment = Object.freeze({ verdict: undefined, done: new Promise<void>(() => undefined) });

/** Options of a gate. */
export interface CheckedStreamOptions {
  streamMode?: StreamMode;
  /** Fixed windows of this many characters (the schedule `[windowSize]`). */
  windowSize?: number;
  /** Window sizes, the last one repeating. Default {@link DEFAULT_WINDOW_SCHEDULE}. */
  windowSchedule?: readonly number[];
  /** Channels judged (default: all). */
  channels?: readonly GuardChannel[];
  /** Characters one judge call carries (the guard's `maxJudgeInputChars`): data windows stop growing there. */
  maxJudgeInputChars?: number;
  stateKey: string;
  /** The processor's id, for the reason of a block the gate itself decides. */
  processorId: string;
}

/** The gate's options a guard takes from its user. */
export type GuardStreamOptionName = 'streamMode' | 'windowSize' | 'windowSchedule' | 'channels';

/**
 * The names of a gate's options a guard takes from its user (the others it sets itself): one list
 * for every guard that gates its stream.
 *
 * @example
 * ```ts
 * const keys = optionKeys('pii-detector', [...GUARD_JUDGE_OPTION_NAMES, ...GUARD_STREAM_OPTION_NAMES, 'strategy']);
 * ```
 */
export const GUARD_STREAM_OPTION_NAMES = optionNames<Pick<CheckedStreamOptions, GuardStreamOptionName>>({
  streamMode: true,
  windowSize: true,
  windowSchedule: true,
  channels: true,
});

/**
 * The window sizes of `options`: `windowSchedule` (a non-empty array of finite sizes of at least 1),
 * else `[windowSize]`, else the default. A size of 0, a negative one or `NaN` is refused, never
 * read as 1 or as "no windows".
 */
function windowScheduleOf(options: CheckedStreamOptions): readonly number[] {
  const { processorId, windowSchedule, windowSize } = options;
  if (windowSchedule !== undefined) {
    const sizes: unknown = windowSchedule;
    if (!Array.isArray(sizes) || sizes.length === 0 || !sizes.every((size) => typeof size === 'number' && size >= 1 && size <= Number.MAX_SAFE_INTEGER)) {
      throw new InvalidProcessorOptionError(processorId, 'windowSchedule', sizes, `a non-empty array of sizes from 1 to ${Number.MAX_SAFE_INTEGER}`);
    }
    return sizes.map((size: number) => Math.floor(size));
  }
  if (windowSize === undefined) return DEFAULT_WINDOW_SCHEDULE;
  return [Math.floor(numberOption(processorId, 'windowSize', windowSize, 1, { least: 1, most: Number.MAX_SAFE_INTEGER }))];
}

/** Every channel a guard can judge (the default). */
const GUARD_CHANNELS: readonly GuardChannel[] = ['text', 'reasoning', 'tool-input', 'data', 'tool-error'];

const textChannels = new Set(['text-start', 'text-delta', 'text-end', 'reasoning-start', 'reasoning-delta', 'reasoning-end']);

/**
 * One processor's gate over its streamed output (state lives in the run's processor `state`).
 *
 * @example
 * ```ts
 * const gate = new CheckedStream({ stateKey: 'held', processorId: 'guard' });
 * return gate.process(part, state, abort, (request) => judge(request.text));
 * ```
 */
export class CheckedStream {
  private readonly mode: StreamMode;
  private readonly schedule: readonly number[];
  private readonly channels: ReadonlySet<JudgedChannel>;
  private readonly stateKey: string;
  private readonly processorId: string;
  private readonly dataWindowCap: number;

  constructor(options: CheckedStreamOptions) {
    this.mode = oneOfOption(options.processorId, 'streamMode', options.streamMode, ['window', 'final'], 'window');
    this.schedule = windowScheduleOf(options);
    const channels = new Set<JudgedChannel>(listOfOption(options.processorId, 'channels', options.channels, GUARD_CHANNELS, GUARD_CHANNELS));
    if (channels.has('tool-input')) channels.add('tool-call');
    // a structured object is the model's text as a structurer read it (perhaps before this guard judged the text)
    if (channels.has('text')) channels.add('object');
    this.channels = channels;
    this.stateKey = options.stateKey;
    this.processorId = options.processorId;
    this.dataWindowCap = Math.max(200, Math.floor(options.maxJudgeInputChars ?? DEFAULT_JUDGE_INPUT_CHARS));
  }

  /**
   * Handles one chunk: holds content, starts judging what is complete, releases what is judged,
   * in order. Synchronous for content chunks; a chunk that ends the held streams waits for their
   * verdicts (the stream's end never races ahead of its content).
   */
  process(part: ChunkType, state: ProcessorState, abort: AbortFunction, judge: SpanJudge): ChunkType | null | Promise<ChunkType | null> {
    // A step (or a retried attempt) starts with nothing held; content still held here belongs to an
    // attempt that ended without passing its end through this gate (rejected): it is dropped, never shown.
    if (part.type === 'step-start') state[this.stateKey] = undefined;
    const gate = ((state[this.stateKey] as GateState | undefined) ??= { queue: [], streams: new Map(), ended: new Map(), inFlight: 0, judgments: [], toolInputs: new Map(), dataWindows: new Map(), dataWindowCounts: new Map() });
    const wait = this.ingest(gate, part, judge, state);
    const released = this.drain(gate, abort);
    if (!wait || gate.queue.length === 0) return emitInOrder(state, released);
    return this.waitAndDrain(gate, abort, released).then((all) => emitInOrder(state, all));
  }

  /** Adds `part` to the queue; true when it ends the held streams (the call then waits for them). */
  private ingest(gate: GateState, part: ChunkType, judge: SpanJudge, state: ProcessorState): boolean {
    const type = part.type;
    if (!type.startsWith('data-')) this.flushData(gate, judge);
    if (textChannels.has(type)) {
      const channel = type.startsWith('text') ? 'text' : 'reasoning';
      if (!this.channels.has(channel)) return this.passBehind(gate, part);
      const payload = (part as { payload: { id: string; text?: string } }).payload;
      const id = payload.id;
      if (type === `${channel}-start`) this.startBlock(gate, channel, id, judge);
      else if (type === `${channel}-end`) this.endBlock(gate, channel, id, judge);
      else this.addText(gate, this.blockStream(gate, channel, id, judge), payload.text ?? '', part, judge);
      if (type !== `${channel}-delta`) gate.queue.push({ kind: 'chunk', chunk: part, judgment: undefined, channel: undefined, span: undefined });
      return false;
    }
    if (type === 'tool-call-input-streaming-start' || type === 'tool-call-delta' || type === 'tool-call-input-streaming-end') {
      if (!this.channels.has('tool-input')) return this.passBehind(gate, part);
      this.closeEnded(gate, undefined, judge);
      const key = `tool-input:${part.payload.toolCallId}`;
      let stream = gate.toolInputs.get(part.payload.toolCallId);
      if (stream === undefined || stream.closed) {
        stream = newStream('tool-input', key);
        gate.streams.set(key, stream);
        gate.toolInputs.set(part.payload.toolCallId, stream);
      }
      if (type === 'tool-call-delta') this.addText(gate, stream, part.payload.argsTextDelta ?? '', part, judge);
      else gate.queue.push({ kind: 'chunk', chunk: part, judgment: undefined, channel: undefined, span: undefined });
      if (type === 'tool-call-input-streaming-end') this.close(gate, stream, judge);
      return false;
    }
    this.closeAll(gate, judge);
    if (type.startsWith('data-') && this.channels.has('data')) return this.holdData(gate, part, judge);
    this.flushData(gate, judge);
    const channel: JudgedChannel | undefined =
      type === 'tool-call' ? (this.channels.has('tool-input') ? 'tool-call' : undefined)
      : type === 'tool-error' ? 'tool-error'
      : type.startsWith('data-') ? 'data'
      : type === 'object' || type === 'object-result' ? 'object'
      : undefined;
    if (channel === undefined || !this.channels.has(channel)) {
      gate.queue.push({ kind: 'chunk', chunk: part, judgment: undefined, channel: undefined, span: undefined });
      return true;
    }
    const streamed = type === 'tool-call' ? this.streamedInput(gate, part) : undefined;
    if (streamed !== undefined) {
      gate.queue.push({ kind: 'chunk', chunk: part, judgment: streamed.judgment, channel, span: streamed });
      return true;
    }
    const text = judgedText(part);
    const decide = channel === 'object' ? () => judge({ text, channel }).then((verdict) => noteDroppedObject(state, verdict)) : () => judge({ text, channel });
    const judgment = text.trim() === '' ? undefined : this.startJudgment(gate, channel, decide);
    gate.queue.push({ kind: 'chunk', chunk: part, judgment, channel, span: undefined });
    return true;
  }

  /**
   * Holds a `data-*` chunk in its type's pending window (a chunk whose `id` is already pending there
   * replaces it in place: only the latest version is judged and released). The window is judged once
   * it reaches its size: the schedule's size for its index, then doubling, up to one judge call's
   * input (`maxJudgeInputChars`); any other chunk judges what is pending. Never waits.
   */
  private holdData(gate: GateState, part: ChunkType, judge: SpanJudge): boolean {
    const text = judgedText(part);
    if (text.trim() === '') return this.passBehind(gate, part);
    const type = part.type;
    let window = gate.dataWindows.get(type);
    const id = (part as { id?: unknown }).id;
    const at = window !== undefined && typeof id === 'string' ? window.entries.findIndex((entry) => (entry.chunk as { id?: unknown }).id === id) : -1;
    // a window never grows past one judge call's input: a part that would overflow it starts the next one
    if (window !== undefined && at < 0 && window.entries.length > 0 && window.size + 1 + text.length > this.dataWindowCap) {
      this.judgeDataWindow(gate, type, judge);
      window = undefined;
    }
    if (window === undefined) {
      window = { entries: [], texts: [], size: 0 };
      gate.dataWindows.set(type, window);
    }
    if (at >= 0) {
      const entry = window.entries[at] as ChunkEntry;
      entry.chunk = part;
      window.size += text.length - (window.texts[at] as string).length;
      window.texts[at] = text;
    } else {
      const entry: ChunkEntry = { kind: 'chunk', chunk: part, judgment: PENDING_WINDOW, channel: 'data', span: undefined };
      gate.queue.push(entry);
      window.size += (window.entries.length > 0 ? 1 : 0) + text.length;
      window.entries.push(entry);
      window.texts.push(text);
    }
    if (this.mode === 'window') {
      const size = Math.min(this.dataWindowCap, this.dataWindowSize(gate.dataWindowCounts.get(type) ?? 0));
      if (window.size >= size && (gate.inFlight < MAX_IN_FLIGHT || window.size >= this.dataWindowCap)) this.judgeDataWindow(gate, type, judge);
    } else if (window.size >= this.dataWindowCap) this.judgeDataWindow(gate, type, judge);
    return false;
  }

  /** The size of a data type's window `index`: the schedule, then doubling its last size. */
  private dataWindowSize(index: number): number {
    const last = this.schedule.length - 1;
    if (index <= last) return windowSizeAt(this.schedule, index);
    return (this.schedule[last] as number) * 2 ** Math.min(index - last, 30);
  }

  /** Judges every pending data window (a chunk that is not data came, or the stream ends). */
  private flushData(gate: GateState, judge: SpanJudge): void {
    for (const type of [...gate.dataWindows.keys()]) this.judgeDataWindow(gate, type, judge);
  }

  /** Sends `type`'s pending data window to the judge: one call, its verdict applies to each of its chunks. */
  private judgeDataWindow(gate: GateState, type: string, judge: SpanJudge): void {
    const window = gate.dataWindows.get(type);
    gate.dataWindows.delete(type);
    if (window === undefined || window.entries.length === 0) return;
    gate.dataWindowCounts.set(type, (gate.dataWindowCounts.get(type) ?? 0) + 1);
    const text = window.texts.join('\n');
    const judgment = this.startJudgment(gate, 'data', () => judge({ text, channel: 'data' }));
    for (const entry of window.entries) entry.judgment = judgment;
  }

  /** A chunk of a channel this gate does not judge: kept in order behind held content. */
  private passBehind(gate: GateState, part: ChunkType): boolean {
    gate.queue.push({ kind: 'chunk', chunk: part, judgment: undefined, channel: undefined, span: undefined });
    return false;
  }

  private startBlock(gate: GateState, channel: 'text' | 'reasoning', id: string, judge: SpanJudge): void {
    const otherOpen = hasOpenBlock(gate, channel);
    const ended = gate.ended.get(channel);
    // a stream of another kind waiting for its continuation ends here
    this.closeEnded(gate, channel, judge);
    let stream: JudgedStream;
    if (ended !== undefined && !otherOpen) {
      gate.ended.delete(channel);
      stream = ended;
    } else {
      if (ended !== undefined) this.close(gate, ended, judge);
      stream = newStream(channel, `${channel}:${id}`);
    }
    stream.open.add(id);
    gate.streams.set(`${channel}:${id}`, stream);
  }

  private endBlock(gate: GateState, channel: 'text' | 'reasoning', id: string, judge: SpanJudge): void {
    const stream = gate.streams.get(`${channel}:${id}`);
    if (stream === undefined) return;
    gate.streams.delete(`${channel}:${id}`);
    stream.open.delete(id);
    if (stream.open.size > 0) return;
    if (hasOpenBlock(gate, channel)) this.close(gate, stream, judge);
    else {
      const previous = gate.ended.get(channel);
      if (previous !== undefined && previous !== stream) this.close(gate, previous, judge);
      gate.ended.set(channel, stream);
    }
  }

  /** The stream of block `id` (a delta without its start opens the block). */
  private blockStream(gate: GateState, channel: 'text' | 'reasoning', id: string, judge: SpanJudge): JudgedStream {
    const stream = gate.streams.get(`${channel}:${id}`);
    if (stream !== undefined) return stream;
    this.startBlock(gate, channel, id, judge);
    return gate.streams.get(`${channel}:${id}`) as JudgedStream;
  }

  private addText(gate: GateState, stream: JudgedStream, text: string, part: ChunkType, judge: SpanJudge): void {
    if (text === '') return;
    gate.queue.push({ kind: 'delta', stream, start: stream.pendingStart + stream.pending.length, text, chunk: part });
    stream.pending += text;
    if (this.mode === 'window' && stream.channel !== 'tool-input') this.cutWindows(gate, stream, judge);
  }

  private cutWindows(gate: GateState, stream: JudgedStream, judge: SpanJudge): void {
    while (gate.inFlight < MAX_IN_FLIGHT) {
      const cut = windowCut(stream.pending, windowSizeAt(this.schedule, stream.windows), stream.windows === 0);
      if (cut === 0) return;
      stream.windows++;
      const span = this.judgeSpan(gate, stream, cut, judge);
      // a first window smaller than the next is a lead: the next is judged after it, with it in front
      if (stream.windows === 1 && windowSizeAt(this.schedule, 1) > windowSizeAt(this.schedule, 0)) stream.lead = span;
    }
  }

  /** Judges the first `length` pending characters of `stream` as one span. */
  private judgeSpan(gate: GateState, stream: JudgedStream, length: number, judge: SpanJudge): Span {
    const text = stream.pending.slice(0, length);
    const channel = stream.channel;
    // The window after the small first one waits for its verdict and, when it was kept, is judged with
    // the first window's text in front: nothing is judged only in the first window's few words, and a
    // violation in the first window is not reported twice. The verdict acts on this span's own text.
    const lead = stream.lead;
    const leadText = lead?.text;
    stream.lead = undefined;
    const decide =
      lead === undefined || leadText === undefined
        ? () => judge({ text, channel })
        : () =>
            lead.judgment.done.then(() => {
              const first = lead.judgment.verdict as Verdict;
              // the run ends at the first window's block: this one is not judged (nor reported) again
              if (first.action === 'block') return first;
              if (first.action !== 'keep') return judge({ text, channel });
              span.text = leadText + text;
              span.context = leadText.length;
              return judge({ text: span.text, channel });
            });
    const span: Span = { start: stream.pendingStart, end: stream.pendingStart + length, text, context: 0, judgment: this.startJudgment(gate, channel, decide), regions: undefined };
    stream.spans.push(span);
    stream.pending = stream.pending.slice(length);
    stream.pendingStart += length;
    return span;
  }

  /** The stream has no more text: what it holds is judged (in windows of the schedule's largest size). */
  private close(gate: GateState, stream: JudgedStream, judge: SpanJudge): void {
    if (stream.closed) return;
    stream.closed = true;
    for (const [key, value] of gate.streams) if (value === stream) gate.streams.delete(key);
    for (const [key, value] of gate.ended) if (value === stream) gate.ended.delete(key);
    if (this.mode === 'window' && stream.channel !== 'tool-input') {
      const largest = Math.max(...this.schedule);
      for (let cut = windowCut(stream.pending, largest, false); cut > 0 && cut < stream.pending.length; cut = windowCut(stream.pending, largest, false)) {
        this.judgeSpan(gate, stream, cut, judge);
      }
    }
    if (stream.pending !== '') this.judgeSpan(gate, stream, stream.pending.length, judge);
  }

  /** Ends the streams waiting for a continuation (all, or all but `keep`'s channel). */
  private closeEnded(gate: GateState, keep: string | undefined, judge: SpanJudge): void {
    for (const [channel, stream] of [...gate.ended]) if (channel !== keep) this.close(gate, stream, judge);
  }

  private closeAll(gate: GateState, judge: SpanJudge): void {
    for (const stream of [...gate.ended.values(), ...gate.streams.values()]) this.close(gate, stream, judge);
  }

  /** The judged span of a `tool-call`'s streamed input, when the call carries exactly the streamed arguments. */
  private streamedInput(gate: GateState, part: Extract<ChunkType, { type: 'tool-call' }>): Span | undefined {
    const stream = gate.toolInputs.get(part.payload.toolCallId);
    gate.toolInputs.delete(part.payload.toolCallId);
    const span = stream?.spans.at(-1);
    if (stream === undefined || span === undefined || span.start !== 0 || span.text === undefined) return undefined;
    try {
      return JSON.stringify(JSON.parse(span.text)) === JSON.stringify(part.payload.args) ? span : undefined;
    } catch {
      return undefined;
    }
  }

  /** Starts a judgment of content of `channel`: `decide` is called once, on a later microtask. */
  private startJudgment(gate: GateState, channel: JudgedChannel, decide: () => Promise<Verdict>): Judgment {
    gate.inFlight++;
    const judgment: Judgment = {
      verdict: undefined,
      done: Promise.resolve()
        .then(decide)
        .then(
          (verdict) => verdict,
          (): Verdict => ({ action: 'block', reason: `${this.processorId}: the check failed`, metadata: { processorId: this.processorId } }),
        )
        .then((verdict) => {
          gate.inFlight--;
          judgment.verdict = verdict.action === 'drop' && (channel === 'tool-input' || channel === 'tool-call') ? this.toolCallFlagged() : verdict;
        }),
    };
    gate.judgments.push(judgment);
    return judgment;
  }

  /** A flagged tool call's input cannot be cut out of the call: `drop` blocks there. */
  private toolCallFlagged(): Verdict {
    return {
      action: 'block',
      reason: `${this.processorId}: a tool call's input was flagged (it cannot be removed from the call)`,
      metadata: { processorId: this.processorId, channel: 'tool-input' },
    };
  }

  /** Releases the queue's head while it is judged; aborts on a block verdict. */
  private drain(gate: GateState, abort: AbortFunction): ChunkType[] {
    this.abortOnBlock(gate, abort);
    const released: ChunkType[] = [];
    while (gate.queue.length > 0) {
      const entry = gate.queue[0] as Entry;
      if (entry.kind === 'chunk') {
        if (entry.judgment !== undefined && entry.judgment.verdict === undefined) break;
        gate.queue.shift();
        const chunk = entry.judgment === undefined ? entry.chunk : this.applyToChunk(entry, abort);
        if (chunk !== null) released.push(chunk);
        continue;
      }
      if (!releaseDelta(entry, released)) break;
      gate.queue.shift();
    }
    return merged(released);
  }

  private applyToChunk(entry: Extract<Entry, { kind: 'chunk' }>, abort: AbortFunction): ChunkType | null {
    const verdict = entry.judgment?.verdict ?? { action: 'keep' };
    if (verdict.action === 'block') abort(verdict.reason, { metadata: verdict.metadata });
    return applyToWhole(entry.chunk, verdict, entry.span !== undefined);
  }

  private abortOnBlock(gate: GateState, abort: AbortFunction): void {
    for (const judgment of gate.judgments) {
      const verdict = judgment.verdict;
      if (verdict?.action === 'block') abort(verdict.reason, { metadata: verdict.metadata });
    }
    gate.judgments = gate.judgments.filter((judgment) => judgment.verdict === undefined);
  }

  /** Waits for the judgments the queue holds, releasing in order as they arrive. */
  private async waitAndDrain(gate: GateState, abort: AbortFunction, released: ChunkType[]): Promise<ChunkType[]> {
    const all = [...released];
    while (gate.queue.length > 0) {
      const pending = pendingJudgments(gate);
      if (pending.length === 0) break;
      await Promise.race(pending.map((judgment) => judgment.done));
      all.push(...this.drain(gate, abort));
    }
    return merged(all);
  }
}

function hasOpenBlock(gate: GateState, channel: string): boolean {
  for (const stream of gate.streams.values()) if (stream.channel === channel && stream.open.size > 0) return true;
  return false;
}

function pendingJudgments(gate: GateState): Judgment[] {
  const pending: Judgment[] = [];
  for (const judgment of gate.judgments) if (judgment.verdict === undefined) pending.push(judgment);
  return pending;
}

const OBJECT_DROPPED_KEY = 'rxagent.structuredObjectDropped';

/** Records that a structured object's verdict drops it (the stream withholds it; the run's result must too). */
function noteDroppedObject(state: ProcessorState, verdict: Verdict): Verdict {
  if (verdict.action === 'drop') state[OBJECT_DROPPED_KEY] = true;
  return verdict;
}

/**
 * In `processOutputResult`: removes the run's structured object (`result.object`) when this
 * guard's gate dropped an `object` chunk of the run, so the result never carries what the stream
 * withheld.
 *
 * @example
 * ```ts
 * processOutputResult({ result, state }) { withholdDroppedObject(result, state); }
 * ```
 */
export function withholdDroppedObject(result: { object?: unknown }, state: ProcessorState): void {
  if (state[OBJECT_DROPPED_KEY] === true) delete result.object;
}
