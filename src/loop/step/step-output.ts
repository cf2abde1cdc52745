/**
 * `stepOutput()`: the step-output kernel — one model call's events become the step's chunks, in one
 * operator: each event converted (the one part → chunk conversion, `modelPartToChunk`) or folded
 * into the step's facts, a tool call recorded as requested, every chunk through the run's
 * `processOutputStream` chain, fenced, accumulated into the attempt, and emitted.
 */
import { Observable, type OperatorFunction, type Subscriber, type Unsubscribable } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { ProcessorError } from '../../contract/errors/processor-error.js';
import { TripWire } from '../../contract/errors/trip-wire.js';
import { invalidResponse, type ModelLike } from '../../model/checked-stream.js';
import { messageOf } from '../../model/checked-part.js';
import { ModelCallError } from '../../model/errors/model-call-error.js';
import type { ModelEvent } from '../../model/model-events.js';
import { modelPartToChunk, withFact, type ToolCallIds } from '../../model/model-part-to-chunk.js';
import { liveReadOf, type PartSink } from '../../model/stream-model.js';
import type { OutputSink, OutputStreamPass } from '../../operators/process-output-stream.js';
import { subscribeLinked } from '../internal/subscribe-linked.js';
import type { AttemptState } from '../data/attempt-state.js';
import { admit, type OutputChain } from './output-chain.js';
import { parsePartialJson } from './partial-json.js';

/** What {@link stepOutput} needs of its step. */
export interface StepOutputOptions {
  /** The run id of the chunks it makes. */
  readonly runId: string;
  /** The attempt it accumulates into: facts, requested tool calls, `opened`, the accumulator. */
  readonly attempt: AttemptState;
  /** The run's output chain (a pass of it is opened per subscription). */
  readonly chain: OutputChain;
  /** Keeps tool call ids unique in the run (see `ToolCallIds`). */
  readonly toolCallIds: ToolCallIds;
  /** The chunks that go first, through the chain (the `step-start`, custom chunks waiting): asked at subscription. */
  readonly lead: () => readonly ChunkType[];
  /** Structured output without a structuring model: an `object` chunk after each text delta that changes the partial object. */
  readonly partialObjects?: boolean;
  /**
   * The model whose call this is (none for a processor's cached response): a part of it that throws
   * where it is converted (a getter the entry check does not read, such as a delta's) is an
   * `InvalidModelResponseError` naming it.
   */
  readonly model?: ModelLike;
}

/**
 * The step's output from its model call: `lead` first, then each event of the call — a fact
 * (`call-info`, `stream-start`, `finish`, …) folded into `attempt.facts`, content converted into a
 * chunk — through the output chain; what comes out is fenced (a processor cannot invent a
 * run-level chunk or a tool call), accumulated into the attempt and emitted.
 *
 * The source is the model call as an Observable. Behind a `callModel` Observable sits the read of
 * the provider's web stream (`liveReadOf`): the kernel starts it with itself as the sink, so each
 * part is converted, processed, accumulated and emitted in the read's own frame.
 *
 * Errors: the call failing, or a part that does not convert (an `error` part, a malformed part),
 * is a `ModelCallError` (`processAPIError` may retry it); a processor hook's error is its
 * `ProcessorError` or `TripWire`; a throw while fencing or accumulating is that error as it is
 * (a bug: the run ends with it, nothing retries it). A source error waits for the chunks before it.
 * Unsubscribing stops the hooks and cancels the provider's stream at once.
 *
 * ```
 * model:   i-a--b--f|        (i = call-info, f = finish: facts only)
 * output:  S-A--B---|        (S = step-start from `lead`; A, B = the chunks as the processors returned them)
 *
 * model:   i-a--e            (e = an `error` part)
 * output:  S-A--#            (# = ModelCallError)
 * ```
 *
 * @example
 * ```ts
 * // internal to the loop: one attempt's model phase
 * callModel(model, callOptions, demand).pipe(stepOutput({ runId, attempt, chain, toolCallIds, lead: () => [stepStart] }));
 * ```
 */
export function stepOutput(options: StepOutputOptions): OperatorFunction<ModelEvent, ChunkType> {
  return (events$) => new Observable<ChunkType>((subscriber) => new StepOutputRun(options, subscriber).start(events$));
}

/**
 * One subscription of {@link stepOutput}: the sink of the model call (`next` = an event into the
 * step) and, through {@link ChainOutlet}, of the output chain's pass.
 */
class StepOutputRun implements PartSink<ModelEvent> {
  readonly #options: StepOutputOptions;
  readonly #subscriber: Subscriber<ChunkType>;
  readonly #pass: OutputStreamPass | undefined;
  /** The model call ended (completed, failed, or a part failed to convert): nothing is taken after. */
  #ended = false;
  /** The model call: the live read, or the subscription to the call's Observable. */
  #source: Unsubscribable | undefined;
  /** The last partial object sent (its JSON), with `partialObjects`. */
  #lastObject = '';

  constructor(options: StepOutputOptions, subscriber: Subscriber<ChunkType>) {
    this.#options = options;
    this.#subscriber = subscriber;
    this.#pass = options.chain.open(new ChainOutlet(this));
  }

  /** Whether the step takes no more events (the call ended, or the consumer left). */
  get closed(): boolean {
    return this.#ended || this.#subscriber.closed;
  }

  start(events$: Observable<ModelEvent>): void {
    const subscriber = this.#subscriber;
    // registered before anything is emitted: a consumer that leaves at the first chunk stops the hooks at once
    if (this.#pass !== undefined) subscriber.add(this.#pass);
    for (const chunk of this.#options.lead()) {
      if (subscriber.closed) return;
      this.#push(chunk);
    }
    if (subscriber.closed) return;
    const live = liveReadOf(events$);
    this.#source = live !== undefined ? live(this) : subscribeLinked(events$, subscriber, this);
    subscriber.add(this.#source);
  }

  /** One event of the model call into the step. */
  next(event: ModelEvent): void {
    if (this.closed) return;
    const { attempt, runId, toolCallIds } = this.#options;
    let chunk: ChunkType | null;
    try {
      attempt.facts = withFact(attempt.facts, event);
      chunk = modelPartToChunk(event, runId, toolCallIds);
    } catch (error) {
      // the part ends the call, as an error notification of the call would
      this.#ended = true;
      this.#source?.unsubscribe();
      this.#intoChain(ModelCallError.isInstance(error) ? error : new ModelCallError({ cause: this.#unreadable(event, error) }));
      return;
    }
    if (chunk === null) return;
    if (chunk.type === 'tool-call') attempt.requestedToolCalls.set(chunk.payload.toolCallId, chunk.payload.toolName);
    this.#push(chunk);
  }

  /** What a model part's conversion threw, as the model's fault when the part is the model's (see `model`). */
  #unreadable(event: ModelEvent, error: unknown): unknown {
    const { model } = this.#options;
    if (model === undefined) return error;
    let part = 'a part';
    try {
      if (typeof event.type === 'string') part = `a "${event.type.slice(0, 40)}" part`;
    } catch {
      // a type that throws on a second read: "a part"
    }
    return invalidResponse(model, `the stream sent ${part} that throws where it is read (${messageOf(error)}).`, error);
  }

  /**
   * The model call failed: a provider's error becomes a `ModelCallError`; a processor's error
   * (a `processToolResult` hook on a provider-executed result upstream) stays what it is.
   */
  error(error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    const fromProcessor = TripWire.isInstance(error) || ProcessorError.isInstance(error);
    this.#intoChain(fromProcessor || ModelCallError.isInstance(error) ? error : new ModelCallError({ cause: error }));
  }

  /** The model call completed. */
  complete(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#pass !== undefined) this.#pass.complete();
    else this.#subscriber.complete();
  }

  /** A chunk into the chain (with no processor hook, straight out of it). */
  #push(chunk: ChunkType): void {
    if (this.#pass !== undefined) this.#pass.push(chunk);
    else this.out(chunk);
  }

  /** The call's error, in order behind the chunks still in the chain. */
  #intoChain(error: unknown): void {
    if (this.#pass !== undefined) this.#pass.error(error);
    else this.#subscriber.error(error);
  }

  /** A chunk out of the chain: fenced, accumulated, emitted. */
  out(chunk: ChunkType): void {
    const { attempt, chain } = this.#options;
    let partial: ChunkType | undefined;
    try {
      if (chain.hooked && !admit(chunk, attempt.requestedToolCalls)) return;
      if (chunk.type === 'step-start') attempt.opened = true;
      else attempt.accumulator.observe(chunk);
      if (this.#options.partialObjects === true && chunk.type === 'text-delta') partial = this.#partialObject();
    } catch (error) {
      this.fail(error);
      return;
    }
    const subscriber = this.#subscriber;
    subscriber.next(chunk);
    if (partial !== undefined) subscriber.next(partial);
  }

  /** The `object` chunk of the text so far, when its partial value changed. */
  #partialObject(): ChunkType | undefined {
    const partial = parsePartialJson(this.#options.attempt.accumulator.text);
    if (partial === undefined) return undefined;
    const serialized = JSON.stringify(partial);
    if (serialized === this.#lastObject) return undefined;
    this.#lastObject = serialized;
    return makeChunk(this.#options.runId, 'object', { object: partial });
  }

  /** Ends the step with `error` as it is (the chain failed, or fencing or accumulating threw). */
  fail(error: unknown): void {
    this.#ended = true;
    this.#source?.unsubscribe();
    this.#pass?.close();
    this.#subscriber.error(error);
  }

  /** The chain's pass is through. */
  done(): void {
    this.#subscriber.complete();
  }
}

/** Where the output chain's pass delivers: back into the step (a separate object: the step's own `next` takes model events). */
class ChainOutlet implements OutputSink {
  constructor(private readonly step: StepOutputRun) {}

  next(chunk: ChunkType): void {
    this.step.out(chunk);
  }

  error(error: unknown): void {
    this.step.fail(error);
  }

  complete(): void {
    this.step.done();
  }
}
