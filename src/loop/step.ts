/**
 * One step of the loop as an Observable: `processInputStep` (+ `prepareStep`) → prompt →
 * `processLLMRequest` → model call (or cache replay) → `processOutputStream` per chunk →
 * `processLLMResponse` → `processOutputStep` → tools (+ `processToolResult`) → `step-finish`.
 * Chunks stream live. A rejected attempt (tripwire with retry, or an API error a processor
 * recovers) is rolled back and the step re-runs: `retryOnTripwire` / `retryOnAPIError`.
 */
import {
  EMPTY,
  Observable,
  catchError,
  concat,
  concatMap,
  defer,
  filter,
  finalize,
  from,
  ignoreElements,
  map,
  of,
  tap,
  throwError,
  type MonoTypeOperatorFunction,
} from 'rxjs';
import type { LanguageModelV4CallOptions, LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { StepBoundary } from '../message-list/step-boundary.js';
import { runProcessInputStep, type StepInput } from '../operators/process-input-step.js';
import { runProcessLLMRequest, type LLMRequest } from '../operators/process-llm-request.js';
import { runProcessLLMResponse } from '../operators/process-llm-response.js';
import { runProcessOutputStep } from '../operators/process-output-step.js';
import { retryOnAPIError } from '../operators/retry-on-api-error.js';
import { retryOnTripwire } from '../operators/retry-on-tripwire.js';
import { toObservable } from '../processor/to-observable.js';
import { thenMaybe, type MaybePromise } from '../processor/maybe-async.js';
import { runProcessToolResult } from '../operators/process-tool-result.js';
import type { ChunkType, TripwirePayload } from '../processor/chunk-types.js';
import { TripWire } from '../processor/errors/trip-wire.js';
import type { StepResult } from '../processor/processor-types.js';
import type { ModelResponseMeta } from '../model/stream-model.js';
import { modelChunks } from '../model/model-chunks.js';
import { demandOf } from '../operators/demand.js';
import { ModelCallFailure, providerError } from '../model/model-call-failure.js';
import { newStepFacts, toolCallIdsIn, type ModelStepFacts } from '../model/model-part-to-chunk.js';
import type { RunEnvironment } from './run-environment.js';
import { StepAccumulator } from './step-accumulator.js';
import { stepFinishChunk, stepStartChunk } from './step-chunks.js';
import { prepareToolChoice, prepareTools } from './tools/prepare-tools.js';
import { toolPhase } from './tools/tool-phase.js';
import { structuredResponseFormat, validateStructuredOutput, withPartialObjects } from './structured-output.js';
import { addUsage, emptyUsage } from '../model/usage.js';
import { makeChunk } from '../processor/make-chunk.js';
import { recordToolCalls } from './output-chain.js';

/** One attempt at a step. */
interface Attempt {
  readonly stepNumber: number;
  readonly messageId: string;
  readonly accumulator: StepAccumulator;
  readonly facts: ModelStepFacts;
  boundary: StepBoundary | undefined;
  /** The `step-start` chunk went out. */
  opened: boolean;
  /** The StepResult pushed to `ctx.steps`. */
  recorded: StepResult | undefined;
  stepInput: StepInput | undefined;
  fromCache: boolean;
  meta: ModelResponseMeta;
  /** In the pre-model hooks (`processInputStep`, `processLLMRequest`): a tripwire there cannot retry. */
  preModel: boolean;
}

/** The tripwire payload of a `TripWire`. */
export function tripwirePayload(tripwire: TripWire): TripwirePayload {
  return {
    reason: tripwire.reason,
    retry: tripwire.retry,
    ...(tripwire.metadata === undefined ? {} : { metadata: tripwire.metadata }),
    processorId: tripwire.processorId ?? 'unknown',
  };
}

function stepResultOf(attempt: Attempt, tripwire?: TripwirePayload): StepResult {
  const { accumulator, facts } = attempt;
  return {
    stepNumber: attempt.stepNumber,
    text: accumulator.text,
    ...(accumulator.reasoningText ? { reasoningText: accumulator.reasoningText } : {}),
    toolCalls: accumulator.toolCalls,
    toolResults: accumulator.toolResults,
    finishReason: tripwire ? 'other' : facts.finishReason,
    usage: facts.usage,
    warnings: facts.warnings,
    ...(facts.providerMetadata ? { providerMetadata: facts.providerMetadata } : {}),
    ...(tripwire ? { tripwire } : {}),
    response: { ...facts.response, messageId: attempt.messageId },
  };
}

/**
 * Records a rejected attempt in `steps` with its tripwire and none of its content: a blocked
 * attempt's text, reasoning and tool calls are reported nowhere.
 */
function recordRejection(env: RunEnvironment, attempt: Attempt, error: unknown): void {
  if (!TripWire.isInstance(error)) return;
  const payload = tripwirePayload(error);
  if (attempt.recorded === undefined) {
    if (!attempt.opened) return;
    attempt.recorded = stepResultOf(attempt, payload);
    env.ctx.steps.push(attempt.recorded);
  }
  blankStep(attempt.recorded, payload);
}

/** Clears what a blocked step said (in place: processors hold `steps`), keeping its usage and facts. */
export function blankStep(step: StepResult, tripwire: TripwirePayload): void {
  step.tripwire = tripwire;
  step.text = '';
  delete step.reasoningText;
  step.toolCalls = [];
  step.toolResults = [];
  delete step.object;
  step.finishReason = 'other';
}

function replayCachedChunks(env: RunEnvironment, chunks: ReadonlyArray<{ type: string; payload?: unknown; data?: unknown }>): Observable<ChunkType> {
  return from(chunks).pipe(
    map((cached): ChunkType =>
      cached.type.startsWith('data-')
        ? ({ type: cached.type as `data-${string}`, data: cached.data } as ChunkType)
        : ({ type: cached.type, runId: env.runId, from: 'AGENT', payload: cached.payload } as ChunkType),
    ),
  );
}

function retryFeedbackPrompt(prompt: LanguageModelV4Prompt, feedback: string | undefined): LanguageModelV4Prompt {
  if (feedback === undefined) return prompt;
  return [...prompt, { role: 'user', content: [{ type: 'text', text: feedback }], providerOptions: { rxagent: { retryFeedback: true } } }];
}

/** The tools and response format of a request: a promise only when a schema to convert is (structured output, an async JSON schema). */
function requestExtras(stepInput: StepInput): MaybePromise<[Awaited<ReturnType<typeof prepareTools>>, Pick<LanguageModelV4CallOptions, 'responseFormat'>]> {
  const structured = stepInput.structuredOutput !== undefined && stepInput.structuredOutput.model === undefined;
  if (stepInput.tools === undefined && !structured) return [undefined, {}];
  if (!structured) return thenMaybe(prepareTools(stepInput.tools, stepInput.activeTools), (tools) => [tools, {}]);
  return Promise.all([prepareTools(stepInput.tools, stepInput.activeTools), structuredResponseFormat(stepInput)]);
}

/**
 * Builds the prompt and call options, then runs `processLLMRequest`. Synchronous when nothing is
 * async (no tools or schema to convert, synchronous hooks): a run can stay on virtual time.
 */
function prepareRequest(env: RunEnvironment, stepInput: StepInput, feedback: string | undefined): MaybePromise<{ request: LLMRequest; callOptions: LanguageModelV4CallOptions }> {
  const prompt = retryFeedbackPrompt(env.ctx.messageList.get.all.prompt(), feedback);
  const settings = stepInput.modelSettings ?? {};
  return thenMaybe(requestExtras(stepInput), ([tools, responseFormat]) => {
    const toolChoice = tools === undefined ? undefined : prepareToolChoice(stepInput.toolChoice);
    const callOptions: LanguageModelV4CallOptions = {
      prompt,
      ...(settings.maxOutputTokens === undefined ? {} : { maxOutputTokens: settings.maxOutputTokens }),
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
      ...(settings.topP === undefined ? {} : { topP: settings.topP }),
      ...(settings.topK === undefined ? {} : { topK: settings.topK }),
      ...(settings.presencePenalty === undefined ? {} : { presencePenalty: settings.presencePenalty }),
      ...(settings.frequencyPenalty === undefined ? {} : { frequencyPenalty: settings.frequencyPenalty }),
      ...(settings.stopSequences === undefined ? {} : { stopSequences: settings.stopSequences }),
      ...(settings.seed === undefined ? {} : { seed: settings.seed }),
      ...(settings.headers === undefined ? {} : { headers: settings.headers }),
      ...(tools === undefined ? {} : { tools }),
      ...(toolChoice === undefined ? {} : { toolChoice }),
      ...(stepInput.providerOptions === undefined ? {} : { providerOptions: stepInput.providerOptions }),
      ...responseFormat,
      abortSignal: env.ctx.abortSignal,
    };
    return thenMaybe(
      runProcessLLMRequest(env.inputProcessors, env.ctx, {
        prompt,
        model: stepInput.model,
        stepNumber: stepInput.stepNumber,
        ...(stepInput.modelSettings === undefined ? {} : { modelSettings: stepInput.modelSettings }),
      }),
      (request) => ({ request, callOptions }),
    );
  });
}

/**
 * `processToolResult` on the results of provider-executed tools (web search, web fetch, hosted
 * MCP) before they stream or are stored: the chunk carries the processed result. Identity when no
 * output processor has the hook.
 */
function providerToolResults(env: RunEnvironment, stepNumber: number): MonoTypeOperatorFunction<ChunkType> {
  if (!env.outputProcessors.some((processor) => typeof processor.processToolResult === 'function')) return (chunks$) => chunks$;
  // a provider error waits for the hooks of the results before it (a hook that throws fails closed first)
  return (chunks$) =>
    chunks$.pipe(
      catchError((error: unknown) => of(new SourceError(error))),
      concatMap((item) => (item instanceof SourceError ? throwError(() => item.error) : processProviderResult(env, stepNumber, item))),
    );
}

/** A source error carried in order behind the chunks before it. */
class SourceError {
  constructor(readonly error: unknown) {}
}

function processProviderResult(env: RunEnvironment, stepNumber: number, chunk: ChunkType): Observable<ChunkType> {
  if (chunk.type !== 'tool-result' || chunk.payload.providerExecuted !== true) return of(chunk);
  const { payload } = chunk;
  return defer(() => {
    // the step's message is built when the stream ends: while the hooks run, the call stands in
    // the list on its own (so `messageList.updateToolInvocation` can replace the result), then leaves
    const standIn = env.generateId();
    env.ctx.messageList.add(
      {
        id: standIn,
        role: 'assistant',
        createdAt: env.now(),
        content: {
          format: 2,
          parts: [
            {
              type: 'tool-invocation',
              toolInvocation: { state: 'call', toolCallId: payload.toolCallId, toolName: payload.toolName, args: payload.args },
              providerExecuted: true,
            },
          ],
        },
      },
      'response',
    );
    return toObservable(
      runProcessToolResult(env.outputProcessors, env.ctx, {
        stepNumber,
        toolName: payload.toolName,
        toolCallId: payload.toolCallId,
        args: payload.args,
        result: payload.result,
        providerExecuted: true,
      }),
    ).pipe(
      map((event): ChunkType => (event.result === payload.result ? chunk : { ...chunk, payload: { ...payload, result: event.result } })),
      finalize(() => env.ctx.messageList.removeByIds([standIn])),
    );
  });
}

function modelPhase(env: RunEnvironment, attempt: Attempt, request: LLMRequest, callOptions: LanguageModelV4CallOptions): Observable<ChunkType> {
  const stepInput = attempt.stepInput as StepInput;
  let content$: Observable<ChunkType>;
  if (request.response !== undefined) {
    attempt.fromCache = true;
    attempt.facts.finishReason = 'stop';
    content$ = replayCachedChunks(env, request.response.chunks).pipe(
      tap((chunk) => {
        if (chunk.type === 'tool-call') attempt.facts.finishReason = 'tool-calls';
      }),
    );
    attempt.meta = {
      ...(request.response.warnings ? { warnings: request.response.warnings } : {}),
      ...(request.response.request === undefined ? {} : { request: request.response.request as { body?: unknown } }),
    };
  } else {
    // one fused hop per part (convert, drop fact-only parts, wrap failures); pulled on demand
    content$ = modelChunks(
      stepInput.model,
      { ...callOptions, prompt: request.prompt },
      (meta: ModelResponseMeta) => {
        attempt.meta = meta;
      },
      env.runId,
      attempt.facts,
      demandOf(env.ctx),
    );
  }
  env.requestedToolCalls?.clear();
  return concat(
    of<ChunkType>(stepStartChunk(env.runId, attempt.stepNumber, attempt.messageId)),
    defer(() => from(env.outlet.drain())),
    content$.pipe(recordToolCalls(env.requestedToolCalls), providerToolResults(env, attempt.stepNumber)),
  ).pipe(
    env.rawChain,
    // the fence (what processors may not invent) fused with the accumulation: one hop per chunk
    filter((chunk) => admitToStep(env, attempt, chunk)),
    stepInput.structuredOutput !== undefined && stepInput.structuredOutput.model === undefined
      ? withPartialObjects(env.runId, attempt.accumulator)
      : (chunks$) => chunks$,
  );
}

/** The fence (what processors may not invent) and the step's accumulation of what passed. */
function admitToStep(env: RunEnvironment, attempt: Attempt, chunk: ChunkType): boolean {
  if (env.admit !== undefined && !env.admit(chunk)) return false;
  if (chunk.type === 'step-start') attempt.opened = true;
  else attempt.accumulator.observe(chunk);
  return true;
}

/** Whether the step's client tool calls all run here and another step may follow. */
function continuesAfter(env: RunEnvironment, attempt: Attempt): boolean {
  const clientCalls = attempt.accumulator.toolCalls.filter((call) => !call.providerExecuted);
  const tools = attempt.stepInput?.tools;
  const executable = clientCalls.every((call) => typeof tools?.[call.toolName]?.execute === 'function' || tools?.[call.toolName] === undefined);
  return clientCalls.length > 0 && executable && attempt.stepNumber + 1 < env.maxSteps;
}

/**
 * The end of the run's output, as the output processors see it: in the last step, once the model
 * output (and the tools it ran) passed them, the `finish` chunk goes through the chain — before
 * the step's message is built when no tool runs — so a processor that holds text back until
 * `finish` (a guard matching across text blocks, the specification's word counter) releases it
 * into the stored reply, `processLLMResponse`, `processOutputStep` and `steps`. What the chain
 * returns for it is emitted now; the `finish` it returns is kept (`env.finish`) and goes out last,
 * after `processOutputResult`, carrying the run's result. A step that continues sends nothing.
 */
function endOfOutput(env: RunEnvironment, attempt: Attempt, afterTools: boolean): Observable<ChunkType> {
  return defer(() => {
    if (continuesAfter(env, attempt)) return EMPTY;
    const runsTools = attempt.accumulator.toolCalls.some((call) => !call.providerExecuted);
    if (runsTools !== afterTools) return EMPTY;
    const accepted = env.ctx.steps.filter((step) => step.tripwire === undefined);
    const provisional = makeChunk(env.runId, 'finish', {
      stepResult: { reason: attempt.facts.finishReason },
      output: {
        usage: accepted.reduce((total, step) => addUsage(total, step.usage), attempt.facts.usage),
        text: accepted.map((step) => step.text).join('') + attempt.accumulator.text,
      },
    });
    env.finish = undefined;
    return of(provisional).pipe(
      env.rawChain,
      filter((chunk) => {
        if (chunk.type === 'finish') {
          env.finish ??= chunk;
          return false;
        }
        return admitToStep(env, attempt, chunk);
      }),
      tap({
        complete: () => {
          env.finish ??= provisional;
        },
      }),
    );
  });
}

/** After the model stream: store the response, `processLLMResponse`, `processOutputStep`. */
function afterModel(env: RunEnvironment, attempt: Attempt): Observable<never> {
  return defer(() => {
    const { ctx } = env;
    const message = attempt.accumulator.buildMessage(attempt.messageId, env.now(), env.threadId, env.resourceId);
    if (message !== undefined) ctx.messageList.add(message, 'response');
    attempt.accumulator.onLatePart = (part) =>
      ctx.messageList.add(
        { id: env.generateId(), role: 'assistant', createdAt: env.now(), content: { format: 2, parts: [part] } },
        'response',
      );
    const stepResult = stepResultOf(attempt);
    attempt.recorded = stepResult;
    ctx.steps.push(stepResult);
    const stepInput = attempt.stepInput as StepInput;
    return concat(
      stepInput.structuredOutput === undefined || stepInput.structuredOutput.model !== undefined
        ? EMPTY
        : defer(() => from(validateStructuredOutput(stepInput, attempt.accumulator, stepResult))),
      defer(() =>
        toObservable(
          runProcessLLMResponse(env.inputProcessors, ctx, {
            // built only when a processLLMResponse hook reads it
            get chunks() {
              return [...attempt.accumulator.compact];
            },
            model: stepInput.model,
            stepNumber: attempt.stepNumber,
            fromCache: attempt.fromCache,
            warnings: attempt.facts.warnings,
            request: attempt.meta.request,
            rawResponse: attempt.meta.response,
          }),
        ),
      ),
      defer(() =>
        toObservable(
          runProcessOutputStep(env.outputProcessors, ctx, {
            stepNumber: attempt.stepNumber,
            finishReason: attempt.facts.finishReason,
            ...(attempt.facts.providerMetadata ? { providerMetadata: attempt.facts.providerMetadata } : {}),
            toolCalls: attempt.accumulator.toolCalls,
            text: attempt.accumulator.text,
            usage: attempt.facts.usage,
          }),
        ),
      ),
    ).pipe(ignoreElements());
  });
}

function finishStep(env: RunEnvironment, attempt: Attempt): Observable<ChunkType> {
  return defer(() => {
    const accumulator = attempt.accumulator;
    env.continueLoop = continuesAfter(env, attempt);
    const chunk = stepFinishChunk(env.runId, {
      stepNumber: attempt.stepNumber,
      messageId: attempt.messageId,
      reason: attempt.facts.finishReason,
      rawReason: attempt.facts.rawFinishReason,
      isContinued: env.continueLoop,
      text: accumulator.text,
      toolCalls: accumulator.toolCalls,
      usage: attempt.facts.usage,
      warnings: attempt.facts.warnings,
      response: attempt.facts.response,
    });
    const objectResult: ChunkType[] =
      attempt.recorded?.object === undefined ? [] : [makeChunk(env.runId, 'object-result', { object: attempt.recorded.object })];
    return from<ChunkType[]>([...objectResult, chunk]).pipe(env.chain);
  });
}

function runAttempt(env: RunEnvironment, attempt: Attempt, feedback: string | undefined): Observable<ChunkType> {
  const { ctx } = env;
  const prelude$ = defer(() => {
    ctx.stepNumber = attempt.stepNumber;
    attempt.preModel = true;
    attempt.boundary = ctx.messageList.openStepBoundary();
    ctx.messageList.replaceAllSystemMessages(env.initialSystemMessages);
    const stepInput: StepInput = {
      stepNumber: attempt.stepNumber,
      model: env.model,
      ...(env.tools === undefined ? {} : { tools: env.tools }),
      ...(env.toolChoice === undefined ? {} : { toolChoice: env.toolChoice }),
      ...(env.activeTools === undefined ? {} : { activeTools: env.activeTools }),
      ...(env.providerOptions === undefined ? {} : { providerOptions: env.providerOptions }),
      ...(env.modelSettings === undefined ? {} : { modelSettings: env.modelSettings }),
      ...(env.structuredOutput === undefined ? {} : { structuredOutput: env.structuredOutput }),
    };
    return toObservable(runProcessInputStep(env.stepProcessors, ctx, stepInput));
  }).pipe(
    concatMap((stepInput) => {
      attempt.stepInput = stepInput;
      return toObservable(prepareRequest(env, stepInput, feedback));
    }),
  );
  return prelude$.pipe(
    concatMap(({ request, callOptions }) => {
      // past the pre-model hooks: from here a tripwire may ask for a retry
      attempt.preModel = false;
      return concat(
        modelPhase(env, attempt, request, callOptions),
        endOfOutput(env, attempt, false),
        afterModel(env, attempt),
        defer(() => toolPhase(env, attempt.stepNumber, attempt.accumulator, attempt.stepInput?.tools)),
        endOfOutput(env, attempt, true),
        finishStep(env, attempt),
      );
    }),
  );
}

/**
 * Step `stepNumber` as an Observable of chunks, with tripwire and API-error retries.
 *
 * ```
 * attempt 1:  --S--t--t--#                      (# = TripWire { retry: true } from processOutputStep)
 * result:     --S--t--t--F(retry)--S--t--F--|   (F = step-finish; the rejected attempt is rolled back)
 * ```
 */
export function runStep(env: RunEnvironment, stepNumber: number): Observable<ChunkType> {
  let previous: Attempt | undefined;
  let previousError: unknown;
  const attempt$ = defer(() => {
    const lead: ChunkType[] = [];
    let feedback: string | undefined;
    // a tripwire retry is a step of its own (the next number, counted by maxSteps); an API-error
    // retry repeats the attempt's number (the failed attempt is not a step)
    const number = previous === undefined ? stepNumber : TripWire.isInstance(previousError) ? previous.stepNumber + 1 : previous.stepNumber;
    if (previous !== undefined) {
      if (previous.boundary !== undefined) env.ctx.messageList.rollbackToStepBoundary(previous.boundary);
      if (previous.opened) {
        const tripwire = TripWire.isInstance(previousError) ? tripwirePayload(previousError) : undefined;
        for (const id of previous.accumulator.openTextIds) lead.push(makeChunk(env.runId, 'text-end', { id }));
        for (const id of previous.accumulator.openReasoningIds) lead.push(makeChunk(env.runId, 'reasoning-end', { id }));
        lead.push(
          stepFinishChunk(env.runId, {
            stepNumber: previous.stepNumber,
            messageId: previous.messageId,
            reason: 'retry',
            isContinued: true,
            text: '',
            toolCalls: [],
            usage: previous.facts.usage,
            ...(tripwire ? { tripwire } : {}),
          }),
        );
      }
      if (TripWire.isInstance(previousError)) feedback = previousError.reason;
      env.finish = undefined; // a rejected attempt's end of output is not the run's
    }
    const attempt: Attempt = {
      stepNumber: number,
      messageId: env.generateId(),
      accumulator: new StepAccumulator({
        keepChunks: env.inputProcessors.some((processor) => typeof processor.processLLMResponse === 'function'),
      }),
      facts: newStepFacts(emptyUsage(), () => toolCallIdsIn(env.ctx.messageList.get.all.db())),
      boundary: undefined,
      opened: false,
      recorded: undefined,
      stepInput: undefined,
      fromCache: false,
      meta: {},
      preModel: false,
    };
    previous = attempt;
    const body$ = runAttempt(env, attempt, feedback).pipe(
      catchError((error: unknown) => {
        previousError = error;
        recordRejection(env, attempt, error);
        return throwError(() => error);
      }),
    );
    return lead.length === 0 ? body$ : concat(from(lead).pipe(env.chain), body$);
  });
  return attempt$.pipe(
    retryOnAPIError<ChunkType>(env.apiErrorProcessors, env.ctx, {
      isAPIError: (error) => error instanceof ModelCallFailure,
      toAPIError: providerError,
      defaultBudget: env.defaultApiErrorBudget,
    }),
    retryOnTripwire<ChunkType>(env.ctx, {
      // a retry request from a hook before the model is a plain abort; a retry needs a step left
      shouldRetry: () => previous !== undefined && !previous.preModel && previous.stepNumber + 1 < env.maxSteps,
    }),
  );
}

/** The steps from `stepNumber` on: each next step starts when the previous asked for it. */
export function runSteps(env: RunEnvironment, stepNumber = 0): Observable<ChunkType> {
  return concat(
    runStep(env, stepNumber),
    defer(() => (env.continueLoop ? runSteps(env, env.ctx.stepNumber + 1) : EMPTY)),
  );
}
