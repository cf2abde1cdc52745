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
  RunStartEvent,
  TakeoverEvent,
} from '../inspector-events.js';
import { hookOutcome } from './hook-outcome.js';
import { cutText, hookArgsPayload, toPayload } from './payload.js';

/** The caps of one run's record. */
export interface RunCaps {
  maxEvents: number;
  maxChunks: number;
}

type EventInit<E extends InspectorEvent> = Omit<E, 'runId' | 'seq' | 't' | 'column' | 'attempt'> & { column?: number };

const TERMINAL: ReadonlySet<string> = new Set(['finish', 'tripwire', 'error', 'abort']);

/** Which stream a held chunk belongs to (text, reasoning, a tool's input), for matching its release. */
function channelOf(chunk: unknown): string | undefined {
  const type = (chunk as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return undefined;
  if (type.startsWith('text-')) return 'text';
  if (type.startsWith('reasoning-')) return 'reasoning';
  if (type.startsWith('tool-call')) return 'tool-input';
  return type;
}

function labelOf(chunk: ChunkType): string {
  const payload = (chunk as { payload?: Record<string, unknown> }).payload ?? {};
  const text = typeof payload.text === 'string' ? payload.text : typeof payload.toolName === 'string' ? payload.toolName : '';
  if (chunk.type === 'tripwire' || chunk.type === 'error') return chunk.type === 'tripwire' ? String(payload.reason ?? '') : 'error';
  return text.length > 24 ? `${cutText(text, 23)}…` : text;
}

/** A label a report carries (a processor's or a model's id): typed a string, written as one whatever a package hands over. */
function name(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

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
  readonly messages: Payload | undefined;
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
    this.agentId = options.agentId;
    this.title = options.title;
    this.#caps = options.caps;
    this.#emit = options.emit;
    this.#clock = options.clock ?? { kind: 'live' };
    this.startedAt = options.startedAt ?? Date.now();
    this.journal = options.journal;
    this.source = options.journal === undefined ? 'live' : 'journal';
    this.messages = options.messages === undefined ? undefined : toPayload(options.messages);
    this.#push<RunStartEvent>({ type: 'run-start', agentId: this.agentId, title: this.title, startedAt: this.startedAt, source: this.source });
  }

  get ended(): boolean {
    return this.status !== 'running';
  }

  #now(): number {
    if (this.#clock.kind === 'virtual') return this.#clock.now();
    return Math.round((performance.now() - this.#origin) * 10) / 10;
  }

  #nextColumn(): number {
    this.#column += 1;
    return this.#column;
  }

  /** Stores and sends one event, unless past the cap (the run's end always gets through). */
  #push<E extends InspectorEvent>(init: EventInit<E>, t = this.#now()): E | undefined {
    if (init.type !== 'run-end' && this.events.length >= this.#caps.maxEvents) {
      this.droppedEvents += 1;
      return undefined;
    }
    const column = init.column ?? this.#nextColumn();
    const event = { ...init, runId: this.runId, seq: this.#seq++, t, column, attempt: this.#attempt } as unknown as E;
    this.events.push(event);
    this.#emit(event);
    return event;
  }

  /** A processor hook call (`tracingContext.onHook` with `includePayloads`). */
  hook(report: ProcessorHookEvent): void {
    if (this.ended) return;
    const stream = report.hook === 'processOutputStream';
    const outcome = this.#outcome(report, stream);
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
      ...(report.input === undefined && !stream ? {} : { input: stream ? toPayload(report.input) : hookArgsPayload(report.input) }),
      ...('output' in report && (stream || report.output !== undefined) ? { output: toPayload(report.output) } : {}),
      ...(report.error === undefined ? {} : { error: toPayload(report.error) }),
    };
    const event = this.#push<HookEvent>(init, Math.round((report.startTime - this.#origin) * 10) / 10);
    if (event !== undefined && stream) this.#trackHolds(event, report);
    if (event !== undefined && report.hook === 'processToolResult') this.#trackToolResult(event, report.input);
  }

  #trackToolResult(event: HookEvent, input: unknown): void {
    const { toolCallId, result } = (input ?? {}) as { toolCallId?: unknown; result?: unknown };
    if (typeof toolCallId !== 'string') return;
    const calls = this.#toolResultCalls.get(toolCallId) ?? [];
    calls.push({ event, result: JSON.stringify(toPayload(result)) });
    this.#toolResultCalls.set(toolCallId, calls);
  }

  /**
   * `processToolResult` changes a result through the message list, not by returning it: each
   * call's effect is the difference between what it was given and what the next one (or the
   * `tool-result` chunk) got.
   */
  #reviseToolResults(chunk: ChunkType): void {
    const { toolCallId, result } = (chunk as { payload?: { toolCallId?: unknown; result?: unknown } }).payload ?? {};
    if (typeof toolCallId !== 'string') return;
    const calls = this.#toolResultCalls.get(toolCallId);
    if (calls === undefined) return;
    this.#toolResultCalls.delete(toolCallId);
    const final = toPayload(result);
    calls.forEach(({ event }, index) => {
      const next = calls[index + 1];
      const passedOn = next === undefined ? JSON.stringify(final) : next.result;
      if (event.outcome !== 'pass' || passedOn === (calls[index] as { result: string }).result) return;
      event.outcome = 'rewrite';
      event.output = next === undefined ? final : (JSON.parse(next.result) as Payload);
      this.#push<RevisedEvent>({ type: 'revised', outcome: 'rewrite', seqs: [event.seq], output: event.output, column: event.column });
    });
  }

  #outcome(report: ProcessorHookEvent, stream: boolean): MarbleOutcome {
    // a drop is not final while its step streams: drawn held until released or the step ends
    if (report.outcome === 'drop') return stream ? 'hold' : 'drop';
    if (report.outcome !== 'pass') return report.outcome;
    if (!('output' in report)) return 'pass';
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
    if (this.ended) return;
    this.#lastPhase = undefined;
    this.#push<JudgeEvent>(
      {
        type: 'judge',
        processorId: name(report.processorId),
        provider: name(report.provider),
        modelId: name(report.modelId),
        outcome: report.outcome,
        duration: Math.round((report.endTime - report.startTime) * 100) / 100,
        ...(report.input === undefined ? {} : { input: toPayload(report.input) }),
        ...(report.output === undefined ? {} : { output: toPayload(report.output) }),
      },
      Math.round((report.startTime - this.#origin) * 10) / 10,
    );
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

  /** A chunk the run emitted. */
  chunk(chunk: ChunkType): void {
    if (this.ended) return;
    const group = this.#group();
    if (this.chunks.length < this.#caps.maxChunks) {
      this.chunks.push(chunk);
      this.groups.push(group);
    } else {
      this.droppedChunks += 1;
    }
    if (chunk.type === 'tool-result') this.#reviseToolResults(chunk);
    if (chunk.type === 'step-start') this.#step = (chunk.payload as { stepNumber?: number }).stepNumber;
    const known = this.#columnOf.get(chunk);
    this.#lastPhase = undefined;
    this.#push<ChunkEvent>({
      type: 'chunk',
      chunkType: chunk.type,
      index: this.#chunkIndex++,
      label: labelOf(chunk),
      chunk: toPayload(chunk),
      ...(this.#step === undefined ? {} : { step: this.#step }),
      ...(known === undefined ? {} : { column: known }),
    });
    if (chunk.type === 'step-finish') {
      this.#settleHolds();
      this.#step = undefined;
      const reason = (chunk.payload as { stepResult?: { reason?: unknown } }).stepResult?.reason;
      if (reason === 'retry') this.#attempt += 1;
    }
    if (TERMINAL.has(chunk.type)) {
      this.completed = true;
      this.end(chunk.type as 'finish' | 'tripwire' | 'error' | 'abort');
    }
  }

  /** A run replayed from a journal: the chunks from here on were written by the owner of `epoch`. */
  takeover(epoch: number, previousEpoch: number): void {
    if (this.ended) return;
    this.#lastPhase = undefined;
    this.#push<TakeoverEvent>({ type: 'takeover', epoch, previousEpoch });
  }

  /** The run ended (its terminal chunk, an error notification, or an unsubscription). */
  end(status: Exclude<InspectorRunStatus, 'running'>): void {
    if (this.ended) return;
    this.#settleHolds();
    this.status = status;
    // a journaled run ended when its record last changed, not when it was opened
    this.endedAt = this.journal?.updatedAt ?? Date.now();
    this.#push<RunEndEvent>({ type: 'run-end', status, droppedEvents: this.droppedEvents, droppedChunks: this.droppedChunks });
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
      truncated: this.droppedEvents > 0 || this.droppedChunks > 0,
      source: this.source,
      ...(this.journal === undefined ? {} : { journal: { ...this.journal } }),
    };
  }

  record(): InspectorRunRecord {
    return { ...this.summary(), ...(this.messages === undefined ? {} : { messages: this.messages }), events: [...this.events] };
  }
}
