/**
 * The inspector's state: the runs it recorded (bounded), and the live feed of their events.
 * One `Inspector` per `inspect()` server (or per test); nothing is shared between instances.
 */
import { defer, finalize, lastValueFrom, Observable, tap } from 'rxjs';
import type { ChunkType, TracingContext } from '../contract/index.js';
import { MalformedJournalEntryError, type ListRunsOptions, type ListedRun, type RunJournal, type RunRecord } from '../storage/index.js';
import { InspectorError } from './errors/inspector-error.js';
import type { InspectorEvent, InspectorRunRecord, InspectorRunStatus, InspectorRunSummary, RunEvictedEvent } from './inspector-events.js';
import { cutText } from './internal/payload.js';
import { RunRecorder } from './internal/run-recorder.js';
import { toMarbleDiagram, type MarbleExport } from './marble-export.js';

/**
 * Options of {@link Inspector}: how much it keeps.
 *
 * @example
 * ```ts
 * import { Inspector, type InspectorOptions } from 'rxagent/devtools';
 * const options: InspectorOptions = { maxRuns: 20, maxChunksPerRun: 500, maxBytesPerRun: 4 * 1024 * 1024 };
 * const inspector = new Inspector(options);
 * ```
 */
export interface InspectorOptions {
  /**
   * Runs kept. Past it the oldest ended run is evicted — or, when every kept run is still running
   * (runs that never end, a client opening chat after chat), the oldest running one: the feed gets
   * a `run-evicted` event, nothing more of that run is recorded, and asking for it is an
   * `unknown-run` error that says it was evicted. Default 50.
   */
  maxRuns?: number;
  /**
   * Chunks kept per run (shown, and exported as a marble diagram). Later chunks are counted, not
   * kept, and the run is marked `truncated` (no diagram). Default 2,000.
   */
  maxChunksPerRun?: number;
  /**
   * Events kept per run (hook calls, judge calls, chunks…): a run with 3 output processors makes
   * about 4 per streamed chunk. Later ones are counted, not kept or sent. Default 20,000.
   */
  maxEventsPerRun?: number;
  /**
   * Bytes one run's record may keep, counted as it is recorded: every string and key its events'
   * payload copies hold at the larger of its UTF-8 JSON size (quotes and escapes included) and its
   * size in memory (2 bytes a UTF-16 unit in a string holding a character past U+00FF), 16 bytes
   * per other value, 160 bytes per event plus its labels (the run id, processor ids, the chunk's
   * type), and the strings of the chunks kept for the marble export as they were emitted (whole,
   * not cut), counted the same way. Past it, later events and chunks are counted, not kept or
   * sent, and the run is marked `truncated` (no diagram). Default 16 MiB (16,777,216).
   */
  maxBytesPerRun?: number;
}

/**
 * What a traced run is handed: the `tracingContext` to pass to the run (it records the run's
 * processor hooks and judge calls), and the `runId` the inspector gave the run.
 *
 * @example
 * ```ts
 * import type { TraceContext } from 'rxagent/devtools';
 * const start = ({ tracingContext, runId }: TraceContext) => agent.stream$('Hello', { tracingContext, runId });
 * ```
 */
export interface TraceContext {
  /** Pass it to the run: it records the run's hook calls and judge calls. */
  tracingContext: TracingContext;
  /** The run id the inspector gave the run (pass it on as the run's `runId`). */
  runId: string;
}

/**
 * Labels of a traced run.
 *
 * @example
 * ```ts
 * import type { TraceOptions } from 'rxagent/devtools';
 * const options: TraceOptions = { agentId: 'support', title: 'Where is order 123?' };
 * ```
 */
export interface TraceOptions {
  /** The agent's id, shown in the run list (default `'agent'`). */
  agentId?: string;
  /** What the run was asked (shown in the run list). */
  title?: string;
  /** The conversation the run was asked (e.g. the page's UI messages): kept with the record, shown in the page's chat. */
  messages?: unknown;
}

/**
 * What {@link Inspector.openJournalRun} reads: a `RunJournal` (`PostgresRunJournal`,
 * `InMemoryRunJournal`, or your own). `listRuns` (both built-in journals have it) lets the page
 * list recent runs; the inspector asks it with `unusable: 'report'`, so a row the journal cannot
 * use is listed in its place (`RunJournal.listRuns`).
 *
 * @example
 * ```ts
 * import type { InspectableJournal } from 'rxagent/devtools';
 * import { PostgresRunJournal } from 'rxagent/storage/postgres';
 * const journal: InspectableJournal = new PostgresRunJournal({ connectionString: process.env.DATABASE_URL! });
 * ```
 */
export type InspectableJournal = Pick<RunJournal, 'getRun' | 'read$'> & {
  /**
   * The runs changed most recently, newest first, with `{ unusable: true, runId, error }` in place
   * of a row it cannot use when asked `unusable: 'report'` (see `RunJournal.listRuns`).
   */
  listRuns?(options?: ListRunsOptions): Promise<ListedRun[]>;
};

/**
 * A run row the journal listed but cannot use (or no URL can name): an error row in
 * {@link Inspector.journalListing}, in place of the run.
 *
 * @example
 * ```ts
 * import type { InspectorJournalRunError } from 'rxagent/devtools';
 * const describe = (row: InspectorJournalRunError) => `${row.runId}: ${row.error.row}.${row.error.field} ${row.error.problem}`;
 * ```
 */
export interface InspectorJournalRunError {
  /** The run's id as the row holds it (`String()` of it when the row's id is not a string). */
  runId: string;
  /** Always `'unreadable'`: what tells an error row from a run. */
  status: 'unreadable';
  /** What is wrong: the journal's `MalformedJournalEntryError`, or the id the inspector refuses (`field: 'id'`). */
  error: InspectorRowError;
}

/**
 * Why a listed row is an error row (see {@link InspectorJournalRunError}).
 *
 * @example
 * ```ts
 * import type { InspectorRowError } from 'rxagent/devtools';
 * const where = (error: InspectorRowError) => `${error.row ?? 'runs'}.${error.field ?? '?'}: ${error.problem}`;
 * ```
 */
export interface InspectorRowError {
  /** The error's class name (`MalformedJournalEntryError`, `InspectorError`). */
  name: string;
  /** Its message, naming the row and the field. */
  message: string;
  /** The journal row the error is about (`'runs'`), when the journal named one. */
  row?: string;
  /** The column or field that cannot be used (`'status'`, `'id'`). */
  field?: string;
  /** What is wrong with it, in words. */
  problem: string;
}

/**
 * One entry of {@link Inspector.journalListing}: a run as the journal lists it, or an error row
 * (`status: 'unreadable'`).
 *
 * @example
 * ```ts
 * import type { InspectorJournalRun } from 'rxagent/devtools';
 * const ok = (run: InspectorJournalRun) => run.status !== 'unreadable';
 * ```
 */
export type InspectorJournalRun = RunRecord | InspectorJournalRunError;

/**
 * What {@link Inspector.journalListing} answers (and `GET /api/journal` serves): the journal's
 * runs, newest first, with an error row in place of each row the inspector cannot use.
 *
 * @example
 * ```ts
 * import type { InspectorJournalListing } from 'rxagent/devtools';
 * const unreadable = (listing: InspectorJournalListing) => listing.runs.filter((run) => run.status === 'unreadable');
 * ```
 */
export interface InspectorJournalListing {
  /** The runs, newest first, each row the inspector cannot use as an error row in its place. */
  runs: InspectorJournalRun[];
}

/** A UTF-16 surrogate without its pair: no journal stores an id holding one (`storageIdProblem`), and no URL can name it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why the inspector cannot keep a run of this id, or `undefined`. */
function runIdProblem(runId: unknown): string | undefined {
  if (typeof runId !== 'string' || runId === '') return `the run id must be a non-empty string (got ${typeof runId === 'string' ? 'an empty string' : typeof runId})`;
  if (LONE_SURROGATE.test(runId)) return 'the run id is not well-formed UTF-16 (it holds a lone surrogate): no journal stores one, and no URL can name it';
  return undefined;
}

/** A listed row the inspector refuses (its id), or a row the journal reported it cannot use, as an error row. */
function unreadableRun(runId: unknown, error: { name: string; message: string; row?: string; field?: string; problem: string }): InspectorJournalRunError {
  let id: string;
  try {
    id = typeof runId === 'string' ? runId : String(runId);
  } catch {
    id = '[unreadable]';
  }
  return { runId: id, status: 'unreadable', error };
}

/**
 * An entry of the journal's listing as the inspector lists it: a run; an error row for a row the
 * journal reported it cannot use (`{ unusable: true, runId, error }`), naming what its error names;
 * or an error row naming `id` when the run's id is one the inspector cannot keep.
 */
function listedRun(entry: ListedRun): InspectorJournalRun {
  const listed = typeof entry === 'object' && entry !== null ? (entry as { runId?: unknown; unusable?: unknown; error?: unknown }) : {};
  if (listed.unusable === true) return unusableRow(listed.runId, listed.error);
  const problem = runIdProblem(listed.runId);
  if (problem === undefined) return entry as RunRecord;
  return unreadableRun(listed.runId, { name: 'InspectorError', message: `Journal row runs.id cannot be opened: ${problem}.`, row: 'runs', field: 'id', problem });
}

/** A row the journal reported it cannot use, as an error row: its `MalformedJournalEntryError`'s row, field and problem (another error: its message). */
function unusableRow(runId: unknown, error: unknown): InspectorJournalRunError {
  if (MalformedJournalEntryError.isInstance(error)) {
    return unreadableRun(runId, {
      name: error.name,
      message: error.message,
      ...(error.row === undefined ? {} : { row: error.row }),
      ...(error.field === undefined ? {} : { field: error.field }),
      problem: error.problem,
    });
  }
  const problem = `the journal cannot use this row (${error instanceof Error ? cutText(String(error.message), 500) : 'no error given'})`;
  return unreadableRun(runId, { name: error instanceof Error ? error.name : 'Error', message: `Journal row runs of run ${JSON.stringify(String(runId))}: ${problem}`, row: 'runs', problem });
}

const isJournal = (value: unknown): value is InspectableJournal =>
  typeof value === 'object' && value !== null && typeof (value as { getRun?: unknown }).getRun === 'function' && typeof (value as { read$?: unknown }).read$ === 'function';

/** The chunk ending each journal status, for a run the journal says ended. */
const TERMINAL_STATUS = { finish: 'finish', tripwire: 'tripwire', error: 'error', abort: 'abort' } as const;

const DEFAULTS = { maxRuns: 50, maxChunksPerRun: 2_000, maxEventsPerRun: 20_000, maxBytesPerRun: 16 * 1024 * 1024 } as const;

/** Evicted run ids remembered (to say so when one is asked for); ids longer than a storage id's limit are not. */
const EVICTED_REMEMBERED = 1_000;
const REMEMBERED_ID_LENGTH = 256;

/** A run id as an error message quotes it (an id can be as long as its journal allows). */
const quoted = (runId: string): string => JSON.stringify(runId.length > 120 ? `${cutText(runId, 120)}…` : runId);

/** The labels of a traced run, read once and checked when `trace()` is called: a bad one never reaches the run. */
function traceLabels(options: TraceOptions | undefined): { agentId: string; title: string; messages: unknown } {
  if (options === undefined) return { agentId: 'agent', title: '', messages: undefined };
  if (typeof options !== 'object' || options === null) {
    throw new InspectorError('invalid-option', `Inspector.trace: options must be an object ({ agentId, title, messages }), got ${options === null ? 'null' : typeof options}.`);
  }
  const { agentId = 'agent', title = '', messages } = options;
  for (const [key, value] of [['agentId', agentId], ['title', title]] as const) {
    if (typeof value !== 'string') throw new InspectorError('invalid-option', `Inspector.trace: options.${key} must be a string (got ${typeof value}).`);
  }
  return { agentId, title: cutText(title, 200), messages };
}

function count(options: InspectorOptions, key: keyof InspectorOptions): number {
  const value = options[key] ?? DEFAULTS[key];
  if (!Number.isInteger(value) || value < 1) {
    throw new InspectorError('invalid-option', `Inspector: options.${key} must be a positive integer (got ${String(value)}).`);
  }
  return value;
}

/**
 * Records runs for the inspector page: wrap a run with {@link Inspector.trace} and the inspector
 * keeps its chunks, every processor hook call (what went in, what came out, how long it took)
 * and every judge call, as events for a marble timeline, within its caps.
 *
 * @example
 * ```ts
 * import { Inspector } from 'rxagent/devtools';
 * const inspector = new Inspector();
 * inspector.trace(({ tracingContext, runId }) => agent.stream$('Hello', { tracingContext, runId })).subscribe();
 * console.log(inspector.runs());
 * ```
 */
export class Inspector {
  readonly #maxRuns: number;
  readonly #caps: { maxChunks: number; maxEvents: number; maxBytes: number };
  readonly #runs = new Map<string, RunRecorder>();
  /** Runs evicted past `maxRuns` most recently (at most {@link EVICTED_REMEMBERED}), and how they stood. */
  readonly #evicted = new Map<string, InspectorRunStatus>();
  readonly #listeners = new Set<(event: InspectorEvent) => void>();
  readonly #prefix = Math.random().toString(36).slice(2, 8);
  #counter = 0;

  constructor(options: InspectorOptions = {}) {
    this.#maxRuns = count(options, 'maxRuns');
    this.#caps = { maxChunks: count(options, 'maxChunksPerRun'), maxEvents: count(options, 'maxEventsPerRun'), maxBytes: count(options, 'maxBytesPerRun') };
  }

  /**
   * Records the run `start` makes (called once per subscription, with the `tracingContext` and
   * `runId` to hand to it) and passes its chunks through unchanged; what the recorder cannot read
   * is left out of the record, never out of the run. `InspectorError` `invalid-option`, thrown here
   * (not in the run): `start` is not a function, or `options.agentId` / `options.title` is not a
   * string.
   *
   * @example
   * ```ts
   * const run$ = inspector.trace(({ tracingContext, runId }) => agent.stream$(messages, { tracingContext, runId }), { agentId: agent.id });
   * ```
   */
  trace(start: (context: TraceContext) => Observable<ChunkType>, options?: TraceOptions): Observable<ChunkType> {
    if (typeof start !== 'function') {
      throw new InspectorError('invalid-option', `Inspector.trace: expected a function (context) => Observable of chunks, got ${typeof start}.`);
    }
    const { agentId, title, messages } = traceLabels(options);
    return defer(() => {
      const runId = `run-${this.#prefix}-${++this.#counter}`;
      const recorder = new RunRecorder({
        runId,
        agentId,
        title,
        caps: this.#caps,
        emit: (event) => this.#emit(event),
        ...(messages === undefined ? {} : { messages }),
      });
      this.#keep(recorder);
      // every report and every chunk passes through `observe`, which swallows what recording
      // throws: recording never breaks a run (whoever calls the tracing context)
      const observe = (record: () => void): void => {
        try {
          record();
        } catch {
          // a chunk or report the recorder could not read is left out of the record, never out of the run
        }
      };
      const tracingContext: TracingContext = {
        includePayloads: true,
        onHook: (event) => observe(() => recorder.hook(event)),
        onJudge: (event) => observe(() => recorder.judge(event)),
      };
      let run$: Observable<ChunkType>;
      try {
        run$ = start({ tracingContext, runId });
      } catch (error) {
        recorder.end('error');
        throw error;
      }
      return run$.pipe(
        tap({
          next: (chunk) => observe(() => recorder.chunk(chunk)),
          error: () => observe(() => recorder.end('error')),
          complete: () => (recorder.completed = true),
        }),
        finalize(() => observe(() => recorder.end('cancelled'))),
      );
    });
  }

  /**
   * Opens a run from a `RunJournal` after the fact — one that ended an hour ago on another
   * instance, was taken over, was cancelled — and keeps it like a recorded run (same id): its
   * journaled chunks replayed on virtual time (one frame per entry) on the *run output* lane, a
   * takeover marker where the entries' epoch changes, exportable as marbles. The journal keeps
   * chunks only: the record has no hook or judge events (`source: 'journal'`). A run still going
   * is read up to its current end (open it again for more). `InspectorError`: `invalid-option`
   * (not a journal), `unknown-run` (the journal has no such run).
   *
   * @example
   * ```ts
   * import { PostgresRunJournal } from 'rxagent/storage/postgres';
   * const journal = new PostgresRunJournal({ connectionString: process.env.DATABASE_URL! });
   * const record = await inspector.openJournalRun(journal, 'run-42');
   * console.log(record.journal?.epoch, inspector.exportMarbles('run-42').diagram);
   * ```
   */
  async openJournalRun(journal: InspectableJournal, runId: string): Promise<InspectorRunRecord> {
    if (!isJournal(journal)) {
      throw new InspectorError('invalid-option', 'Inspector.openJournalRun: expected a RunJournal (an object with getRun and read$), e.g. a PostgresRunJournal.');
    }
    const problem = runIdProblem(runId);
    if (problem !== undefined) throw new InspectorError('invalid-option', `Inspector.openJournalRun: ${problem}.`);
    const run = await journal.getRun(runId);
    if (run === null) throw new InspectorError('unknown-run', `The journal has no run ${JSON.stringify(runId)}.`);
    // replayed on virtual time as it is read: entry n at frame n, as a marble diagram would (one
    // pass, in the order read, so a long run costs time linear in its length)
    let frame = 0;
    const recorder = new RunRecorder({
      runId,
      agentId: String(run.agentId),
      title: cutText(`journaled run ${runId}`, 200),
      caps: this.#caps,
      emit: () => undefined, // not live: the page that opened it loads the record
      clock: { kind: 'virtual', now: () => frame },
      startedAt: run.createdAt.getTime(),
      // a journal of the app's own may hand over other types (a BigInt seq): the facts are JSON
      journal: {
        status: String(run.status),
        epoch: Number(run.epoch),
        ...(run.owner === undefined ? {} : { owner: String(run.owner) }),
        lastSeq: Number(run.lastSeq),
        createdAt: run.createdAt.getTime(),
        updatedAt: run.updatedAt.getTime(),
      },
    });
    let epoch: number | undefined;
    await lastValueFrom(
      journal.read$(runId, { live: false }).pipe(
        tap((entry) => {
          frame += 1;
          const entryEpoch = Number(entry.epoch);
          if (epoch !== undefined && entryEpoch !== epoch) recorder.takeover(entryEpoch, epoch);
          epoch = entryEpoch;
          recorder.chunk(entry.chunk);
        }),
      ),
      { defaultValue: undefined },
    );
    if (!recorder.ended && run.terminal !== undefined) recorder.end(TERMINAL_STATUS[run.terminal]);
    this.#keep(recorder);
    return recorder.record();
  }

  /**
   * The journal's most recently changed runs, newest first (`limit` default 20), for a list to
   * open them from: the runs of {@link Inspector.journalListing}, its error rows left out (a run
   * row the journal cannot use does not fail the listing). `InspectorError` `invalid-option` when
   * the journal cannot list (no `listRuns`, or one that refuses the whole listing).
   *
   * @example
   * ```ts
   * for (const run of await inspector.journalRuns(journal)) console.log(run.runId, run.status, run.epoch);
   * ```
   */
  async journalRuns(journal: InspectableJournal, limit = 20): Promise<RunRecord[]> {
    const { runs } = await this.journalListing(journal, limit);
    return runs.filter((run): run is RunRecord => run.status !== 'unreadable');
  }

  /**
   * The journal's most recently changed runs, newest first (`limit` default 20), with an error
   * row (`status: 'unreadable'`, see {@link InspectorJournalRunError}) in place of each row the
   * inspector cannot use, never a failed listing: one read, `listRuns({ limit, unusable: 'report' })`,
   * whose `{ unusable: true, runId, error }` entries (a row the journal cannot use: its
   * `MalformedJournalEntryError` naming the field) are error rows where the journal listed them,
   * the runs older and newer than them listed as they are. A row whose id no journal stores (a lone
   * surrogate) or that has none is an error row naming `id`. `InspectorError` `invalid-option` when
   * the journal cannot list (no `listRuns`), or refuses the whole listing at a row it cannot use (it
   * does not honour `unusable: 'report'`: the message names the row); another failure of the
   * journal is its own error.
   *
   * @example
   * ```ts
   * const { runs } = await inspector.journalListing(journal);
   * for (const run of runs) console.log(run.runId, run.status === 'unreadable' ? run.error.message : run.epoch);
   * ```
   */
  async journalListing(journal: InspectableJournal, limit = 20): Promise<InspectorJournalListing> {
    if (!isJournal(journal) || typeof journal.listRuns !== 'function') {
      throw new InspectorError('invalid-option', 'Inspector: this journal cannot list its runs (no listRuns method): open a run by its id.');
    }
    let listed: ListedRun[];
    try {
      listed = await journal.listRuns({ limit, unusable: 'report' });
    } catch (error) {
      if (!MalformedJournalEntryError.isInstance(error)) throw error;
      throw new InspectorError(
        'invalid-option',
        `Inspector: the journal refused its whole listing at a row it cannot use (${error.message}): its listRuns does not list such rows in place. Give it listRuns({ unusable: 'report' }) (the built-in journals have it), or open a run by its id.`,
        { cause: error },
      );
    }
    if (!Array.isArray(listed)) throw new InspectorError('invalid-option', `Inspector: the journal's listRuns answered ${listed === null ? 'null' : typeof listed}, not a list of runs.`);
    return { runs: listed.map(listedRun) };
  }

  /** The runs kept, oldest first. */
  runs(): InspectorRunSummary[] {
    return [...this.#runs.values()].map((recorder) => recorder.summary());
  }

  /** One run's record; an `InspectorError` (`unknown-run`) when it is not kept (its message says when it was evicted). */
  run(runId: string): InspectorRunRecord {
    return this.#recorder(runId).record();
  }

  /** The live feed: every event of every run from now on (hot; no replay), and a `run-evicted` event for each run the inspector stops keeping. */
  events(): Observable<InspectorEvent> {
    return new Observable<InspectorEvent>((subscriber) => {
      const listener = (event: InspectorEvent): void => subscriber.next(event);
      this.#listeners.add(listener);
      return () => this.#listeners.delete(listener);
    });
  }

  /**
   * An ended run as a marble diagram, its values and a test snippet (see `toMarbleDiagram`);
   * `{ test: true }` also writes a ready-to-run `it()` that replays it.
   * `InspectorError`: `unknown-run`, `run-in-progress`, or `run-truncated` (more chunks than `maxChunksPerRun`, or past `maxBytesPerRun`).
   *
   * @example
   * ```ts
   * const { code } = inspector.exportMarbles(runId, { test: true }); // paste into a *.test.ts file
   * ```
   */
  exportMarbles(runId: string, options: { test?: boolean } = {}): MarbleExport {
    const recorder = this.#recorder(runId);
    if (!recorder.ended) throw new InspectorError('run-in-progress', `Run ${quoted(runId)} has not ended yet: export its diagram once it has.`);
    if (recorder.droppedChunks > 0) {
      const chunks = recorder.chunks.length + recorder.droppedChunks;
      throw new InspectorError(
        'run-truncated',
        !recorder.overBudget || recorder.chunks.length >= this.#caps.maxChunks
          ? `Run ${quoted(runId)} had ${chunks} chunks, more than maxChunksPerRun (${this.#caps.maxChunks}): its diagram would be incomplete. Raise maxChunksPerRun.`
          : `Run ${quoted(runId)} recorded more than maxBytesPerRun (${this.#caps.maxBytes} bytes) before its ${chunks} chunks were kept: its diagram would be incomplete. Raise maxBytesPerRun.`,
      );
    }
    // raw text: toMarbleDiagram escapes the title as it writes it
    const title = `Run ${runId} of agent "${recorder.agentId}"${recorder.title === '' ? '' : ` ("${recorder.title}")`}`;
    const test = options.test === true ? { name: `replays run ${runId} as recorded`, ...(recorder.title === '' ? {} : { input: recorder.title }) } : undefined;
    return toMarbleDiagram(recorder.chunks, { groups: recorder.groups, complete: recorder.completed, title, ...(test === undefined ? {} : { test }) });
  }

  #recorder(runId: string): RunRecorder {
    const recorder = this.#runs.get(runId);
    if (recorder !== undefined) return recorder;
    const status = this.#evicted.get(runId);
    if (status === undefined) {
      throw new InspectorError('unknown-run', `No run ${quoted(runId)} is kept by this inspector (never recorded, or evicted past maxRuns = ${this.#maxRuns}).`);
    }
    throw new InspectorError(
      'unknown-run',
      `Run ${quoted(runId)} was evicted (${status === 'running' ? 'it was still running' : `it had ended: ${status}`}): this inspector keeps maxRuns = ${this.#maxRuns} runs, the oldest ended ones evicted first, then the oldest running ones. Raise maxRuns to keep more.`,
    );
  }

  /**
   * Keeps a run (the newest), replacing a kept run with its id; past `maxRuns`, evicts the oldest
   * ended run, or the oldest running one when none has ended, so that runs that never end cannot
   * grow the inspector either.
   */
  #keep(recorder: RunRecorder): void {
    const replaced = this.#runs.get(recorder.runId);
    this.#runs.delete(recorder.runId);
    if (replaced !== undefined && replaced !== recorder) this.#evict(replaced, 'replaced');
    this.#runs.set(recorder.runId, recorder);
    this.#evicted.delete(recorder.runId);
    while (this.#runs.size > this.#maxRuns) {
      let oldest: RunRecorder | undefined;
      for (const kept of this.#runs.values()) {
        if (kept === recorder) continue; // the run just kept is the newest
        if (kept.ended) {
          oldest = kept;
          break;
        }
        oldest ??= kept;
      }
      this.#runs.delete((oldest as RunRecorder).runId);
      this.#evict(oldest as RunRecorder, 'max-runs');
    }
  }

  /** Stops keeping a run; one evicted past `maxRuns` is remembered, to say so when it is asked for (a replaced one's id is kept). */
  #evict(recorder: RunRecorder, reason: RunEvictedEvent['reason']): void {
    recorder.evict(reason);
    if (reason === 'replaced' || recorder.runId.length > REMEMBERED_ID_LENGTH) return;
    this.#evicted.delete(recorder.runId);
    this.#evicted.set(recorder.runId, recorder.status);
    if (this.#evicted.size > EVICTED_REMEMBERED) this.#evicted.delete(this.#evicted.keys().next().value as string);
  }

  #emit(event: InspectorEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // a failing listener never breaks a run
      }
    }
  }
}
