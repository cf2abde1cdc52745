/**
 * A run's environment: the agent's configuration and the call's options resolved once, at the
 * start of the run — model, tools, processors (function forms get the request context), memory's
 * processors — then the run's state (fresh, with the message list and the input; or restored from a
 * snapshot) and the environment built over it: the run context, the request context, the outlet and
 * the output chain read and write that state. Synchronous unless a dynamic argument or memory returns a promise, so a run on a marble
 * model stays on virtual time.
 */
import { MessageList } from '../../message-list/message-list.js';
import { randomMessageId } from '../../message-list/conversion-options.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import { assignProcessorIndexes, createRunContext } from '../../operators/run-context.js';
import { DEFAULT_API_ERROR_RETRIES } from '../../operators/retry-on-api-error.js';
import { demandOf } from '../../operators/demand.js';
import type { DemandGate } from '../../contract/demand-gate.js';
import { isPromiseLike, thenMaybe, type MaybePromise } from '../../contract/maybe-async.js';
import type { ProcessInputStepArgs, ProcessInputStepResult, Processor } from '../../contract/processor-types.js';
import { asProcessors } from '../../contract/processor-types.js';
import { emptyOverlay, requestContextOver, type RequestContext } from '../../contract/request-context.js';
import type { Observable } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { callModel } from '../../model/stream-model.js';
import { generateCall } from '../../model/generate-call.js';
import { getObservableStream } from '../../model/observable-stream.js';
import type { ModelEvent } from '../../model/model-events.js';
import { hasHook } from '../../contract/has-hook.js';
import { replayCall } from '../../model/replay-call.js';
import { resolveModel } from '../../model/resolve-model.js';
import type { MessageList as MessageListType } from '../../message-list/message-list.js';
import type { AgentCallOptions, AgentConfig, AgentInput, AgentInstructions, DynamicArgument, PrepareStepFunction } from '../agent-types.js';
import { createOutputChain } from '../step/output-chain.js';
import { prepareAttempt } from '../step/request.js';
import type { StepEnvironment } from '../step/step-environment.js';
import { CustomOutlet } from '../data/custom-outlet.js';
import { createRunState, type RunState } from '../data/run-state.js';
import type { Position } from '../data/run-position.js';
import { restoreRun } from '../data/run-snapshot.js';
import type { RunSources } from '../data/run-sources.js';
import { stopConditionsOf } from '../step/stop-condition.js';
import { validateModelSettings, validateResolved } from './validate-options.js';
import { readCallSettings } from '../../contract/call-settings-check.js';
import type { RunDurability } from '../data/run-durability.js';

/** A run's environment: what its steps need (`StepEnvironment`) and the run's own services. */
export interface RunEnvironment extends StepEnvironment {
  /** The caller's `abortSignal`: its abort ends the run with an `abort` chunk (unless the run is committing). */
  readonly callerSignal: AbortSignal | undefined;
  /** Aborted when the run ends (unsubscribe, abort, end): the signal hooks and tools receive. */
  readonly abortController: AbortController;
  /** Stops following the caller's `abortSignal` and taking `writer.custom()` chunks (called when the run ends). */
  readonly release: () => void;
  /** Memory's save for runs that end in a tripwire. */
  readonly memoryOnTripwire: ((messageList: MessageListType) => Promise<void>) | undefined;
  /** Whether the run's `finish` went out (the commit subscribed to it): `endRun` tells the run's signal so (`RUN_FINISHED`). */
  finishSent: boolean;
  /**
   * Makes the run's `generateId` (the message list's, the run context's, `env.generateId`) hand out
   * `source`'s ids from now on; `undefined` gives it back to the configured generator. A durable
   * run's commit sets ids every owner derives the same (`commitMessageIds`) while it runs.
   */
  readonly useIds: (source: (() => string) | undefined) => void;
}

/**
 * The run's id generator: `configured`'s ids, or, while one is set (`use`), another source's — one
 * function for everything that makes ids in the run, so a switch reaches them all.
 */
function runIds(configured: () => string): { readonly generateId: () => string; readonly use: (source: (() => string) | undefined) => void } {
  let current = configured;
  return {
    generateId: () => current(),
    use: (source) => {
      current = source ?? configured;
    },
  };
}

/** A run, set up: its environment, its state, and where it starts (`input`, or where its snapshot stands). */
export interface RunSetUp {
  readonly env: RunEnvironment;
  readonly state: RunState;
  readonly position: Position;
}

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

/** How `prepareStep`'s settings are named in its option error. */
const PREPARE_STEP_SETTINGS = 'prepareStep().modelSettings';

/**
 * What `prepareStep` returned, with the settings it gave the step — returned, or edited in its
 * `modelSettings` argument — read once and checked by a call's `modelSettings` rules: it is the
 * caller's option, so failing them is the option error a call's own `modelSettings` gets (a
 * `TypeError` naming `prepareStep().modelSettings.<field>`), not a processor's.
 */
function withCheckedSettings(result: ProcessInputStepResult | undefined | void, args: ProcessInputStepArgs): ProcessInputStepResult | undefined | void {
  if (typeof result === 'object' && result !== null && !Array.isArray(result) && 'modelSettings' in result) {
    const own = readCallSettings(result.modelSettings);
    validateModelSettings(own, PREPARE_STEP_SETTINGS);
    return { ...result, modelSettings: own as ProcessInputStepResult['modelSettings'] };
  }
  validateModelSettings(readCallSettings(args.modelSettings), PREPARE_STEP_SETTINGS);
  return result;
}

/** `prepareStep` as the last `processInputStep` of each step (its settings checked as an option's). */
function prepareStepProcessor(prepareStep: PrepareStepFunction): Processor<'prepare-step'> {
  return { id: 'prepare-step', processInputStep: (args) => thenMaybe(prepareStep(args), (result) => withCheckedSettings(result, args)) };
}

/**
 * A model call for a run nothing streams: through `doGenerate` (one answer, no web stream); through
 * `doStream` for a model without `doGenerate` or one that streams on virtual time (`OBSERVABLE_STREAM`).
 */
function answerCall(model: LanguageModelV4, options: LanguageModelV4CallOptions, demand: DemandGate): Observable<ModelEvent> {
  return typeof model.doGenerate !== 'function' || getObservableStream(model) !== undefined ? callModel(model, options, demand) : generateCall(model, options);
}

/** The default clock. */
function currentDate(): Date {
  return new Date();
}

/** The release of a run that follows no caller signal. */
function nothingToRelease(): void {}

/**
 * Makes the run's controller abort when the caller's signal does: a listener, removed when the
 * run ends (the returned function) — not `AbortSignal.any`, for a long-lived caller signal (a
 * server-wide shutdown signal given to every run; bench/README.md, house rules).
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
 * Sets up a run of `config` on `input` with `options` (the agent's defaults under them): its
 * environment and its state — a fresh one, or the state of `wiring.restore` (its run id is the
 * snapshot's; its request-context overlay, over the caller's context, replaces the one the
 * configuration was resolved with). `demand` is the run's demand gate (made before, to hand to consumers).
 * `wiring.folded`: the run is folded into one result (`generate()`), so its model calls may go
 * through `doGenerate` when no output processor reads the stream (`generateWith`).
 */
export function createEnvironment(
  config: AgentConfig,
  input: AgentInput,
  callOptions: AgentCallOptions,
  demand: DemandGate,
  wiring: RunDurability & { readonly folded?: boolean } = {},
): MaybePromise<RunSetUp> {
  const durability: RunDurability = wiring;
  const options: AgentCallOptions = { ...config.defaultOptions, ...callOptions };
  // The run's own view: reads the caller's values, keeps threadId/resourceId and hooks' writes to this run (in the state's overlay).
  const overlay = emptyOverlay();
  const requestContext = requestContextOver(options.requestContext, overlay);
  const memoryCall = options.memory;
  const threadId = memoryCall === undefined ? undefined : typeof memoryCall.thread === 'string' ? memoryCall.thread : memoryCall.thread.id;
  const resourceId = memoryCall?.resource;
  if (threadId !== undefined) requestContext.set('threadId', threadId);
  if (resourceId !== undefined) requestContext.set('resourceId', resourceId);

  const ids = runIds(config.generateId ?? randomMessageId);
  const { generateId } = ids;
  const now = config.now ?? currentDate;
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
        ? config.memory.processorsFor({
            threadId,
            resourceId,
            thread: memoryCall.thread,
            readOnly: memoryCall.readOnly === true,
            requestContext,
            ...(durability.memoryFence === undefined ? {} : { fence: durability.memoryFence }),
          })
        : noMemoryProcessors;
    return thenMaybe(memory, (memoryProcessors): RunSetUp => {
      const inputProcessors = [...memoryProcessors.input, ...asProcessors(agentInput ?? [])];
      const outputProcessors = [...asProcessors(agentOutput ?? []), ...memoryProcessors.output];
      const errorProcessors = asProcessors(agentError ?? []);
      const call = wiring.folded === true && options.generateWith !== 'doStream' && !hasHook(outputProcessors, 'processOutputStream') ? answerCall : callModel;
      const { providers } = config;
      const resolve = providers === undefined ? resolveModel : (model: Parameters<typeof resolveModel>[0]) => resolveModel(model, providers);
      const stopWhen = stopConditionsOf(options.stopWhen ?? config.stopWhen);
      const stepDefaults: RunSources['stepDefaults'] = {
        model: resolve(modelInput as Parameters<typeof resolveModel>[0]),
        ...(tools === undefined ? {} : { tools }),
        ...(options.toolChoice === undefined ? {} : { toolChoice: options.toolChoice }),
        ...(options.activeTools === undefined ? {} : { activeTools: options.activeTools }),
        ...(options.providerOptions === undefined ? {} : { providerOptions: options.providerOptions }),
        ...(options.modelSettings === undefined ? {} : { modelSettings: options.modelSettings }),
        ...(options.structuredOutput === undefined ? {} : { structuredOutput: options.structuredOutput }),
      };
      const apiErrorProcessors = inputProcessors.concat(outputProcessors, errorProcessors);
      const snapshot = durability.restore;
      const restored =
        snapshot === undefined ? undefined : restoreRun(snapshot, { inputProcessors, outputProcessors, apiErrorProcessors, generateId, now, stepDefaults });
      const state = restored?.state ?? createRunState(options.runId ?? generateId(), messageList, overlay);
      const { runId } = state;
      const controller = new AbortController();
      const ctx = createRunContext({
        runId,
        state,
        demand,
        generateId,
        now,
        requestContext: restored === undefined ? requestContext : requestContextOver(options.requestContext, state.requestContext),
        ...(options.tracingContext === undefined ? {} : { tracingContext: options.tracingContext }),
        abortSignal: controller.signal,
        maxProcessorRetries: options.maxProcessorRetries ?? config.maxProcessorRetries,
        processorTimeoutMs: options.processorTimeoutMs ?? config.processorTimeoutMs,
        resolveModel: resolve,
      });
      assignProcessorIndexes(ctx, [inputProcessors, outputProcessors, errorProcessors]); // each list numbered on its own
      // before anything the run must release: an invalid input throws here (a restored run has its list)
      if (restored === undefined) {
        messageList.addSystem(toSystemMessages(options.instructions ?? agentInstructions));
        messageList.add(input as Parameters<MessageList['add']>[0], 'input');
      }
      const callerSignal = options.abortSignal;
      const releaseCallerSignal = followCallerSignal(controller, callerSignal);
      const outlet = new CustomOutlet(state);
      // `writer.custom()` outside processOutputStream: into the outlet (drained at the next phase) until the run ends
      const listening = ctx.custom$.subscribe((chunk) => outlet.push(chunk));
      const env: RunEnvironment = {
        ctx,
        runId,
        inputProcessors,
        outputProcessors,
        stepProcessors: options.prepareStep ? [...inputProcessors, prepareStepProcessor(options.prepareStep)] : inputProcessors,
        apiErrorProcessors,
        defaultApiErrorBudget: errorProcessors.length > 0 ? DEFAULT_API_ERROR_RETRIES : 0,
        chain: createOutputChain(outputProcessors, ctx),
        outlet,
        stepDefaults,
        model: {
          prepare: (attempt, feedback) => prepareAttempt(env, attempt, feedback),
          call: (_attempt, { request, callOptions, stepInput }) =>
            request.response !== undefined
              ? replayCall(request.response)
              : call(
                  stepInput.model,
                  // the request's prompt (a processLLMRequest hook may have replaced it); the options as built when it did not
                  request.prompt === callOptions.prompt ? callOptions : { ...callOptions, prompt: request.prompt },
                  demandOf(ctx),
                ),
        },
        generateId,
        now,
        threadId,
        resourceId,
        stopWhen,
        // `stopWhen` replaces the implicit limit (as in the AI SDK); an explicit maxSteps still caps
        maxSteps: options.maxSteps ?? config.maxSteps ?? (stopWhen.length > 0 ? Number.POSITIVE_INFINITY : 5),
        toolConcurrency: config.toolConcurrency ?? 8,
        executesTools: true,
        durability,
        callerSignal,
        abortController: controller,
        release: () => {
          listening.unsubscribe();
          releaseCallerSignal();
        },
        memoryOnTripwire: 'onTripwire' in memoryProcessors ? memoryProcessors.onTripwire : undefined,
        finishSent: false,
        useIds: ids.use,
      };
      return { env, state, position: restored?.position ?? { kind: 'input' } };
    });
  });
}
