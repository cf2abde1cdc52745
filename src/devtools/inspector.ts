/**
 * The inspector's state: the runs it recorded (bounded), and the live feed of their events.
 * One `Inspector` per `inspect()` server (or per test); nothing is shared between instances.
 */
import { defer, finalize, Observable, tap } from 'rxjs';
import type { ChunkType, TracingContext } from '../contract/index.js';
import { InspectorError } from './errors/inspector-error.js';
import type { InspectorEvent, InspectorRunRecord, InspectorRunSummary } from './inspector-events.js';
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
}

const DEFAULTS = { maxRuns: 50, maxChunksPerRun: 2_000, maxEventsPerRun: 20_000 } as const;

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
   * `runId` to hand to it) and passes its chunks through unchanged.
   *
   * @example
   * ```ts
   * const run$ = inspector.trace(({ tracingContext, runId }) => agent.stream$(messages, { tracingContext, runId }), { agentId: agent.id });
   * ```
   */
  trace(start: (context: TraceContext) => Observable<ChunkType>, options: TraceOptions = {}): Observable<ChunkType> {
    if (typeof start !== 'function') {
      throw new InspectorError('invalid-option', `Inspector.trace: expected a function (context) => Observable of chunks, got ${typeof start}.`);
    }
    return defer(() => {
      const runId = `run-${this.#prefix}-${++this.#counter}`;
      const recorder = new RunRecorder({
        runId,
        agentId: options.agentId ?? 'agent',
        title: (options.title ?? '').slice(0, 200),
        caps: this.#caps,
        emit: (event) => this.#emit(event),
      });
      this.#keep(recorder);
      // the run reports through tracing, which swallows what a report throws; the chunks pass through
      // `observe`, which does the same: recording never breaks a run
      const tracingContext: TracingContext = {
        includePayloads: true,
        onHook: (event) => recorder.hook(event),
        onJudge: (event) => recorder.judge(event),
      };
      const observe = (record: () => void): void => {
        try {
          record();
        } catch {
          // a chunk the recorder could not read is left out of the record, never out of the run
        }
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
