/**
 * The inspector's state: the runs it recorded (bounded), and the live feed of their events.
 * One `Inspector` per `inspect()` server (or per test); nothing is shared between instances.
 */
import { defer, finalize, lastValueFrom, Observable, tap } from 'rxjs';
import type { ChunkType, TracingContext } from '../contract/index.js';
import type { RunJournal, RunRecord } from '../storage/index.js';
import { InspectorError } from './errors/inspector-error.js';
import type { InspectorEvent, InspectorRunRecord, InspectorRunSummary } from './inspector-events.js';
import { cutText } from './internal/payload.js';
import { RunRecorder } from './internal/run-recorder.js';
import { toMarbleDiagram, type MarbleExport } from './marble-export.js';

/**
 * Options of {@link Inspector}: how much it keeps.
 *
 * @example
 * ```ts
 * import { Inspector, type InspectorOptions } from 'rxagent/devtools';
 * const options: InspectorOptions = { maxRuns: 20, maxChunksPerRun: 500 };
 * const inspector = new Inspector(options);
 * ```
 */
export interface InspectorOptions {
  /** Runs kept; past it the oldest ended run is forgotten. Default 50. */
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
 * list recent runs.
 *
 * @example
 * ```ts
 * import type { InspectableJournal } from 'rxagent/devtools';
 * import { PostgresRunJournal } from 'rxagent/storage/postgres';
 * const journal: InspectableJournal = new PostgresRunJournal({ connectionString: process.env.DATABASE_URL! });
 * ```
 */
export type InspectableJournal = Pick<RunJournal, 'getRun' | 'read$'> & {
  /** The runs changed most recently, newest first. */
  listRuns?(options?: { limit?: number }): Promise<RunRecord[]>;
};

const isJournal = (value: unknown): value is InspectableJournal =>
  typeof value === 'object' && value !== null && typeof (value as { getRun?: unknown }).getRun === 'function' && typeof (value as { read$?: unknown }).read$ === 'function';

/** The chunk ending each journal status, for a run the journal says ended. */
const TERMINAL_STATUS = { finish: 'finish', tripwire: 'tripwire', error: 'error', abort: 'abort' } as const;

const DEFAULTS = { maxRuns: 50, maxChunksPerRun: 2_000, maxEventsPerRun: 20_000 } as const;

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
  readonly #caps: { maxChunks: number; maxEvents: number };
  readonly #runs = new Map<string, RunRecorder>();
  readonly #listeners = new Set<(event: InspectorEvent) => void>();
  readonly #prefix = Math.random().toString(36).slice(2, 8);
  #counter = 0;

  constructor(options: InspectorOptions = {}) {
    this.#maxRuns = count(options, 'maxRuns');
    this.#caps = { maxChunks: count(options, 'maxChunksPerRun'), maxEvents: count(options, 'maxEventsPerRun') };
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
    if (typeof runId !== 'string' || runId === '') throw new InspectorError('invalid-option', `Inspector.openJournalRun: runId must be a non-empty string (got ${typeof runId}).`);
    const run = await journal.getRun(runId);
    if (run === null) throw new InspectorError('unknown-run', `The journal has no run ${JSON.stringify(runId)}.`);
    // replayed on virtual time as it is read: entry n at frame n, as a marble diagram would (one
    // pass, in the order read, so a long run costs time linear in its length)
    let frame = 0;
    const recorder = new RunRecorder({
      runId,
      agentId: run.agentId,
      title: `journaled run ${runId}`,
      caps: this.#caps,
      emit: () => undefined, // not live: the page that opened it loads the record
      clock: { kind: 'virtual', now: () => frame },
      startedAt: run.createdAt.getTime(),
      journal: {
        status: run.status,
        epoch: run.epoch,
        ...(run.owner === undefined ? {} : { owner: run.owner }),
        lastSeq: run.lastSeq,
        createdAt: run.createdAt.getTime(),
        updatedAt: run.updatedAt.getTime(),
      },
    });
    let epoch: number | undefined;
    await lastValueFrom(
      journal.read$(runId, { live: false }).pipe(
        tap((entry) => {
          frame += 1;
          if (epoch !== undefined && entry.epoch !== epoch) recorder.takeover(entry.epoch, epoch);
          epoch = entry.epoch;
          recorder.chunk(entry.chunk);
        }),
      ),
      { defaultValue: undefined },
    );
    if (!recorder.ended && run.terminal !== undefined) recorder.end(TERMINAL_STATUS[run.terminal]);
    this.#runs.delete(runId);
    this.#keep(recorder);
    return recorder.record();
  }

  /**
   * The journal's most recently changed runs, newest first (`limit` default 20), for a list to
   * open them from. `InspectorError` `invalid-option` when the journal cannot list (no `listRuns`).
   *
   * @example
   * ```ts
   * for (const run of await inspector.journalRuns(journal)) console.log(run.runId, run.status, run.epoch);
   * ```
   */
  async journalRuns(journal: InspectableJournal, limit = 20): Promise<RunRecord[]> {
    if (!isJournal(journal) || typeof journal.listRuns !== 'function') {
      throw new InspectorError('invalid-option', 'Inspector.journalRuns: this journal cannot list its runs (no listRuns method): open a run by its id.');
    }
    return journal.listRuns({ limit });
  }

  /** The runs kept, oldest first. */
  runs(): InspectorRunSummary[] {
    return [...this.#runs.values()].map((recorder) => recorder.summary());
  }

  /** One run's record; an `InspectorError` (`unknown-run`) when it is not kept. */
  run(runId: string): InspectorRunRecord {
    return this.#recorder(runId).record();
  }

  /** The live feed: every event of every run from now on (hot; no replay). */
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
   * `InspectorError`: `unknown-run`, `run-in-progress`, or `run-truncated` (more chunks than `maxChunksPerRun`).
   *
   * @example
   * ```ts
   * const { code } = inspector.exportMarbles(runId, { test: true }); // paste into a *.test.ts file
   * ```
   */
  exportMarbles(runId: string, options: { test?: boolean } = {}): MarbleExport {
    const recorder = this.#recorder(runId);
    if (!recorder.ended) throw new InspectorError('run-in-progress', `Run ${runId} has not ended yet: export its diagram once it has.`);
    if (recorder.droppedChunks > 0) {
      throw new InspectorError(
        'run-truncated',
        `Run ${runId} had ${recorder.chunks.length + recorder.droppedChunks} chunks, more than maxChunksPerRun (${this.#caps.maxChunks}): its diagram would be incomplete. Raise maxChunksPerRun.`,
      );
    }
    // raw text: toMarbleDiagram escapes the title as it writes it
    const title = `Run ${runId} of agent "${recorder.agentId}"${recorder.title === '' ? '' : ` ("${recorder.title}")`}`;
    const test = options.test === true ? { name: `replays run ${runId} as recorded`, ...(recorder.title === '' ? {} : { input: recorder.title }) } : undefined;
    return toMarbleDiagram(recorder.chunks, { groups: recorder.groups, complete: recorder.completed, title, ...(test === undefined ? {} : { test }) });
  }

  #recorder(runId: string): RunRecorder {
    const recorder = this.#runs.get(runId);
    if (recorder === undefined) {
      throw new InspectorError('unknown-run', `No run ${JSON.stringify(runId)} is kept by this inspector (never recorded, or forgotten past maxRuns = ${this.#maxRuns}).`);
    }
    return recorder;
  }

  #keep(recorder: RunRecorder): void {
    this.#runs.set(recorder.runId, recorder);
    if (this.#runs.size <= this.#maxRuns) return;
    for (const [runId, kept] of this.#runs) {
      if (this.#runs.size <= this.#maxRuns) break;
      if (kept.ended) this.#runs.delete(runId);
    }
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
