/**
 * One agent run as a cold Observable of chunks:
 * `start` → `processInput` → steps (see `step.ts`) → `processOutputResult` → `finish`,
 * with exactly one terminal chunk (`finish | tripwire | error | abort`) and nothing after it.
 */
import {
  Observable,
  type Subscriber,
  catchError,
  EMPTY,
  concat,
  concatMap,
  defer,
  finalize as whenFinalized,
  from,
  ignoreElements,
  of,
  tap,
} from 'rxjs';
import { MessageList } from '../../message-list/message-list.js';
import { randomMessageId } from '../../message-list/conversion-options.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import { processInput } from '../../operators/process-input.js';
import { processOutputResult } from '../../operators/process-output-result.js';
import { assignProcessorIndexes, createRunContext } from '../../operators/run-context.js';
import { DEFAULT_API_ERROR_RETRIES } from '../../operators/retry-on-api-error.js';
import { isPromiseLike, thenMaybe, type MaybePromise } from '../../contract/maybe-async.js';
import type { ChunkType, DataChunkType } from '../../contract/chunk-types.js';
import { TripWire } from '../../contract/errors/trip-wire.js';
import type { OutputResult, Processor, StepResult } from '../../contract/processor-types.js';
import { RequestContext } from '../../contract/request-context.js';
import type { AgentCallOptions, AgentConfig, AgentInput, AgentInstructions, DynamicArgument } from '../agent-types.js';
import { CustomOutlet } from './custom-outlet.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { resolveModel } from '../../model/resolve-model.js';
import { endWithTerminal, terminalChunk, type EndWithTerminalOptions } from '../output/end-with-terminal.js';
import { createOutputChain } from '../step/output-chain.js';
import type { PrepareStepFunction, RunEnvironment } from './run-environment.js';
import { LateDemand, runEnd, runOpened, type RunItem } from './run-events.js';
import { demandOf } from '../../operators/demand.js';
import { isStepEnd, modelStep, type StepEnd } from '../step/model-step.js';
import { emptyUsage, addUsage } from '../../model/usage.js';
import { validateResolved, validateRunArguments } from './validate-options.js';
import { hasHook, whenHooked } from '../internal/when-hooked.js';
import { Sequence, type SequencePlan } from '../internal/sequence.js';
import { stopConditionsOf } from './stop-condition.js';

function resolveDynamic<T>(value: DynamicArgument<T> | undefined, requestContext: RequestContext): MaybePromise<T | undefined> {
  if (typeof value === 'function') return (value as (args: { requestContext: RequestContext }) => T | Promise<T>)({ requestContext });
  return value;
}

/** `Promise.all` that stays synchronous when no value is a promise. */
function allMaybe<T extends readonly unknown[]>(values: T): MaybePromise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  if (values.some((value) => isPromiseLike(value))) return Promise.all(values) as Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }>;
  return values as unknown as { -readonly [K in keyof T]: Awaited<T[K]> };
}

const noMemoryProcessors = { input: [], output: [] };

function toSystemMessages(instructions: AgentInstructions | undefined): CoreSystemMessage[] {
  if (instructions === undefined) return [];
  const list = Array.isArray(instructions) ? instructions : [instructions];
  return (list as Array<string | CoreSystemMessage>)
    .map((item): CoreSystemMessage => (typeof item === 'string' ? { role: 'system', content: item } : item))
    .filter((message) => message.content.length > 0);
}

function prepareStepProcessor(prepareStep: PrepareStepFunction): Processor<'prepare-step'> {
  return { id: 'prepare-step', processInputStep: (args) => prepareStep(args) };
}

let runSequence = 0;

/** The default clock. */
function currentDate(): Date {
  return new Date();
}

/**
 * The reason a run's signal gets when the run is over (ended, or unsubscribed): one shared
 * AbortError, so ending a run captures no stack trace (a fresh DOMException per run was ~4 % of
 * a one-chunk `generate()`).
 */
const runOver = new DOMException('The run is over.', 'AbortError');

/**
 * Builds the environment of a run: synchronous unless a dynamic argument or memory returns a
 * promise (so a run on a marble model stays on virtual time).
 */
function createEnvironment(config: AgentConfig, input: AgentInput, callOptions: AgentCallOptions): MaybePromise<RunEnvironment> {
  const options: AgentCallOptions = { ...config.defaultOptions, ...callOptions };
  // The run's own view: reads the caller's values, keeps threadId/resourceId and hooks' writes to this run.
  const requestContext = options.requestContext === undefined ? new RequestContext() : RequestContext.readThrough(options.requestContext);
  const memoryCall = options.memory;
  const threadId = memoryCall === undefined ? undefined : typeof memoryCall.thread === 'string' ? memoryCall.thread : memoryCall.thread.id;
  const resourceId = memoryCall?.resource;
  if (threadId !== undefined) requestContext.set('threadId', threadId);
  if (resourceId !== undefined) requestContext.set('resourceId', resourceId);

  // the message list's default (a flat UUID): one function for every run, not a closure per run
  const generateId = config.generateId ?? randomMessageId;
  const now = config.now ?? currentDate;
  const controller = new AbortController();
  const messageList = new MessageList({
    ...(threadId === undefined ? {} : { threadId }),
    ...(resourceId === undefined ? {} : { resourceId }),
    generateId,
    now,
  });
  const dynamic = allMaybe([
    resolveDynamic(config.model, requestContext),
    resolveDynamic(config.tools, requestContext),
    resolveDynamic(config.instructions, requestContext),
    options.inputProcessors ?? resolveDynamic(config.inputProcessors, requestContext),
    options.outputProcessors ?? resolveDynamic(config.outputProcessors, requestContext),
    options.errorProcessors ?? resolveDynamic(config.errorProcessors, requestContext),
  ] as const);
  return thenMaybe(dynamic, ([modelInput, tools, agentInstructions, agentInput, agentOutput, agentError]) => {
    validateResolved({
      tools,
      instructions: options.instructions ?? agentInstructions,
      processors: [
        ['inputProcessors', agentInput],
        ['outputProcessors', agentOutput],
        ['errorProcessors', agentError],
      ],
    });
    const memory =
      config.memory !== undefined && memoryCall !== undefined && threadId !== undefined && resourceId !== undefined
        ? config.memory.processorsFor({ threadId, resourceId, thread: memoryCall.thread, readOnly: memoryCall.readOnly === true, requestContext })
        : noMemoryProcessors;
    return thenMaybe(memory, (memoryProcessors) => {
      const memoryOnTripwire = 'onTripwire' in memoryProcessors ? memoryProcessors.onTripwire : undefined;

      const inputProcessors = [...memoryProcessors.input, ...(agentInput ?? [])];
      const outputProcessors = [...(agentOutput ?? []), ...memoryProcessors.output];
      const errorProcessors = agentError ?? [];
      const { providers } = config;
      // a method, not an arrow: a keepNames build (tsup, tsx) names an arrow with a property write per run
      const { resolve } = {
        resolve(model: Parameters<typeof resolveModel>[0]) {
          return resolveModel(model, providers);
        },
      };
      const stopWhen = stopConditionsOf(options.stopWhen ?? config.stopWhen);
      const runId = options.runId ?? `run_${(++runSequence).toString(36)}_${generateId().slice(0, 8)}`;
      const ctx = createRunContext({
        runId,
        messageList,
        requestContext,
        ...(options.tracingContext === undefined ? {} : { tracingContext: options.tracingContext }),
        abortSignal: controller.signal,
        maxProcessorRetries: options.maxProcessorRetries ?? config.maxProcessorRetries,
        processorTimeoutMs: options.processorTimeoutMs ?? config.processorTimeoutMs,
        resolveModel: resolve,
      });
      assignProcessorIndexes(ctx, [inputProcessors, outputProcessors, errorProcessors]); // each list numbered on its own
      const releaseCallerSignal = followCallerSignal(controller, options.abortSignal);

      messageList.addSystem(toSystemMessages(options.instructions ?? agentInstructions));
      messageList.add(input as Parameters<MessageList['add']>[0], 'input');
      const outlet = new CustomOutlet();
      const outputChain = createOutputChain(outputProcessors, ctx);
      return {
        ctx,
        runId,
        inputProcessors,
        outputProcessors,
        stepProcessors: options.prepareStep ? [...inputProcessors, prepareStepProcessor(options.prepareStep)] : inputProcessors,
        apiErrorProcessors: inputProcessors.concat(outputProcessors, errorProcessors), // exactly their length (three spreads: room for 17)
        defaultApiErrorBudget: errorProcessors.length > 0 ? DEFAULT_API_ERROR_RETRIES : 0,
        model: resolve(modelInput as Parameters<typeof resolveModel>[0]),
        tools,
        toolChoice: options.toolChoice,
        activeTools: options.activeTools,
        providerOptions: options.providerOptions,
        modelSettings: options.modelSettings,
        structuredOutput: options.structuredOutput,
        stopWhen,
        // `stopWhen` replaces the implicit limit (as in the AI SDK); an explicit maxSteps still caps
        maxSteps: options.maxSteps ?? config.maxSteps ?? (stopWhen.length > 0 ? Number.POSITIVE_INFINITY : 5),
        toolConcurrency: config.toolConcurrency ?? 8,
        chain: outputChain.chain,
        rawChain: outputChain.rawChain,
        admit: outputChain.admit,
        openChain: outputChain.open,
        requestedToolCalls: outputChain.requestedToolCalls,
        outlet,
        generateId,
        now,
        threadId,
        resourceId,
        initialSystemMessages: [],
        finish: undefined,
        executesTools: true,
        memoryOnTripwire,
        abortController: controller,
        releaseCallerSignal,
      };
    });
  });
}

/** The release of a run that follows no caller signal (one function for every run). */
function nothingToRelease(): void {}

/**
 * Makes the run's controller abort when the caller's signal does: a listener, removed when the
 * run ends (the returned function) — not `AbortSignal.any`, which in Node 22 leaks ~200 bytes per
 * call on a long-lived caller signal (a server-wide shutdown signal given to every run).
 */
function followCallerSignal(controller: AbortController, caller: AbortSignal | undefined): () => void {
  if (caller === undefined) return nothingToRelease;
  if (caller.aborted) {
    controller.abort(caller.reason);
    return nothingToRelease;
  }
  const onAbort = (): void => controller.abort(caller.reason);
  caller.addEventListener('abort', onAbort, { once: true });
  return () => caller.removeEventListener('abort', onAbort);
}

/**
 * `processOutputResult`, the data chunks it wrote, then `finish` (called when the run commits;
 * without a hook to run, the chunks themselves).
 */
function finalize(env: RunEnvironment): Observable<ChunkType> | ChunkType[] {
  const { ctx } = env;
  // one pass over the steps: the usage of all, the text and last object of those not tripwired
  let usage = emptyUsage();
  let text = '';
  let object: unknown;
  for (const step of ctx.steps) {
    usage = addUsage(usage, step.usage);
    if (step.tripwire !== undefined) continue;
    if (step.text != null) text += step.text;
    if (step.object !== undefined) object = step.object;
  }
  const last = ctx.steps[ctx.steps.length - 1];
  const output: OutputResult = {
    text,
    usage,
    finishReason: last?.finishReason ?? 'other',
    steps: ctx.steps,
    ...(object === undefined ? {} : { object }),
  };
  const written: ChunkType[] = [];
  // a chunk written by writer.custom() since the last phase boundary: streamed and, unless
  // transient, kept in the reply
  // (a method, not an arrow: no keepNames property write per run)
  const { record } = {
    record(chunk: DataChunkType): void {
      written.push(chunk);
      if (chunk.transient !== true) {
        ctx.messageList.add(
          { id: env.generateId(), role: 'assistant', createdAt: env.now(), content: { format: 2, parts: [{ type: chunk.type, data: chunk.data }] } },
          'response',
        );
      }
    },
  };
  if (!hasHook(env.outputProcessors, 'processOutputResult') && !hasHook(env.outputProcessors, 'processOutputStream')) {
    // no hook runs here (the chain is the identity): the chunks waiting, then `finish`, without the stage
    for (const chunk of env.outlet.drain()) record(chunk);
    written.push(finishChunk(env, output));
    return written;
  }
  const stopListening = env.outlet.listen(record);
  return of(output).pipe(
    whenHooked(env.outputProcessors, 'processOutputResult', (processors) => processOutputResult(processors, ctx)),
    tap({ finalize: stopListening }),
    catchError((error: unknown) => {
      stopListening();
      if (TripWire.isInstance(error)) {
        // The reply is blocked: nothing of it is kept (nor saved), and the text is ''.
        const responseIds = ctx.messageList.get.response.db().map((message) => message.id);
        ctx.messageList.removeByIds(responseIds);
      }
      throw error;
    }),
    concatMap((result) => concat(from(written).pipe(env.chain), of(finishChunk(env, result)))),
  );
}

/**
 * The run's `finish`: the processors saw it at the end of the last step's output (see `step.ts`);
 * it goes out as they returned it, carrying the run's result.
 */
function finishChunk(env: RunEnvironment, result: OutputResult): ChunkType {
  const seen = env.finish?.type === 'finish' ? env.finish : makeChunk(env.runId, 'finish', { stepResult: { reason: result.finishReason }, output: { usage: result.usage, text: result.text } });
  const payload = seen.payload;
  return {
    ...seen,
    payload: {
      ...payload,
      stepResult: { ...payload.stepResult, reason: result.finishReason },
      output: { ...payload.output, usage: result.usage, text: result.text, ...(result.object === undefined ? {} : { object: result.object }) },
    },
  };
}

/**
 * Whether `error` (or an error it wraps) says the commit stopped because of the abort: an
 * `AbortError`, or the abort's own reason (stores reject with `signal.reason`, which may be any
 * value the caller gave `abort()`).
 */
function causedByAbort(error: unknown, reason: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4; depth++) {
    if (current === reason) return true;
    if (!(current instanceof Error)) return false;
    if (current.name === 'AbortError') return true;
    current = current.cause;
  }
  return false;
}

/**
 * A tripwired run reports no blocked text: every step's text, reasoning and object are cleared
 * in place (the attempt the tripwire rejected was already blanked whole by the step).
 */
function blankSteps(steps: StepResult[]): void {
  for (const step of steps) {
    step.text = '';
    delete step.reasoningText;
    delete step.object;
  }
}

/**
 * A run of `config` on `input` with `options`: cold, one subscription = one run. Emits
 * `RunOpened` once the run is set up, the chunks (one `start` … one terminal chunk), then
 * `RunEnd` (see `run-events.ts`): results are values of the stream, not side channels.
 */
export function createRun(config: AgentConfig, input: AgentInput, options: AgentCallOptions = {}): Observable<RunItem> {
  return new Observable<RunItem>((subscriber) => {
    try {
      validateRunArguments(config, input, options);
    } catch (error) {
      for (const item of [makeChunk('run', 'start', {}), makeChunk('run', 'error', { error }), runEnd('run', [], emptyUsage())] as RunItem[]) {
        if (subscriber.closed) return;
        subscriber.next(item);
      }
      subscriber.complete();
      return;
    }
    new Sequence<RunItem>(subscriber, new RunState(config, input, options, subscriber)).advance();
  });
}

/**
 * One run's state and its parts, one object (methods, not closures: a keepNames build names each
 * per-run arrow with a property write): the {@link Sequence} of `RunOpened`, the chunks and
 * `RunEnd`, and the options of the chunks' `endWithTerminal` (`runId`, `holdAbort`, `onError`).
 */
class RunState implements SequencePlan<RunItem>, EndWithTerminalOptions {
  /** The caller's signal: an abort ends the run with an `abort` chunk (unless it is committing). */
  readonly abortSignal: AbortSignal | undefined;
  /** `endWithTerminal()` then `closeBrackets()`, in one subscriber. */
  readonly closeBrackets = true;
  /** The run's demand, for a consumer outside the loop (bound to the run's gate once set up). */
  readonly demand = new LateDemand();
  /** The environment, once set up. */
  env: RunEnvironment | undefined;
  /**
   * From here the run commits (processOutputResult, memory's save): an abort no longer cuts it; it
   * ends with `finish` if the commit completes, with `abort` if the commit stopped because of the
   * abort (an AbortError), else with the commit's error.
   */
  committing = false;
  private part = 0;

  constructor(
    private readonly config: AgentConfig,
    private readonly input: AgentInput,
    private readonly options: AgentCallOptions,
    private readonly subscriber: Subscriber<RunItem>,
  ) {
    this.abortSignal = options.abortSignal ?? config.defaultOptions?.abortSignal;
  }

  /** `RunOpened`, the chunks, `RunEnd`. */
  following(): Observable<RunItem> | readonly RunItem[] | undefined {
    switch (this.part++) {
      case 0:
        return [runOpened(this.demand)];
      case 1:
        return this.chunks();
      case 2: {
        const steps = this.env?.ctx.steps ?? [];
        const usage = steps.reduce((total, step) => addUsage(total, step.usage), emptyUsage());
        return [runEnd(this.runId(), steps, usage)];
      }
      default:
        return undefined;
    }
  }

  next(item: RunItem): void {
    this.subscriber.next(item);
  }

  error(error: unknown): void {
    this.subscriber.error(error);
  }

  complete(): void {
    this.subscriber.complete();
  }

  /** The run's chunks: set-up, the body, exactly one terminal chunk; the run's signal aborted at the end. */
  private chunks(): Observable<ChunkType> {
    // (deferred: a set-up that throws is an error of the chunks, ended by `endWithTerminal`)
    return defer(() => this.setUp()).pipe(
      endWithTerminal(this),
      // `finalize`, not `tap({ finalize })`: the same teardown without a subscriber hop per chunk
      whenFinalized(() => {
        const { env, abortSignal } = this;
        if (env !== undefined) {
          env.releaseCallerSignal();
          env.abortController.abort(abortSignal?.aborted === true ? abortSignal.reason : runOver);
        }
      }),
    );
  }

  /** The environment, then the body: a synchronous set-up (the common case) goes straight into it (no concatMap hop per chunk). */
  private setUp(): Observable<ChunkType> {
    const created = createEnvironment(this.config, this.input, this.options);
    return isPromiseLike<RunEnvironment>(created) ? from(created).pipe(concatMap((env) => this.body(env))) : this.body(created);
  }

  /** `start`, `processInput`, the steps, the commit (`finalize`), with `writer.custom()` chunks fed to the outlet meanwhile. */
  private body(env: RunEnvironment): Observable<ChunkType> {
    this.env = env;
    this.demand.bind(demandOf(env.ctx));
    return new Observable<ChunkType>((subscriber) => {
      const customSubscription = env.ctx.custom$.subscribe(env.outlet);
      new Sequence<ChunkType | StepEnd>(subscriber, new BodyPlan(subscriber, env, this)).advance();
      return customSubscription;
    });
  }

  /** The run's id, once known (else the caller's, else `'run'`). */
  runId(): string {
    return this.env?.runId ?? this.options.runId ?? this.config.defaultOptions?.runId ?? 'run';
  }

  holdAbort(): boolean {
    return this.committing;
  }

  /** The terminal chunk for an error of the run (memory's tripwire save first, when it has one). */
  onError(error: unknown, runId: string): Observable<ChunkType> {
    const run = this.env;
    if (run === undefined) return of(makeChunk(runId, 'error', { error }));
    if (TripWire.isInstance(error)) blankSteps(run.ctx.steps);
    const userSignal = this.abortSignal;
    if (this.committing && userSignal?.aborted === true && causedByAbort(error, userSignal.reason)) {
      return of(makeChunk(runId, 'abort', { reason: userSignal.reason as unknown }));
    }
    const save = TripWire.isInstance(error) ? run.memoryOnTripwire : undefined;
    if (save === undefined) return of(terminalChunk(runId, error));
    // memory decides what a tripwired run keeps; a failing save turns the end into an error
    return concat(
      from(save(run.ctx.messageList)).pipe(ignoreElements()),
      defer(() => of(terminalChunk(runId, error))),
    );
  }
}

/**
 * The parts of a run's body: `start`, `processInput` (when hooked), the steps — each step's
 * chunks, then the next step when its {@link StepEnd} says so — and the commit (`finalize`). The
 * steps are parts of this sequence (no sequence of their own, no hop per chunk for them).
 *
 * ```
 * step 0:  --S--K--T--F--(E{continues})|        (modelStep(env, 0))
 * step 1:                 --S--t--F--(E)|
 * body:    --s--S--K--T--F-----S--t--F---f…     (s = start, f = finalize's chunks)
 * ```
 */
class BodyPlan implements SequencePlan<ChunkType | StepEnd> {
  private part: 'start' | 'input' | 'first step' | 'steps' | 'over' = 'start';
  /** The {@link StepEnd} of the step that just ran. */
  private end: StepEnd | undefined;

  constructor(
    private readonly subscriber: Subscriber<ChunkType>,
    private readonly env: RunEnvironment,
    private readonly state: RunState,
  ) {}

  following(): Observable<ChunkType | StepEnd> | readonly ChunkType[] | undefined {
    const { env } = this;
    const { ctx } = env;
    switch (this.part) {
      case 'start':
        this.part = 'input';
        return [makeChunk(env.runId, 'start', {})];
      case 'input':
        this.part = 'first step';
        if (!hasHook(env.inputProcessors, 'processInput')) {
          // no processInput hook: the list stays as it is (no stage subscribed for it)
          env.initialSystemMessages = ctx.messageList.getSystemMessages();
          return [];
        }
        return of(ctx.messageList).pipe(
          processInput(env.inputProcessors, ctx),
          tap(() => {
            env.initialSystemMessages = ctx.messageList.getSystemMessages();
          }),
          ignoreElements(),
        );
      case 'first step':
        this.part = 'steps';
        return modelStep(env, 0);
      case 'steps': {
        const end = this.end;
        this.end = undefined;
        if (end?.continues === true) return modelStep(env, end.nextStepNumber);
        this.part = 'over';
        this.state.committing = true;
        return finalize(env);
      }
      default:
        return undefined;
    }
  }

  next(item: ChunkType | StepEnd): void {
    if (isStepEnd(item)) this.end = item;
    else this.subscriber.next(item);
  }

  error(error: unknown): void {
    this.subscriber.error(error);
  }

  complete(): void {
    this.subscriber.complete();
  }
}
