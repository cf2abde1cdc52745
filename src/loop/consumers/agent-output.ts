/** What `agent.stream()` returns: the run's chunks as web streams, and promises of its result. */
import type { Observable, Subscription } from 'rxjs';
import type { LanguageModelUsage } from 'ai';
import { ChunkLog } from '../../contract/chunk-log.js';
import type { ChunkType, RxFinishReason, ToolCallInfo, ToolResultInfo, TripwirePayload } from '../../contract/chunk-types.js';
import type { StepResult } from '../../contract/processor-types.js';
import type { GenerateResult } from '../agent-types.js';
import { isChunk, type RunEnd, type RunItem } from '../run/run-events.js';
import type { DemandGate } from '../../contract/demand-gate.js';
import { foldResult } from './fold-result.js';
import { ReaderPacing, type ReaderProbes } from './reader-pacing.js';
import { TextGate, textStreamError, type RetryBudgets } from './text-gate.js';
import { RunAbortedError } from '../run/run-aborted-error.js';

/**
 * How many unread chunks a stream that has a reader holds before the run stops reading the
 * provider (bench/README.md, "performance house rules": more read-ahead was no faster).
 */
const READ_AHEAD = 4;

function settled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined); // unobserved promises must not become unhandled rejections
  return promise;
}

/**
 * The run's side of an {@link AgentOutput}: the observer of the run, the underlying source of
 * `fullStream`, and the buffer for late readers.
 */
class RunSink implements UnderlyingDefaultSource<ChunkType>, ReaderProbes {
  fullController!: ReadableStreamDefaultController<ChunkType>;
  textController: ReadableStreamDefaultController<string> | undefined;
  fullOpen = true;
  textOpen = true;
  /** Every chunk of the run, for a late text stream and the folded result (compact: see `chunk-log.ts`). */
  readonly chunks = new ChunkLog();
  /** How the run ended, for a text stream opened afterwards. */
  ended: { error: unknown } | 'complete' | undefined;
  /** Made with the text stream: what of the run's text it presents (see `text-gate.ts`). */
  textGate: TextGate | undefined;
  /** `output.textStream`, made on first access. */
  textStream: ReadableStream<string> | undefined;
  end: RunEnd | undefined;
  /** `output.result`, made on first access (a run whose result nobody reads is never folded). */
  result: Promise<GenerateResult> | undefined;
  resolveResult: ((result: GenerateResult) => void) | undefined;
  rejectResult: ((error: unknown) => void) | undefined;
  // backpressure: while every stream being read is full (READ_AHEAD queued), the run stops reading the provider
  readonly demand: ReaderPacing = new ReaderPacing(this);

  constructor(
    readonly output: AgentOutput,
    readonly budgets: RetryBudgets,
  ) {}

  /** `fullStream`'s `desiredSize` while it is read and open, else `null` (see `reader-pacing.ts`). */
  fullDesiredSize(): number | null {
    return this.fullOpen && this.output.fullStream.locked ? this.fullController.desiredSize : null;
  }

  /** The text stream's `desiredSize` while it is read and open, else `null`. */
  textDesiredSize(): number | null {
    return this.textOpen && this.textController !== undefined && this.textStream?.locked === true ? this.textController.desiredSize : null;
  }

  /** Settle the promises the streams' last `pull`s returned (see {@link pull}). */
  wakeFull: (() => void) | undefined;
  wakeText: (() => void) | undefined;

  // fullStream's underlying source
  start(controller: ReadableStreamDefaultController<ChunkType>): void {
    this.fullController = controller;
  }

  /**
   * A web stream calls `pull` again only once the promise the last call returned has settled; until
   * then a read just marks it to be called again. Reads matter to the run only while it is held, so
   * while it is not, the promise stays pending: a chunk read costs no pull call and no promise hop.
   * When the run is held (`next`), the promise is settled, and the next read calls `pull` (releases).
   */
  pull(): Promise<void> | undefined {
    const demand = this.demand;
    demand.pulled();
    if (demand.holding || !this.fullOpen) return undefined;
    return new Promise<void>((resolve) => {
      this.wakeFull = resolve;
    });
  }

  /** The text stream's `pull`: as {@link pull}. */
  pullText(): Promise<void> | undefined {
    const demand = this.demand;
    demand.pulled();
    if (demand.holding || !this.textOpen) return undefined;
    return new Promise<void>((resolve) => {
      this.wakeText = resolve;
    });
  }

  /** Lets both streams call `pull` on their next read. */
  wake(): void {
    const full = this.wakeFull;
    const text = this.wakeText;
    this.wakeFull = this.wakeText = undefined;
    full?.();
    text?.();
  }

  /** `fullStream` was cancelled: stops the run; the text stream and promises still open end with a `RunAbortedError`. */
  cancel(reason: unknown): void {
    this.fullOpen = false;
    this.demand.stop();
    this.error(new RunAbortedError({ reason }));
    this.output.cancel();
  }

  // the run's observer: the consumer at the end of the pipeline. A throw while taking a value ends
  // the streams and the result with that error and stops the run (RxJS would only report it).
  next(item: RunItem): void {
    if (this.ended !== undefined) return;
    try {
      this.take(item);
    } catch (error) {
      this.error(error);
      this.output.cancel();
    }
  }

  take(item: RunItem): void {
    if (!isChunk(item)) {
      this.end = item;
      return;
    }
    const chunk = item;
    this.chunks.push(chunk);
    if (this.fullOpen) this.fullController.enqueue(chunk);
    if (this.textOpen) this.textGate?.observe(chunk);
    const demand = this.demand;
    demand.enqueued();
    if (demand.holding) this.wake();
  }

  error(error: unknown): void {
    if (this.ended !== undefined) return;
    this.demand.stop();
    this.wake();
    this.ended = { error };
    if (this.fullOpen) this.fullController.error(error);
    if (this.textOpen) this.textController?.error(error);
    this.fullOpen = this.textOpen = false;
    this.rejectResult?.(error);
  }

  complete(): void {
    if (this.ended !== undefined) return;
    this.demand.stop();
    this.wake();
    this.ended = 'complete';
    if (this.fullOpen) this.fullController.close();
    const textController = this.textController;
    if (this.textOpen && textController !== undefined) {
      const failure = textStreamError(this.chunks.last());
      if (failure === undefined) textController.close();
      else textController.error(failure);
    }
    this.fullOpen = this.textOpen = false;
    if (this.resolveResult !== undefined) this.settleResult(this.resolveResult, this.rejectResult as (error: unknown) => void);
  }

  /** The folded result (once the run ended). */
  settleResult(resolve: (result: GenerateResult) => void, reject: (error: unknown) => void): void {
    try {
      resolve(foldResult(this.chunks.toArray(), this.end));
    } catch (error) {
      reject(error);
    }
  }

  /** `output.result`: settled now if the run has ended, else when it ends. */
  openResult(): Promise<GenerateResult> {
    return settled(
      new Promise<GenerateResult>((resolve, reject) => {
        const ended = this.ended;
        if (ended === undefined) {
          this.resolveResult = resolve;
          this.rejectResult = reject;
        } else if (ended === 'complete') this.settleResult(resolve, reject);
        else reject(ended.error);
      }),
    );
  }

  /** The text stream: replays the text so far, then follows the run. */
  openTextStream(): ReadableStream<string> {
    return new ReadableStream<string>(
      {
        start: (controller) => {
          const gate = new TextGate(this.budgets, (text) => controller.enqueue(text));
          this.textGate = gate;
          this.chunks.forEach((chunk) => gate.observe(chunk));
          const ended = this.ended;
          const failure = ended === 'complete' ? textStreamError(this.chunks.last()) : undefined;
          if (ended === 'complete' && failure === undefined) controller.close();
          else if (ended !== undefined) controller.error(failure ?? (ended as { error: unknown }).error);
          if (ended !== undefined) this.textOpen = false;
          this.textController = controller;
        },
        pull: () => this.pullText(),
        cancel: () => {
          this.textOpen = false;
          this.demand.pulled();
        },
      },
      { highWaterMark: READ_AHEAD },
    );
  }
}

/** The promises of `result`'s fields an {@link AgentOutput} has handed out. */
interface ResultFields {
  text?: Promise<string>;
  finishReason?: Promise<RxFinishReason>;
  usage?: Promise<LanguageModelUsage>;
  steps?: Promise<StepResult[]>;
  toolCalls?: Promise<ToolCallInfo[]>;
  toolResults?: Promise<ToolResultInfo[]>;
  tripwire?: Promise<TripwirePayload | undefined>;
  object?: Promise<unknown>;
}

/**
 * A started run (Mastra-style output): `fullStream` and `textStream` as `ReadableStream`s, and
 * promises of the folded result. The run starts at once and buffers for late readers; cancelling
 * `fullStream` cancels the run (provider request and tools), and the text stream and promises then
 * reject with a `RunAbortedError`. While every stream that has a reader holds 4 unread chunks, the
 * run stops reading the provider (backpressure) until it is read again or the reader is released.
 *
 * @example
 * ```ts
 * const output = await agent.stream('Hello');
 * for await (const text of output.textStream) process.stdout.write(text);
 * console.log(await output.finishReason);
 * ```
 */
export class AgentOutput {
  /** Every chunk of the run, as a web `ReadableStream`. */
  readonly fullStream: ReadableStream<ChunkType>;
  readonly #subscription: Subscription | undefined;
  readonly #sink: RunSink;
  /**
   * The fields of `result`, each made on first access, in one object made with the first (a run
   * whose result nobody reads pays one field for them, not eight).
   */
  #fields: ResultFields | undefined;

  /**
   * The folded result of the run; rejects when the run ended in `error` or `abort`. Made on first
   * access (a run whose result nobody reads is never folded); the same promise on every access.
   */
  get result(): Promise<GenerateResult> {
    const sink = this.#sink;
    return (sink.result ??= sink.openResult());
  }

  /** The run's text (`result.text`). */
  get text(): Promise<string> {
    return ((this.#fields ??= {}).text ??= settled(this.result.then((result) => result.text)));
  }

  /** Why the run finished (`result.finishReason`). */
  get finishReason(): Promise<RxFinishReason> {
    return ((this.#fields ??= {}).finishReason ??= settled(this.result.then((result) => result.finishReason)));
  }

  /** Token usage of the whole run (`result.usage`). */
  get usage(): Promise<LanguageModelUsage> {
    return ((this.#fields ??= {}).usage ??= settled(this.result.then((result) => result.usage)));
  }

  /** The run's steps (`result.steps`). */
  get steps(): Promise<StepResult[]> {
    return ((this.#fields ??= {}).steps ??= settled(this.result.then((result) => result.steps)));
  }

  /** The tool calls of accepted steps (`result.toolCalls`). */
  get toolCalls(): Promise<ToolCallInfo[]> {
    return ((this.#fields ??= {}).toolCalls ??= settled(this.result.then((result) => result.toolCalls)));
  }

  /** The tool results of accepted steps (`result.toolResults`). */
  get toolResults(): Promise<ToolResultInfo[]> {
    return ((this.#fields ??= {}).toolResults ??= settled(this.result.then((result) => result.toolResults)));
  }

  /** The tripwire that ended the run, if any (`result.tripwire`). */
  get tripwire(): Promise<TripwirePayload | undefined> {
    return ((this.#fields ??= {}).tripwire ??= settled(this.result.then((result) => result.tripwire)));
  }

  /** The structured output, if any (`result.object`). */
  get object(): Promise<unknown> {
    return ((this.#fields ??= {}).object ??= settled(this.result.then((result) => result.object)));
  }

  /**
   * The text deltas as a stream. Made on first access (so a run nobody reads text from pays
   * nothing per chunk for it); a late reader still gets every delta from the start.
   */
  get textStream(): ReadableStream<string> {
    const sink = this.#sink;
    sink.textStream ??= sink.openTextStream();
    return sink.textStream;
  }

  /** @internal Made by `agent.stream()`: a run's values, its retry budgets and the demand gate the run was given. */
  constructor(run: Observable<RunItem>, budgets: RetryBudgets = { tripwire: 0, apiError: 0 }, demand?: DemandGate) {
    const sink = new RunSink(this, budgets);
    if (demand !== undefined) sink.demand.attach(demand);
    this.#sink = sink;
    this.fullStream = new ReadableStream<ChunkType>(sink, { highWaterMark: READ_AHEAD });
    this.#subscription = run.subscribe(sink);
    // a failure while the run emitted synchronously, inside `subscribe`, could not unsubscribe yet
    if (sink.ended !== undefined) this.#subscription.unsubscribe();
  }

  /**
   * Stops the run (aborts the provider request and tools). Unless the run had ended, the streams
   * (still open) and the promises then end with a `RunAbortedError`.
   */
  cancel(): void {
    this.#subscription?.unsubscribe();
    this.#sink.error(new RunAbortedError());
  }
}
