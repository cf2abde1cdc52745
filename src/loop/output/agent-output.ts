/** What `agent.stream()` returns: the run's chunks as web streams, and promises of its result. */
import type { Observable, Subscription } from 'rxjs';
import type { LanguageModelUsage } from 'ai';
import { ChunkLog } from '../../contract/chunk-log.js';
import type { ChunkType, RxFinishReason, ToolCallInfo, ToolResultInfo, TripwirePayload } from '../../contract/chunk-types.js';
import type { StepResult } from '../../contract/processor-types.js';
import type { GenerateResult } from '../agent-types.js';
import { isRunEnd, isRunOpened, type RunEnd, type RunItem } from '../run/run-events.js';
import { foldResult } from './fold-result.js';
import { ReaderDemand } from './reader-demand.js';
import { TextGate, textStreamError, type RetryBudgets } from './text-gate.js';

function settled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined); // unobserved promises must not become unhandled rejections
  return promise;
}

/**
 * A started run (Mastra-style output): `fullStream` and `textStream` as `ReadableStream`s, and
 * promises of the folded result. The run starts at once and buffers for late readers; cancelling
 * `fullStream` cancels the run (provider request and tools). While every stream that has a reader
 * holds 16 unread chunks, the run stops reading the provider (backpressure) until it is read again.
 *
 * @example
 * ```ts
 * const output = await agent.stream('Hello');
 * for await (const text of output.textStream) process.stdout.write(text);
 * console.log(await output.finishReason);
 * ```
 */
export class AgentOutput {
  readonly fullStream: ReadableStream<ChunkType>;
  readonly result: Promise<GenerateResult>;
  readonly text: Promise<string>;
  readonly finishReason: Promise<RxFinishReason>;
  readonly usage: Promise<LanguageModelUsage>;
  readonly steps: Promise<StepResult[]>;
  readonly toolCalls: Promise<ToolCallInfo[]>;
  readonly toolResults: Promise<ToolResultInfo[]>;
  readonly tripwire: Promise<TripwirePayload | undefined>;
  readonly object: Promise<unknown>;
  readonly #subscription: Subscription;
  readonly #openTextStream: () => ReadableStream<string>;
  #textStream: ReadableStream<string> | undefined;

  /**
   * The text deltas as a stream. Made on first access (so a run nobody reads text from pays
   * nothing per chunk for it); a late reader still gets every delta from the start.
   */
  get textStream(): ReadableStream<string> {
    this.#textStream ??= this.#openTextStream();
    return this.#textStream;
  }

  /** @internal Made by `agent.stream()`: a run's values and its retry budgets. */
  constructor(run: Observable<RunItem>, budgets: RetryBudgets = { tripwire: 0, apiError: 0 }) {
    let fullController!: ReadableStreamDefaultController<ChunkType>;
    let textController: ReadableStreamDefaultController<string> | undefined;
    let fullOpen = true;
    let textOpen = true;
    // backpressure: while every stream being read is full (16 queued), the run stops reading the provider
    const demand = new ReaderDemand(
      () => (fullOpen && this.fullStream.locked ? fullController.desiredSize : null),
      () => (textOpen && textController !== undefined && this.#textStream?.locked === true ? textController.desiredSize : null),
    );
    this.fullStream = new ReadableStream<ChunkType>(
      {
        start: (controller) => {
          fullController = controller;
        },
        pull: () => demand.pulled(),
        cancel: () => {
          fullOpen = false;
          demand.stop();
          this.#subscription.unsubscribe();
        },
      },
      { highWaterMark: 16 },
    );
    /** Every chunk of the run, for a late text stream and the folded result (compact: see `chunk-log.ts`). */
    const chunks = new ChunkLog();
    /** How the run ended, for a text stream opened afterwards. */
    let ended: { error: unknown } | 'complete' | undefined;
    /** Made with the text stream: what of the run's text it presents (see `text-gate.ts`). */
    let textGate: TextGate | undefined;
    this.#openTextStream = () =>
      new ReadableStream<string>(
        {
          start: (controller) => {
            textGate = new TextGate(budgets, (text) => controller.enqueue(text));
            const gate = textGate;
            chunks.forEach((chunk) => gate.observe(chunk));
            const failure = ended === 'complete' ? textStreamError(chunks.last()) : undefined;
            if (ended === 'complete' && failure === undefined) controller.close();
            else if (ended !== undefined) controller.error(failure ?? (ended as { error: unknown }).error);
            if (ended !== undefined) textOpen = false;
            textController = controller;
          },
          pull: () => demand.pulled(),
          cancel: () => {
            textOpen = false;
            demand.pulled();
          },
        },
        { highWaterMark: 16 },
      );
    let end: RunEnd | undefined;
    let resolveResult!: (result: GenerateResult) => void;
    let rejectResult!: (error: unknown) => void;
    this.result = settled(
      new Promise<GenerateResult>((resolve, reject) => {
        resolveResult = resolve;
        rejectResult = reject;
      }),
    );
    this.text = settled(this.result.then((result) => result.text));
    this.finishReason = settled(this.result.then((result) => result.finishReason));
    this.usage = settled(this.result.then((result) => result.usage));
    this.steps = settled(this.result.then((result) => result.steps));
    this.toolCalls = settled(this.result.then((result) => result.toolCalls));
    this.toolResults = settled(this.result.then((result) => result.toolResults));
    this.tripwire = settled(this.result.then((result) => result.tripwire));
    this.object = settled(this.result.then((result) => result.object));
    const close = (): void => {
      demand.stop();
      ended = 'complete';
      if (fullOpen) fullController.close();
      if (textOpen && textController !== undefined) {
        const failure = textStreamError(chunks.last());
        if (failure === undefined) textController.close();
        else textController.error(failure);
      }
      fullOpen = textOpen = false;
      try {
        resolveResult(foldResult(chunks.toArray(), end));
      } catch (error) {
        rejectResult(error);
      }
    };
    this.#subscription = run.subscribe({
      next: (item) => {
        if (isRunOpened(item)) return demand.attach(item.demand);
        if (isRunEnd(item)) {
          end = item;
          return;
        }
        const chunk = item;
        chunks.push(chunk);
        if (fullOpen) fullController.enqueue(chunk);
        if (textOpen) textGate?.observe(chunk);
        demand.enqueued();
      },
      error: (error: unknown) => {
        demand.stop();
        ended = { error };
        if (fullOpen) fullController.error(error);
        if (textOpen) textController?.error(error);
        fullOpen = textOpen = false;
        rejectResult(error);
      },
      complete: close,
    });
  }

  /** Stops the run (aborts the provider request and tools). */
  cancel(): void {
    this.#subscription.unsubscribe();
  }
}
