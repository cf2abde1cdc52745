/**
 * What the inspector records of a run, as plain JSON: the events the page draws as marbles (sent
 * live over `/api/events`, and whole from `/api/runs/:id`). Payloads are JSON-safe copies made
 * when the event happened (see {@link Payload}).
 */

/**
 * A JSON-safe copy of a value (a chunk, a hook's arguments or result): functions are left out,
 * errors become `{ $type, name, message, … }`, long strings, arrays and deep objects are cut
 * (with a `…` marker saying how much), cycles become `'[circular]'`.
 *
 * @example
 * ```ts
 * import type { Payload } from 'rxagent/devtools';
 * const payload: Payload = { type: 'text-delta', payload: { id: 't0', text: 'Hello' } };
 * ```
 */
export type Payload = null | boolean | number | string | Payload[] | { [key: string]: Payload };

/**
 * How a run ended: its terminal chunk, `cancelled` when it was unsubscribed before one, or
 * `running`.
 *
 * @example
 * ```ts
 * import type { InspectorRunStatus } from 'rxagent/devtools';
 * const done = (status: InspectorRunStatus) => status !== 'running';
 * ```
 */
export type InspectorRunStatus = 'running' | 'finish' | 'tripwire' | 'error' | 'abort' | 'cancelled';

/**
 * What a processor hook did with what it got, as drawn on its lane:
 * - `pass` — returned what it got, or an equal copy (the same chunk, the message list holding the
 *   messages it was shown, `{ prompt }` with the prompt it got…), or nothing;
 * - `rewrite` — returned something that differs from what it got (a changed chunk, added or
 *   changed messages…), or, for `processToolResult`, changed the result it passed on (through the
 *   message list);
 * - `hold` — a `processOutputStream` hook returned `null`/`undefined` and its step is still
 *   streaming (nothing is known yet), or the same processor later emitted, in that step, a chunk of
 *   the same stream it had not been given (a batch, a redacted carry-over: `releasedBy` names that
 *   call). A heuristic: a processor that drops some deltas and rewrites a later one shows holds too;
 * - `drop` — a held chunk that was never released by the end of its step (or run);
 * - `abort` / `retry` — it called `abort()` (with `retry: true`: the step runs again);
 * - `error` — it threw (the run fails closed).
 *
 * @example
 * ```ts
 * import type { MarbleOutcome } from 'rxagent/devtools';
 * const changed = (outcome: MarbleOutcome) => outcome === 'rewrite' || outcome === 'drop' || outcome === 'hold';
 * ```
 */
export type MarbleOutcome = 'pass' | 'rewrite' | 'drop' | 'hold' | 'abort' | 'retry' | 'error';

/**
 * Fields every inspector event has.
 *
 * @example
 * ```ts
 * import type { InspectorEventBase } from 'rxagent/devtools';
 * const late = (event: InspectorEventBase) => event.t > 1000;
 * ```
 */
export interface InspectorEventBase {
  /** The inspector's id of the run (also the `runId` given to the run when the caller passed it on). */
  runId: string;
  /** 0, 1, 2… per run, in the order the events happened. */
  seq: number;
  /** Milliseconds since the run started (`performance.now()` based). */
  t: number;
  /** The timeline column: the chunks of one pass through the processors share one. */
  column: number;
  /** 1 for the first attempt of the run's steps; +1 after each retried attempt. */
  attempt: number;
}

/**
 * The run started.
 *
 * @example
 * ```ts
 * import type { RunStartEvent } from 'rxagent/devtools';
 * const label = (event: RunStartEvent) => `${event.agentId}: ${event.title}`;
 * ```
 */
export interface RunStartEvent extends InspectorEventBase {
  /** The event's kind. */
  type: 'run-start';
  /** The id of the agent that ran. */
  agentId: string;
  /** What the run was asked (the last user message's text, cut to 200 characters). */
  title: string;
  /** Wall-clock start (`Date.now()`). */
  startedAt: number;
  /** Recorded live, or opened from a journal (see {@link InspectorRunSummary.source}). */
  source: 'live' | 'journal';
}

/**
 * One processor hook call.
 *
 * @example
 * ```ts
 * import type { HookEvent } from 'rxagent/devtools';
 * const lane = (event: HookEvent) => `${event.processorId} · ${event.hook}`;
 * ```
 */
export interface HookEvent extends InspectorEventBase {
  /** The event's kind. */
  type: 'hook';
  /** The processor whose hook was called. */
  processorId: string;
  /** The hook's name (`processOutputStream`, …). */
  hook: string;
  /** What the hook did with what it got (see {@link MarbleOutcome}). */
  outcome: MarbleOutcome;
  /** How long the hook took, ms (an async hook: until its result settled). */
  duration: number;
  /** What the hook got: the chunk for `processOutputStream`, its arguments otherwise. */
  input?: Payload;
  /** What it returned. */
  output?: Payload;
  /** The `TripWire` or error it ended with. */
  error?: Payload;
  /** For a `hold`: the `seq` of the hook event that released it. */
  releasedBy?: number;
}

/**
 * One model call of a model-backed processor (a judge).
 *
 * @example
 * ```ts
 * import type { JudgeEvent } from 'rxagent/devtools';
 * const model = (event: JudgeEvent) => `${event.provider}/${event.modelId}`;
 * ```
 */
export interface JudgeEvent extends InspectorEventBase {
  /** The event's kind. */
  type: 'judge';
  /** The processor that called its judge. */
  processorId: string;
  /** The judge model's provider. */
  provider: string;
  /** The judge model's id. */
  modelId: string;
  /** Whether the call answered (`ok`) or failed. */
  outcome: 'ok' | 'error';
  /** How long the call took, ms. */
  duration: number;
  /** What the judge was sent (with `includePayloads`). */
  input?: Payload;
  /** What it answered (with `includePayloads`). */
  output?: Payload;
}

/**
 * A chunk the run emitted (what its subscriber got).
 *
 * @example
 * ```ts
 * import type { ChunkEvent } from 'rxagent/devtools';
 * const isText = (event: ChunkEvent) => event.chunkType === 'text-delta';
 * ```
 */
export interface ChunkEvent extends InspectorEventBase {
  /** The event's kind. */
  type: 'chunk';
  /** The chunk's `type`. */
  chunkType: string;
  /** Position among the run's chunks (0 = `start`). */
  index: number;
  /** A few characters for the marble (a delta's text, a tool's name…). */
  label: string;
  /** A JSON-safe copy of the chunk. */
  chunk: Payload;
  /** Step number of the chunk (from the last `step-start`), when inside a step. */
  step?: number;
}

/**
 * Earlier hook events, seen in a new light: holds released (`outcome: 'hold'`, by the hook event
 * `releasedBy`), holds never released by the end of their step (`outcome: 'drop'`), or
 * `processToolResult` calls that changed the result through the message list
 * (`outcome: 'rewrite'`, `output`: the result they passed on).
 *
 * @example
 * ```ts
 * import type { RevisedEvent } from 'rxagent/devtools';
 * const count = (event: RevisedEvent) => event.seqs.length;
 * ```
 */
export interface RevisedEvent extends InspectorEventBase {
  /** The event's kind. */
  type: 'revised';
  /** The `seq` of each hook event revised. */
  seqs: number[];
  /** Their outcome now (`hold`, `drop` or `rewrite`). */
  outcome: MarbleOutcome;
  /** For holds: the `seq` of the hook event that released them. */
  releasedBy?: number;
  /** For rewrites: the result the processor passed on. */
  output?: Payload;
}

/**
 * The run ended.
 *
 * @example
 * ```ts
 * import type { RunEndEvent } from 'rxagent/devtools';
 * const failed = (event: RunEndEvent) => event.status === 'error';
 * ```
 */
export interface RunEndEvent extends InspectorEventBase {
  /** The event's kind. */
  type: 'run-end';
  /** How the run ended. */
  status: Exclude<InspectorRunStatus, 'running'>;
  /** Events past the run's caps (`maxEventsPerRun`, `maxBytesPerRun`): counted, not kept, not sent. */
  droppedEvents: number;
  /** Chunks past the run's caps (`maxChunksPerRun`, `maxBytesPerRun`): not kept for the marble export. */
  droppedChunks: number;
}

/**
 * The inspector stopped keeping a run: past `maxRuns`, the oldest run was evicted (an ended one
 * first, a running one when none had ended: `status` says which), or a run opened from a journal
 * with the same id replaced it (`replaced`). Sent on the live feed only (the run's record is gone
 * with it); nothing more is recorded or sent for the run, though the run itself goes on.
 *
 * @example
 * ```ts
 * import type { RunEvictedEvent } from 'rxagent/devtools';
 * const note = (event: RunEvictedEvent) => `${event.runId} evicted (${event.reason}) while ${event.status}`;
 * ```
 */
export interface RunEvictedEvent extends InspectorEventBase {
  /** The event's kind. */
  type: 'run-evicted';
  /** `max-runs`: more runs than `maxRuns`; `replaced`: a journaled run with the same id was opened. */
  reason: 'max-runs' | 'replaced';
  /** How the run stood when it was evicted (`running`: it had not ended). */
  status: InspectorRunStatus;
  /** Events not kept up to then (past the run's caps). */
  droppedEvents: number;
  /** Chunks not kept up to then. */
  droppedChunks: number;
}

/**
 * A run opened from a `RunJournal`: from here on, its chunks were written by another owner (a
 * takeover: a claim bumped the run's epoch). Drawn as a marker on the *owners* lane.
 *
 * @example
 * ```ts
 * import type { TakeoverEvent } from 'rxagent/devtools';
 * const label = (event: TakeoverEvent) => `epoch ${event.previousEpoch} → ${event.epoch}`;
 * ```
 */
export interface TakeoverEvent extends InspectorEventBase {
  /** The event's kind. */
  type: 'takeover';
  /** The epoch of the owner that wrote the chunks from here on. */
  epoch: number;
  /** The epoch of the owner that wrote the chunks before. */
  previousEpoch: number;
}

/**
 * Any event of a run's record.
 *
 * @example
 * ```ts
 * import type { InspectorEvent } from 'rxagent/devtools';
 * const hooks = (events: InspectorEvent[]) => events.filter((event) => event.type === 'hook');
 * ```
 */
export type InspectorEvent = RunStartEvent | HookEvent | JudgeEvent | ChunkEvent | RevisedEvent | RunEndEvent | TakeoverEvent | RunEvictedEvent;

/**
 * A run as listed by the inspector.
 *
 * @example
 * ```ts
 * import type { InspectorRunSummary } from 'rxagent/devtools';
 * const line = (run: InspectorRunSummary) => `${run.title} — ${run.status} in ${run.durationMs ?? '…'} ms`;
 * ```
 */
export interface InspectorRunSummary {
  /** The inspector's id of the run. */
  runId: string;
  /** The id of the agent that ran. */
  agentId: string;
  /** What the run was asked (the last user message's text, cut to 200 characters). */
  title: string;
  /** Wall-clock start (`Date.now()`). */
  startedAt: number;
  /** How the run ended, or `running`. */
  status: InspectorRunStatus;
  /** Set when the run ended. */
  durationMs?: number;
  /** Chunks the run emitted so far. */
  chunkCount: number;
  /** Events recorded so far. */
  eventCount: number;
  /**
   * Some events or chunks were past the caps (`maxEventsPerRun`, `maxChunksPerRun`,
   * `maxBytesPerRun`): the record (and a marble export) is incomplete.
   */
  truncated: boolean;
  /**
   * `live`: recorded as it ran (hook calls, judge calls, chunks); `journal`: opened after the fact
   * from a `RunJournal`, which keeps the chunks only (no hook or judge events), replayed on virtual
   * time (one frame per journal entry: `t` counts entries, not milliseconds).
   */
  source: 'live' | 'journal';
  /** For a run opened from a journal: the journal's record of it when it was opened. */
  journal?: InspectorJournalFacts;
}

/**
 * What the journal said of a run the inspector opened from it.
 *
 * @example
 * ```ts
 * import type { InspectorJournalFacts } from 'rxagent/devtools';
 * const takenOver = (facts: InspectorJournalFacts) => facts.epoch > 1;
 * ```
 */
export interface InspectorJournalFacts {
  /** The journal's status of the run (`queued`, `running`, `completed`, `failed`, `cancelled`). */
  status: string;
  /** The run's epoch: how many times it was claimed (2 or more: taken over). */
  epoch: number;
  /** The owner of the last claim. */
  owner?: string;
  /** The seq of the run's last entry. */
  lastSeq: number;
  /** When the run was created (`Date.now()` scale). */
  createdAt: number;
  /** When the run's record last changed. */
  updatedAt: number;
}

/**
 * A run's whole record: its summary and its events, in order.
 *
 * @example
 * ```ts
 * import type { InspectorRunRecord } from 'rxagent/devtools';
 * const lanes = (record: InspectorRunRecord) => new Set(record.events.flatMap((event) => (event.type === 'hook' ? [event.processorId] : [])));
 * ```
 */
export interface InspectorRunRecord extends InspectorRunSummary {
  /** The conversation the run was asked, as its caller gave it to `trace()` (`TraceOptions.messages`): the page's chat shows it. */
  messages?: Payload;
  /** The run's events, in order. */
  events: InspectorEvent[];
}
