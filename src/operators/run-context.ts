/**
 * The run context: everything one run's hooks share — ids, the `MessageList`, request and tracing
 * context, per-processor state, retry counters, the abort signal and the custom-chunk outlet. The
 * operators' own per-run machinery (the demand gate, the `processOutputStream` chains) is attached
 * by `createRunContext` off the public type (`internal/run-machinery.ts`).
 */
import { signalDataChunk } from './internal/signal-chunk.js';
import { Subject, type SchedulerLike } from 'rxjs';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { MessageList } from '../message-list/message-list.js';
import type { DataChunkType } from '../contract/chunk-types.js';
import { ModelResolutionError } from '../contract/errors/model-resolution-error.js';
import { withRunId } from '../contract/make-chunk.js';
import { thrownMessage } from '../errors/thrown-message.js';
import { jsonProblem } from '../model/checked-part.js';
import type { ModelInput, Processor, ProcessorState, StepResult } from '../contract/processor-types.js';
import { RequestContext } from '../contract/request-context.js';
import type { ProcessorSignal, SendSignalFunction } from '../contract/signal-types.js';
import type { ProcessorStreamWriter } from '../contract/stream-writer.js';
import type { TracingContext } from '../contract/tracing-context.js';
import { bindProcessor, type ProcessorBinding } from './internal/processor-binding.js';
import { setProcessorIndex } from './internal/processor-index.js';
import { createSignal } from './internal/signals.js';
import { guardReferenceState } from './internal/reference-state-guard.js';
import { attachRunMachinery } from './internal/run-machinery.js';
import type { StreamPartsHolder } from './stream-parts.js';
import { DemandGate } from '../contract/demand-gate.js';
import { randomMessageId } from '../message-list/conversion-options.js';

/**
 * The run's state the operators read and write: plain data, one value per run. The agent loop's
 * `RunState` extends it (and snapshots it between steps); `createRunContext` makes a fresh one when
 * none is given. The context's fields of the same names read and write this value.
 */
export interface RunContextState {
  /** The run's messages: history, input, the response so far. */
  messageList: MessageList;
  /** Processor-triggered (tripwire) retries so far: the `retryCount` hooks see. */
  retryCount: number;
  /** `processAPIError` retries so far: the `retryCount` `processAPIError` sees. */
  apiErrorRetryCount: number;
  /** The reason of the attempt a tripwire retry rejected: the next attempt's prompt ends with it. */
  retryFeedback: string | undefined;
  /** Completed steps (rejected attempts included, with their `tripwire`). */
  steps: StepResult[];
  /** The current step number (0-based). */
  stepNumber: number;
  /** Signals sent by hooks, waiting for the run's next model request (`processLLMRequest` takes them). */
  pendingSignals: ProcessorSignal[];
  /** Each processor's `state`, by processor id (one object per id per run). */
  processorStates: Record<string, ProcessorState>;
}

/** The context one run's operators share: its state (`RunContextState`) and its services. */
export interface RunContext extends RunContextState {
  /** The run's id (chunks carry it). */
  readonly runId: string;
  /** The run's request context (what the caller passed, and what hooks write). */
  requestContext: RequestContext;
  /** Tracing of the run (spans of processor hooks). */
  tracingContext: TracingContext;
  /** Fires when the run is cancelled; hooks and tools receive it. */
  abortSignal: AbortSignal;
  /** Processor retry budget (`undefined`: a retry request is a plain abort). */
  maxProcessorRetries: number | undefined;
  /** Resolves a model returned by `processInputStep` (the loop passes its registry-aware resolver). */
  resolveModel: (model: ModelInput) => LanguageModelV4;
  /** Where `writer.custom()` chunks go outside `processOutputStream` (the loop merges it into the stream). */
  readonly custom$: Subject<DataChunkType>;
  /** The writer hooks receive outside `processOutputStream`. */
  readonly writer: ProcessorStreamWriter;
  /** Each processor's position in this run (`assignProcessorIndexes`): what its hooks get as `processorIndex`. */
  readonly processorIndexes: Map<Processor, number>;
  /** An async hook that has not settled after this many ms fails closed with a `ProcessorError`. */
  processorTimeoutMs: number | undefined;
  /** The scheduler that times `processorTimeoutMs` (default `asyncScheduler`; a `TestScheduler` in tests). */
  scheduler: SchedulerLike | undefined;
  /**
   * Whether the `processLLMRequest` hooks run after `processInputStep` (true in the agent loop and
   * the middleware): processors implementing both then get `llmRequestStage: true`. Set it false
   * when composing `processInputStep` without `processLLMRequest`.
   */
  llmRequestStage: boolean;
  /** The `sendSignal` hooks receive (queues a signal for the next model request of this run). */
  readonly sendSignal: SendSignalFunction;
  /** This run's state object for a processor id (one per id per run). */
  stateFor(processorId: string): ProcessorState;
  /** This run's binding of `processor` (state, abort functions), at position `index` (first call wins). */
  bind(processor: Processor, index?: number): ProcessorBinding;
}

/** What `createRunContext` accepts; every field is optional. */
export type RunContextInit = Partial<
  Pick<
    RunContext,
    | 'runId'
    | 'messageList'
    | 'requestContext'
    | 'tracingContext'
    | 'abortSignal'
    | 'maxProcessorRetries'
    | 'retryCount'
    | 'steps'
    | 'stepNumber'
    | 'resolveModel'
    | 'processorTimeoutMs'
    | 'scheduler'
    | 'llmRequestStage'
  >
> & {
  /**
   * The run's state to read and write (the agent loop's `RunState`); default: a fresh one from the
   * fields above. The processor states it holds are the run's (a restored run's), and the
   * `processOutputStream` chains keep their `streamParts` in it.
   */
  state?: RunContextState;
  /** The run's demand gate (the loop makes it first, to hand it to consumers); default: a fresh one. */
  demand?: DemandGate;
  /** Id source of the run (its default `runId`, signal ids); default: a flat random UUID. */
  generateId?: () => string;
  /** The run's clock (signals' `createdAt`); default: the system clock. */
  now?: () => Date;
};

/**
 * Throws a clear error unless `chunk` is a custom data chunk (`type` starting with `data-`).
 * Synchronous, so a bad chunk fails the hook that wrote it even when the promise is not awaited.
 */
export function assertDataChunk(chunk: DataChunkType): void {
  void ownDataChunk(chunk);
}

/**
 * `chunk` read once into an object of its own, checked: a custom data chunk (`type` starting with
 * `data-`) whose fields can be read and written as JSON (it reaches the client, the journal and
 * memory as it is: a `BigInt`, a cycle, a Proxy or a getter that throws would fail them there,
 * far from the hook). Throws a `TypeError` saying what is wrong — synchronously, so it fails the
 * hook (or tool) that wrote it even when the promise is not awaited. What the run takes is the
 * copy: a getter is not read again, and fields replaced after the write change nothing.
 *
 * @example
 * ```ts
 * ownDataChunk({ type: 'data-progress', data: { done: 1 } }); // a copy of it
 * ownDataChunk({ type: 'data-progress', data: 1n });          // TypeError: … is not JSON at $.data (bigint) …
 * ```
 */
export function ownDataChunk(chunk: DataChunkType): DataChunkType {
  let own: Record<string, unknown>;
  try {
    own = typeof chunk === 'object' && chunk !== null ? { ...(chunk as object) } : {};
  } catch (reading) {
    throw new TypeError(`writer.custom() was given a chunk that cannot be read (${thrownMessage(reading) ?? 'a Proxy or a getter that throws'}).`);
  }
  const type = own.type;
  if (typeof type !== 'string' || !type.startsWith('data-')) {
    throw new TypeError(
      `writer.custom() takes data chunks only: chunk.type must start with "data-" (got ${typeof type === 'string' ? JSON.stringify(type.slice(0, 40)) : typeof type === 'symbol' ? 'a symbol' : JSON.stringify(type)}).`,
    );
  }
  const problem = jsonProblem(own);
  if (problem !== undefined) {
    throw new TypeError(`writer.custom() was given a "${type.slice(0, 40)}" chunk that ${problem.replace(/^is not JSON at \$/, 'is not JSON at chunk')}: a data chunk reaches the client and memory as it is.`);
  }
  return own as unknown as DataChunkType;
}

/** The system clock (a run's default). */
function systemNow(): Date {
  return new Date();
}

function defaultResolveModel(model: ModelInput): LanguageModelV4 {
  if (typeof model === 'object' && model !== null && model.specificationVersion === 'v4') return model;
  const described = typeof model === 'string' ? model : `${String(model?.specificationVersion)} model object`;
  throw new ModelResolutionError(
    described,
    `Cannot resolve model ${JSON.stringify(described)} here: outside an Agent only LanguageModelV4 objects are accepted (pass resolveModel to createRunContext).`,
  );
}

/** The state object of `processorId` in a run's `states` (made on first use). */
function stateIn(states: Record<string, ProcessorState>, processorId: string): ProcessorState {
  let state = states[processorId];
  if (state === undefined) {
    state = guardReferenceState(processorId, {});
    states[processorId] = state;
  }
  return state;
}

/** A fresh run state from `init`'s fields. */
function initialState(init: RunContextInit): RunContextState {
  return {
    messageList: init.messageList ?? new MessageList(),
    retryCount: init.retryCount ?? 0,
    apiErrorRetryCount: 0,
    retryFeedback: undefined,
    steps: init.steps ?? [],
    stepNumber: init.stepNumber ?? 0,
    pendingSignals: [],
    processorStates: {},
  };
}

/**
 * Makes a fresh run context (for using the operators standalone, or in tests). Its state fields
 * (`retryCount`, `steps`, `messageList`, …) read and write `init.state` when given — the agent
 * loop's `RunState` — else a fresh state.
 *
 * @example
 * ```ts
 * import { createRunContext, processOutputStream } from 'rxagent/operators';
 * const ctx = createRunContext({ maxProcessorRetries: 2 });
 * chunks$.pipe(processOutputStream([myProcessor], ctx)).subscribe(console.log);
 * ```
 */
export function createRunContext(init: RunContextInit = {}): RunContext {
  const state = init.state ?? initialState(init);
  const context = new Context(state, init);
  attachRunMachinery(context, init.demand ?? new DemandGate(), state as StreamPartsHolder);
  return context;
}

/** `writer.custom()` into the run's outlet (no `this`: hooks may call it detached); the chunk gets the run's id. */
function outletWriter(custom$: Subject<DataChunkType>, runId: string, run: { readonly abortSignal: AbortSignal }): ProcessorStreamWriter {
  return {
    custom(chunk: DataChunkType): Promise<void> {
      // After the run ended (its signal aborted, the outlet closed): a late write (a timer, an
      // unawaited promise) is dropped unread, never thrown into a caller that is gone.
      if (custom$.closed || custom$.isStopped || run.abortSignal.aborted) return Promise.resolve();
      custom$.next(withRunId(ownDataChunk(chunk), runId));
      return Promise.resolve();
    },
  };
}

/** The run's `sendSignal`: queued for the next step's input, shown in the stream (transient), as the reference does. */
function signalSender(state: RunContextState, writer: ProcessorStreamWriter, generateId: () => string, now: () => Date): SendSignalFunction {
  return (input) => {
    const signal = createSignal(input, generateId, now);
    state.pendingSignals.push(signal);
    void writer.custom(signalDataChunk(signal));
    return Promise.resolve(signal);
  };
}

/**
 * A run context: the services as own fields, the state fields ({@link RunContextState}) as
 * accessors of the run's state. `sendSignal` reads no `this` (hooks get it detached).
 */
class Context implements RunContext {
  readonly #state: RunContextState;
  readonly #bindings = new Map<Processor, ProcessorBinding>();
  readonly runId: string;
  requestContext: RequestContext;
  tracingContext: TracingContext;
  abortSignal: AbortSignal;
  maxProcessorRetries: number | undefined;
  resolveModel: (model: ModelInput) => LanguageModelV4;
  readonly custom$ = new Subject<DataChunkType>();
  readonly writer: ProcessorStreamWriter;
  readonly processorIndexes = new Map<Processor, number>();
  processorTimeoutMs: number | undefined;
  scheduler: SchedulerLike | undefined;
  llmRequestStage: boolean;
  readonly sendSignal: SendSignalFunction;

  constructor(state: RunContextState, init: RunContextInit) {
    this.#state = state;
    // a state given with processor states (restored from a snapshot): each one guarded as a fresh one is
    for (const [processorId, processorState] of Object.entries(state.processorStates)) {
      if (!Object.hasOwn(processorState, 'controller')) guardReferenceState(processorId, processorState);
    }
    const generateId = init.generateId ?? randomMessageId;
    const now = init.now ?? systemNow;
    this.runId = init.runId ?? `run-${generateId()}`;
    this.requestContext = init.requestContext ?? new RequestContext();
    this.tracingContext = init.tracingContext ?? {};
    this.abortSignal = init.abortSignal ?? new AbortController().signal;
    this.maxProcessorRetries = init.maxProcessorRetries;
    this.resolveModel = init.resolveModel ?? defaultResolveModel;
    this.processorTimeoutMs = init.processorTimeoutMs;
    this.scheduler = init.scheduler;
    this.llmRequestStage = init.llmRequestStage ?? true;
    // made outside the constructor, so that they close over nothing of the run (bench/README.md, house rules)
    this.writer = outletWriter(this.custom$, this.runId, this);
    this.sendSignal = signalSender(state, this.writer, generateId, now);
  }

  stateFor(processorId: string): ProcessorState {
    return stateIn(this.#state.processorStates, processorId);
  }

  bind(processor: Processor, index = 0): ProcessorBinding {
    const bindings = this.#bindings;
    let binding = bindings.get(processor);
    if (binding === undefined) {
      // the context is the bindings' `HookLimits`: its `processorTimeoutMs` and `scheduler`, read live
      binding = bindProcessor(processor, stateIn(this.#state.processorStates, processor.id), index, this);
      bindings.set(processor, binding);
    }
    return binding;
  }

  get messageList(): MessageList {
    return this.#state.messageList;
  }
  set messageList(value: MessageList) {
    this.#state.messageList = value;
  }
  get retryCount(): number {
    return this.#state.retryCount;
  }
  set retryCount(value: number) {
    this.#state.retryCount = value;
  }
  get apiErrorRetryCount(): number {
    return this.#state.apiErrorRetryCount;
  }
  set apiErrorRetryCount(value: number) {
    this.#state.apiErrorRetryCount = value;
  }
  get retryFeedback(): string | undefined {
    return this.#state.retryFeedback;
  }
  set retryFeedback(value: string | undefined) {
    this.#state.retryFeedback = value;
  }
  get steps(): StepResult[] {
    return this.#state.steps;
  }
  set steps(value: StepResult[]) {
    this.#state.steps = value;
  }
  get stepNumber(): number {
    return this.#state.stepNumber;
  }
  set stepNumber(value: number) {
    this.#state.stepNumber = value;
  }
  get pendingSignals(): ProcessorSignal[] {
    return this.#state.pendingSignals;
  }
  set pendingSignals(value: ProcessorSignal[]) {
    this.#state.pendingSignals = value;
  }
  get processorStates(): Record<string, ProcessorState> {
    return this.#state.processorStates;
  }
  set processorStates(value: Record<string, ProcessorState>) {
    this.#state.processorStates = value;
  }
}

/**
 * Registers each processor's position for a run — its index in its own list (input, output and
 * error processors are numbered separately; a processor in two lists keeps its first position) —
 * and writes it onto the processor where the object allows it (a frozen processor still runs; its
 * hooks get the index through their `processorIndex` argument, exact even when one instance is
 * shared by agents at different positions).
 *
 * @example
 * ```ts
 * import { assignProcessorIndexes, createRunContext } from 'rxagent/operators';
 * const ctx = createRunContext();
 * assignProcessorIndexes(ctx, [inputProcessors, outputProcessors]);
 * ```
 */
export function assignProcessorIndexes(context: RunContext, lists: readonly (readonly Processor[])[]): void {
  for (const list of lists) {
    list.forEach((processor, index) => {
      if (!context.processorIndexes.has(processor)) context.processorIndexes.set(processor, index);
      setProcessorIndex(processor, index);
    });
  }
}
