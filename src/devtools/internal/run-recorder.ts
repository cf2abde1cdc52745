/**
 * One run's record: turns the run's tracing reports (`onHook` with payloads, `onJudge`) and its
 * chunks into the inspector's events — timeline columns, attempts, holds — within the caps.
 */
import type { ChunkType, JudgeCallEvent, ProcessorHookEvent } from '../../contract/index.js';
import type {
  ChunkEvent,
  HookEvent,
  InspectorEvent,
  InspectorJournalFacts,
  InspectorRunRecord,
  InspectorRunStatus,
  InspectorRunSummary,
  JudgeEvent,
  MarbleOutcome,
  Payload,
  RevisedEvent,
  RunEndEvent,
  RunEvictedEvent,
  RunStartEvent,
  TakeoverEvent,
} from '../inspector-events.js';
import { hookOutcome, samePayload } from './hook-outcome.js';
import { cutText, DEFAULT_PAYLOAD_LIMITS, measuredHookArgs, measuredPayload, stringBytes, toPayload, type MeasuredPayload } from './payload.js';

/** The caps of one run's record. */
export interface RunCaps {
  maxEvents: number;
  maxChunks: number;
  /**
   * Bytes of what the record keeps: its events' copies and labels, and the chunks kept for the
   * export — each string as {@link stringBytes} (the larger of its UTF-8 JSON and its size in
   * memory), other values and fields estimated.
   */
  maxBytes: number;
}

/** Bytes an event is estimated at besides its strings and payloads: its field names and numbers, as JSON (a chunk event's are 115–140). */
const EVENT_BYTES = 160;

/** What an unreadable field is recorded as. */
const UNREADABLE = '[unreadable]';

/** The outcomes a hook report can name (anything else a package hands over is recorded as text). */
const HOOK_OUTCOMES: ReadonlySet<unknown> = new Set(['pass', 'rewrite', 'drop', 'hold', 'abort', 'retry', 'error']);

type EventInit<E extends InspectorEvent> = Omit<E, 'runId' | 'seq' | 't' | 'column' | 'attempt'> & { column?: number };

const TERMINAL: ReadonlySet<string> = new Set(['finish', 'tripwire', 'error', 'abort']);

/** Chunks whose payload the record follows whether or not it keeps them (steps, attempts, tool results). */
const FOLLOWED: ReadonlySet<string> = new Set(['tool-result', 'step-start', 'step-finish']);

/** `value[key]`, or `undefined` when `value` is not an object or the read throws (a getter, a Proxy). */
function field(value: unknown, key: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** Which stream a held chunk belongs to (text, reasoning, a tool's input), for matching its release. */
function channelOf(chunk: unknown): string | undefined {
  const type = field(chunk, 'type');
  if (typeof type !== 'string') return undefined;
  if (type.startsWith('text-')) return 'text';
  if (type.startsWith('reasoning-')) return 'reasoning';
  if (type.startsWith('tool-call')) return 'tool-input';
  return type;
}

/** A few characters for the marble; `payload` is the chunk's, read once. */
function labelOf(type: string, payload: unknown): string {
  if (type === 'error') return 'error';
  const label = type === 'tripwire' ? field(payload, 'reason') : (field(payload, 'text') ?? field(payload, 'toolName'));
  const text = typeof label === 'string' ? label : type === 'tripwire' && label !== undefined ? name(label) : '';
  return text.length > 24 ? `${cutText(text, 23)}…` : text;
}

/** A label a report or a chunk carries (a processor's or a model's id, a chunk's type): typed a string, written as one whatever a package hands over. */
function name(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return String(value);
  } catch {
    return UNREADABLE; // an object whose toString throws, or a Proxy
  }
}

/** The bytes of a few labels, for the byte budget (see {@link stringBytes}). */
const lengths = (...texts: string[]): number => texts.reduce((total, text) => total + stringBytes(text), 0);

/** Bytes of the payloads of one event. */
const payloadBytes = (...payloads: Array<MeasuredPayload | undefined>): number => payloads.reduce((total, measured) => total + (measured?.bytes ?? 0), 0);

/**
 * Where a recorder's time comes from: `live` — `performance.now()` since the run started, and
 * chunks of one synchronous burst share a marble frame; a virtual clock (a run replayed from a
 * journal) — its `now()` is the time, and each chunk is a frame at that time.
 */
export type RecorderClock = { kind: 'live' } | { kind: 'virtual'; now: () => number };

/** Records one run. Every method is safe to call after the run ended (it then does nothing). */
export class RunRecorder {
  readonly runId: string;
  readonly agentId: string;
  readonly title: string;
  readonly startedAt: number;
  readonly source: 'live' | 'journal';
  readonly journal: InspectorJournalFacts | undefined;
  /** The conversation the run was asked (as the page sent it), shown in the page's chat. */
  messages: Payload | undefined;
  readonly #clock: RecorderClock;
  readonly #origin = performance.now();
  readonly #caps: RunCaps;
  readonly #emit: (event: InspectorEvent) => void;
  readonly events: InspectorEvent[] = [];
  /** The run's chunks as emitted (kept for the marble export), and the burst each came in. */
  readonly chunks: ChunkType[] = [];
  readonly groups: number[] = [];
  status: InspectorRunStatus = 'running';
  /** The run's Observable completed, or emitted its terminal chunk (after which it completes): a diagram ends with `|`. */
  completed = false;
  endedAt: number | undefined;
  droppedEvents = 0;
  droppedChunks = 0;
  /** The record reached `maxBytesPerRun`: from then on, events and chunks are counted, not kept. */
  overBudget = false;
  /** The inspector stopped keeping the run (see {@link RunRecorder.evict}): nothing more is recorded or sent. */
  evicted = false;
  /** Bytes the record keeps (see {@link RunCaps.maxBytes}). */
  #bytes = 0;
  /** The run id's bytes: every event carries it. */
  readonly #runIdBytes: number;
  #seq = 0;
  #column = -1;
  #attempt = 1;
  #step: number | undefined;
  #chunkIndex = 0;
  /** The column of each chunk object seen going through the processors. */
  readonly #columnOf = new WeakMap<object, number>();
  /** The last hook reported outside the chunk stream, to put the same hook of several processors in one column. */
  #lastPhase: { hook: string; column: number } | undefined;
  /** Per processor: drops not released yet in this step (seq, channel). */
  readonly #pendingDrops = new Map<string, Array<{ event: HookEvent; channel: string | undefined }>>();
  /** Per tool call: its `processToolResult` events and the result each was given, until its chunk comes. */
  readonly #toolResultCalls = new Map<string, Array<{ event: HookEvent; result: string }>>();
  #burst = 0;
  #burstOpen = false;

  constructor(options: {
    runId: string;
    agentId: string;
    title: string;
    caps: RunCaps;
    emit: (event: InspectorEvent) => void;
    clock?: RecorderClock;
    startedAt?: number;
    journal?: InspectorJournalFacts;
    messages?: unknown;
  }) {
    this.runId = options.runId;
    this.#runIdBytes = stringBytes(options.runId);
    this.agentId = options.agentId;
    this.title = options.title;
    this.#caps = options.caps;
    this.#emit = options.emit;
    this.#clock = options.clock ?? { kind: 'live' };
    this.startedAt = options.startedAt ?? Date.now();
    this.journal = options.journal;
    this.source = options.journal === undefined ? 'live' : 'journal';
    const messages = options.messages === undefined ? undefined : measuredPayload(options.messages);
    // the conversation is kept with the record: it counts against the budget like an event's payload
    this.#bytes = messages?.bytes ?? 0;
    this.messages = messages?.payload;
    this.#push<RunStartEvent>({ type: 'run-start', agentId: this.agentId, title: this.title, startedAt: this.startedAt, source: this.source }, undefined, lengths(this.agentId, this.title));
  }

  get ended(): boolean {
    return this.status !== 'running';
  }

  /** Nothing more is recorded: the run ended, or the inspector evicted it. */
  get #stopped(): boolean {
    return this.evicted || this.status !== 'running';
  }

  /** Whether one more event may be kept (checked before anything is copied for it). */
  #room(): boolean {
    if (this.overBudget || this.events.length >= this.#caps.maxEvents) {
      this.droppedEvents += 1;
      return false;
    }
    return true;
  }

  /** Takes `bytes` of the budget, or marks the run over it (and takes nothing). */
  #take(bytes: number): boolean {
    if (this.overBudget || this.#bytes + bytes > this.#caps.maxBytes) {
      this.overBudget = true;
      return false;
    }
    this.#bytes += bytes;
    return true;
  }

  #now(): number {
    if (this.#clock.kind === 'virtual') return this.#clock.now();
    return Math.round((performance.now() - this.#origin) * 10) / 10;
  }

  #nextColumn(): number {
    this.#column += 1;
    return this.#column;
  }

  /**
   * Stores and sends one event, unless past the caps: `maxEvents`, or the byte budget (`bytes`:
   * its payloads and labels). The run's end always gets through.
   */
  #push<E extends InspectorEvent>(init: EventInit<E>, t = this.#now(), bytes = 0): E | undefined {
    if (init.type !== 'run-end') {
      if (!this.#room()) return undefined;
      if (!this.#take(EVENT_BYTES + this.#runIdBytes + bytes)) {
        this.droppedEvents += 1;
        return undefined;
      }
    }
    const column = init.column ?? this.#nextColumn();
    const event = { ...init, runId: this.runId, seq: this.#seq++, t, column, attempt: this.#attempt } as unknown as E;
    this.events.push(event);
    this.#emit(event);
    return event;
  }

  /** A processor hook call (`tracingContext.onHook` with `includePayloads`). */
  hook(report: ProcessorHookEvent): void {
    // the caps first: nothing of a report past them is read, compared or copied
    if (this.#stopped || !this.#room()) return;
    const stream = report.hook === 'processOutputStream';
    const input = report.input === undefined && !stream ? undefined : stream ? measuredPayload(report.input) : measuredHookArgs(report.input);
    const output = 'output' in report && (stream || report.output !== undefined) ? measuredPayload(report.output) : undefined;
    const error = report.error === undefined ? undefined : measuredPayload(report.error);
    const outcome = this.#outcome(report, stream, input?.payload, output?.payload);
    let column: number;
    if (stream) {
      const input = report.input;
      const known = typeof input === 'object' && input !== null ? this.#columnOf.get(input) : undefined;
      column = known ?? this.#nextColumn();
      if (typeof report.output === 'object' && report.output !== null) this.#columnOf.set(report.output, column);
      this.#lastPhase = undefined;
    } else {
      const phase = this.#lastPhase;
      column = phase !== undefined && phase.hook === report.hook ? phase.column : this.#nextColumn();
      this.#lastPhase = { hook: report.hook, column };
    }
    const init: EventInit<HookEvent> = {
      type: 'hook',
      processorId: name(report.processorId),
      hook: name(report.hook),
      outcome,
      duration: Math.round((report.endTime - report.startTime) * 100) / 100,
      column,
      ...(input === undefined ? {} : { input: input.payload }),
      ...(output === undefined ? {} : { output: output.payload }),
      ...(error === undefined ? {} : { error: error.payload }),
    };
    const bytes = lengths(init.processorId, init.hook) + payloadBytes(input, output, error);
    const event = this.#push<HookEvent>(init, Math.round((report.startTime - this.#origin) * 10) / 10, bytes);
    if (event !== undefined && stream) this.#trackHolds(event, report);
    if (event !== undefined && report.hook === 'processToolResult') this.#trackToolResult(event, report.input);
  }

  #trackToolResult(event: HookEvent, input: unknown): void {
    const { toolCallId, result } = (input ?? {}) as { toolCallId?: unknown; result?: unknown };
    if (typeof toolCallId !== 'string') return;
    const calls = this.#toolResultCalls.get(toolCallId) ?? [];
    const copy = JSON.stringify(toPayload(result));
    // kept until the tool's result comes (and as the event's output, if it changed it)
    if (!this.#take(stringBytes(copy))) return;
    calls.push({ event, result: copy });
    this.#toolResultCalls.set(toolCallId, calls);
  }

  /**
   * `processToolResult` changes a result through the message list, not by returning it: each
   * call's effect is the difference between what it was given and what the next one (or the
   * `tool-result` chunk) got.
   */
  #reviseToolResults(payload: unknown): void {
    const toolCallId = field(payload, 'toolCallId');
    if (typeof toolCallId !== 'string') return;
    const calls = this.#toolResultCalls.get(toolCallId);
    if (calls === undefined) return;
    this.#toolResultCalls.delete(toolCallId);
    const final = measuredPayload(field(payload, 'result'));
    calls.forEach(({ event }, index) => {
      const next = calls[index + 1];
      const passedOn = next === undefined ? JSON.stringify(final.payload) : next.result;
      if (event.outcome !== 'pass' || passedOn === (calls[index] as { result: string }).result) return;
      event.outcome = 'rewrite';
      event.output = next === undefined ? final.payload : (JSON.parse(next.result) as Payload);
      // the output is kept twice (the hook event's, the revision's): counted once more for the revision
      this.#push<RevisedEvent>({ type: 'revised', outcome: 'rewrite', seqs: [event.seq], output: event.output, column: event.column }, undefined, next === undefined ? final.bytes : stringBytes(next.result));
    });
  }

  /** What a hook did; a stream hook's chunks are compared as the copies made for its event (`input`, `output`). */
  #outcome(report: ProcessorHookEvent, stream: boolean, input: Payload | undefined, output: Payload | undefined): MarbleOutcome {
    // a drop is not final while its step streams: drawn held until released or the step ends
    if (report.outcome === 'drop') return stream ? 'hold' : 'drop';
    if (report.outcome !== 'pass') return HOOK_OUTCOMES.has(report.outcome) ? report.outcome : (name(report.outcome) as MarbleOutcome);
    if (!('output' in report)) return 'pass';
    if (stream) return report.output === report.input || samePayload(input ?? null, output ?? null) ? 'pass' : 'rewrite';
    try {
      return hookOutcome(report.hook, report.input, report.output);
    } catch {
      return 'rewrite'; // what it returned cannot be read (a revoked Proxy): not provably what it got
    }
  }

  /**
   * A chunk a processor did not pass on is held while its step streams: released when the
   * processor later emits a chunk of that stream it was not given, dropped if the step ends first
   * (see {@link RunRecorder.#settleHolds}).
   */
  #trackHolds(event: HookEvent, report: ProcessorHookEvent): void {
    const pending = this.#pendingDrops.get(event.processorId) ?? [];
    if (event.outcome === 'hold') {
      pending.push({ event, channel: channelOf(report.input) });
      this.#pendingDrops.set(event.processorId, pending);
      return;
    }
    if (event.outcome !== 'rewrite' || pending.length === 0) return;
    const channel = channelOf(report.output);
    const released = pending.filter((drop) => drop.channel === channel);
    if (released.length === 0) return;
    this.#pendingDrops.set(
      event.processorId,
      pending.filter((drop) => drop.channel !== channel),
    );
    for (const drop of released) drop.event.releasedBy = event.seq;
    this.#push<RevisedEvent>({ type: 'revised', outcome: 'hold', seqs: released.map((drop) => drop.event.seq), releasedBy: event.seq, column: event.column });
  }

  /** The step ended (or the run did): what was held and never released was dropped. */
  #settleHolds(): void {
    const unreleased = [...this.#pendingDrops.values()].flat().map((drop) => drop.event);
    this.#pendingDrops.clear();
    if (unreleased.length === 0) return;
    for (const event of unreleased) event.outcome = 'drop';
    const last = unreleased[unreleased.length - 1] as HookEvent;
    this.#push<RevisedEvent>({ type: 'revised', outcome: 'drop', seqs: unreleased.map((event) => event.seq), column: last.column });
  }

  /** A model call of a model-backed processor (`tracingContext.onJudge`). */
  judge(report: JudgeCallEvent): void {
    if (this.#stopped) return;
    this.#lastPhase = undefined;
    if (!this.#room()) return;
    const input = report.input === undefined ? undefined : measuredPayload(report.input);
    const output = report.output === undefined ? undefined : measuredPayload(report.output);
    const init: EventInit<JudgeEvent> = {
      type: 'judge',
      processorId: name(report.processorId),
      provider: name(report.provider),
      modelId: name(report.modelId),
      outcome: report.outcome === 'ok' ? 'ok' : 'error',
      duration: Math.round((report.endTime - report.startTime) * 100) / 100,
      ...(input === undefined ? {} : { input: input.payload }),
      ...(output === undefined ? {} : { output: output.payload }),
    };
    const bytes = lengths(init.processorId, init.provider, init.modelId) + payloadBytes(input, output);
    this.#push<JudgeEvent>(init, Math.round((report.startTime - this.#origin) * 10) / 10, bytes);
  }

  /** Chunks emitted in one synchronous burst share a group (a frame of the marble diagram); on a virtual clock, its time is the frame. */
  #group(): number {
    if (this.#clock.kind === 'virtual') return this.#clock.now();
    if (!this.#burstOpen) {
      this.#burstOpen = true;
      this.#burst += 1;
      queueMicrotask(() => {
        this.#burstOpen = false;
      });
    }
    return this.#burst;
  }

  /**
   * A chunk the run emitted. Its type and payload are read once, and a part that cannot be read
   * leaves the rest of the record as it would be (a terminal chunk whose payload throws still ends
   * the run). Past the caps nothing of it is copied: it is counted, and its step, attempt and
   * terminal are still followed.
   */
  chunk(chunk: ChunkType): void {
    if (this.#stopped) return;
    const group = this.#group();
    const index = this.#chunkIndex++;
    const type = name(field(chunk, 'type'));
    // read only for what needs it: past the caps, a delta's payload is not touched
    const payload = FOLLOWED.has(type) ? field(chunk, 'payload') : undefined;
    this.#lastPhase = undefined;
    if (type === 'tool-result') this.#reviseToolResults(payload);
    if (type === 'step-start') {
      const stepNumber = field(payload, 'stepNumber');
      this.#step = typeof stepNumber === 'number' ? stepNumber : undefined;
    }
    const keepChunk = !this.overBudget && this.chunks.length < this.#caps.maxChunks;
    // the caps first: a chunk neither kept for the export nor as an event is not copied
    const copy = this.#room() ? measuredPayload(chunk, DEFAULT_PAYLOAD_LIMITS, { read: keepChunk }) : undefined;
    // a kept chunk holds what the run gave (its strings whole); measured by the copy as it read it
    if (keepChunk && this.#take(copy?.readBytes ?? measuredPayload(chunk, DEFAULT_PAYLOAD_LIMITS, { read: true }).readBytes)) {
      this.chunks.push(chunk);
      this.groups.push(group);
    } else {
      this.droppedChunks += 1;
    }
    if (copy !== undefined) {
      const known = this.#columnOf.get(chunk);
      const label = labelOf(type, FOLLOWED.has(type) ? payload : field(chunk, 'payload'));
      const init: EventInit<ChunkEvent> = {
        type: 'chunk',
        chunkType: type,
        index,
        label,
        chunk: copy.payload,
        ...(this.#step === undefined ? {} : { step: this.#step }),
        ...(known === undefined ? {} : { column: known }),
      };
      this.#push<ChunkEvent>(init, undefined, lengths(type, label) + copy.bytes);
    }
    if (type === 'step-finish') {
      this.#settleHolds();
      this.#step = undefined;
      if (field(field(payload, 'stepResult'), 'reason') === 'retry') this.#attempt += 1;
    }
    if (TERMINAL.has(type)) {
      this.completed = true;
      this.end(type as 'finish' | 'tripwire' | 'error' | 'abort');
    }
  }

  /** A run replayed from a journal: the chunks from here on were written by the owner of `epoch`. */
  takeover(epoch: number, previousEpoch: number): void {
    if (this.#stopped) return;
    this.#lastPhase = undefined;
    this.#push<TakeoverEvent>({ type: 'takeover', epoch, previousEpoch });
  }

  /** The run ended (its terminal chunk, an error notification, or an unsubscription). */
  end(status: Exclude<InspectorRunStatus, 'running'>): void {
    if (this.#stopped) return;
    this.#settleHolds();
    this.status = status;
    // a journaled run ended when its record last changed, not when it was opened
    this.endedAt = this.journal?.updatedAt ?? Date.now();
    this.#push<RunEndEvent>({ type: 'run-end', status, droppedEvents: this.droppedEvents, droppedChunks: this.droppedChunks });
  }

  /**
   * The inspector stopped keeping this run (`max-runs`: it was the oldest past `maxRuns`;
   * `replaced`: a run with its id was opened from a journal): says so on the feed, lets go of
   * what it recorded, and records nothing more — the run itself goes on untouched.
   */
  evict(reason: RunEvictedEvent['reason']): void {
    if (this.evicted) return;
    this.evicted = true;
    const event: RunEvictedEvent = {
      type: 'run-evicted',
      runId: this.runId,
      seq: this.#seq++,
      t: this.#now(),
      column: this.#nextColumn(),
      attempt: this.#attempt,
      reason,
      status: this.status,
      droppedEvents: this.droppedEvents,
      droppedChunks: this.droppedChunks,
    };
    // a run that goes on keeps this recorder alive (its tracing context): what it holds is let go now
    this.events.length = 0;
    this.messages = undefined;
    this.chunks.length = 0;
    this.groups.length = 0;
    this.#pendingDrops.clear();
    this.#toolResultCalls.clear();
    this.#emit(event);
  }

  summary(): InspectorRunSummary {
    return {
      runId: this.runId,
      agentId: this.agentId,
      title: this.title,
      startedAt: this.startedAt,
      status: this.status,
      ...(this.endedAt === undefined ? {} : { durationMs: this.endedAt - this.startedAt }),
      chunkCount: this.#chunkIndex,
      eventCount: this.events.length,
      truncated: this.overBudget || this.droppedEvents > 0 || this.droppedChunks > 0,
      source: this.source,
      ...(this.journal === undefined ? {} : { journal: { ...this.journal } }),
    };
  }

  record(): InspectorRunRecord {
    return { ...this.summary(), ...(this.messages === undefined ? {} : { messages: this.messages }), events: [...this.events] };
  }
}
