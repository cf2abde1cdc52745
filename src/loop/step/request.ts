/**
 * An attempt's request: `processInputStep` (+ `prepareStep`) on the step's defaults, the prompt
 * from the run's list (plus a rejected attempt's feedback), the call options from the step input,
 * the tools and response format converted, then `processLLMRequest`.
 */
import { Observable, concatMap, isObservable, map, of } from 'rxjs';
import type { LanguageModelV4CallOptions, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { processInputStep, type StepInput } from '../../operators/process-input-step.js';
import { processLLMRequest, withPendingSignals, type LLMRequest } from '../../operators/process-llm-request.js';
import { sentCallOptions } from '../../contract/sent-call-options.js';
import { isPromiseLike, thenMaybe, type MaybePromise } from '../../contract/maybe-async.js';
import { hasHook } from '../../contract/has-hook.js';
import { toObservable } from '../../contract/to-observable.js';
import { prepareToolChoice, prepareTools } from '../tools/prepare-tools.js';
import { activeToolSet } from '../tools/active-tools.js';
import { optionError } from '../data/option-error.js';
import type { AttemptState, PreparedRequest } from '../data/attempt-state.js';
import type { StepEnvironment } from './step-environment.js';
import { structuredResponseFormat } from './structured-output.js';

/**
 * The agent's request for `attempt`: `processInputStep` on the step's defaults (the step input the
 * request carries on), then {@link prepareRequestNow}. A value when nothing is hooked or async
 * (nothing subscribed for it), else an Observable of it.
 *
 * ```
 * request:  (r|)     (in the subscribing frame when nothing is async)
 * ```
 */
export function prepareAttempt(env: StepEnvironment, attempt: AttemptState, feedback: string | undefined): Observable<PreparedRequest> | PreparedRequest {
  const initial: StepInput = { stepNumber: attempt.stepNumber, ...env.stepDefaults };
  if (!hasHook(env.stepProcessors, 'processInputStep')) {
    return prepareRequestNow(env, initial, feedback);
  }
  return of(initial).pipe(
    processInputStep(env.stepProcessors, env.ctx),
    concatMap((stepInput) => prepareRequest(env, stepInput, feedback)),
  );
}

function retryFeedbackPrompt(prompt: LanguageModelV4Prompt, feedback: string | undefined): LanguageModelV4Prompt {
  if (feedback === undefined) return prompt;
  return [...prompt, { role: 'user', content: [{ type: 'text', text: feedback }], providerOptions: { rxagent: { retryFeedback: true } } }];
}

/** The tools and response format of a request: a promise only when a schema's JSON form is one. */
type RequestExtras = [Awaited<ReturnType<typeof prepareTools>>, Pick<LanguageModelV4CallOptions, 'responseFormat'>];

function requestExtras(stepInput: StepInput): MaybePromise<RequestExtras> {
  const structured = stepInput.structuredOutput !== undefined && stepInput.structuredOutput.model === undefined;
  if (stepInput.tools === undefined && !structured) return [undefined, {}];
  return thenMaybe<Awaited<ReturnType<typeof prepareTools>>, RequestExtras>(prepareTools(stepInput.tools, stepInput.activeTools), (tools) =>
    thenMaybe<Pick<LanguageModelV4CallOptions, 'responseFormat'>, RequestExtras>(structuredResponseFormat(stepInput), (responseFormat) => [tools, responseFormat]),
  );
}

/**
 * Builds the prompt and call options, then runs `processLLMRequest` (its hooks get the call options
 * as sent, but the prompt and abort signal: `callOptions`). Synchronous when nothing is
 * async (no tools or schema to convert, synchronous hooks): a run can stay on virtual time.
 *
 * ```
 * request:  (r|)     (r = { request, callOptions, stepInput, tools }, in the subscribing frame when nothing is async)
 * ```
 */
export function prepareRequest(env: StepEnvironment, stepInput: StepInput, feedback: string | undefined): Observable<PreparedRequest> {
  const prepared = prepareRequestNow(env, stepInput, feedback);
  return isObservable(prepared) ? prepared : of(prepared);
}


/**
 * {@link prepareRequest}, its value returned as is when nothing is async and no processor hooks
 * `processLLMRequest` (the common case: no `of` to subscribe), an Observable otherwise.
 */
export function prepareRequestNow(env: StepEnvironment, stepInput: StepInput, feedback: string | undefined): PreparedRequest | Observable<PreparedRequest> {
  const prompt = retryFeedbackPrompt(env.ctx.messageList.get.all.prompt(), feedback);
  const extras = requestExtras(stepInput);
  const hooked = hasHook(env.inputProcessors, 'processLLMRequest');
  if (!hooked && !isPromiseLike(extras)) {
    // the common case: nothing async, no hook (the signals hooks sent still reach the request):
    // the value itself instead of the operator chain
    const { request, callOptions } = buildRequest(env, stepInput, prompt, extras);
    // no hook to run: only the signals hooks sent reach the request
    return { request: withPendingSignals(env.ctx, request), callOptions, stepInput, tools: activeToolSet(stepInput.tools, stepInput.activeTools) };
  }
  return toObservable(extras).pipe(
    concatMap((resolved) => {
      const { request, callOptions } = buildRequest(env, stepInput, prompt, resolved);
      // what is sent besides the prompt, after every processInputStep and prepareStep (a cache key covers it)
      if (hooked) request.callOptions = sentCallOptions(callOptions);
      return of(request).pipe(
        processLLMRequest(env.inputProcessors, env.ctx),
        map((processed) => ({ request: processed, callOptions, stepInput, tools: activeToolSet(stepInput.tools, stepInput.activeTools) })),
      );
    }),
  );
}

/** The request and call options of a step, before `processLLMRequest`. */
function buildRequest(
  env: StepEnvironment,
  stepInput: StepInput,
  prompt: LanguageModelV4Prompt,
  [tools, responseFormat]: RequestExtras,
): { request: LLMRequest; callOptions: LanguageModelV4CallOptions } {
  const settings = stepInput.modelSettings ?? {};
  const toolChoice = tools === undefined ? undefined : prepareToolChoice(stepInput.toolChoice);
  const forced = stepInput.toolChoice;
  if (typeof forced === 'object' && !(tools ?? []).some((tool) => tool.name === forced.toolName)) {
    // a provider refuses it, and without tools it would be dropped: refused here, before the call
    const offered = (tools ?? []).map((tool) => tool.name).join(', ') || 'none';
    throw optionError(`toolChoice.toolName ${JSON.stringify(forced.toolName)} names no tool offered to the model (offered: ${offered}).`);
  }
  // assigned one by one in the order the spreads gave (no throwaway `{}` per absent setting)
  const callOptions: LanguageModelV4CallOptions = { prompt };
  if (settings.maxOutputTokens !== undefined) callOptions.maxOutputTokens = settings.maxOutputTokens;
  if (settings.temperature !== undefined) callOptions.temperature = settings.temperature;
  if (settings.topP !== undefined) callOptions.topP = settings.topP;
  if (settings.topK !== undefined) callOptions.topK = settings.topK;
  if (settings.presencePenalty !== undefined) callOptions.presencePenalty = settings.presencePenalty;
  if (settings.frequencyPenalty !== undefined) callOptions.frequencyPenalty = settings.frequencyPenalty;
  if (settings.stopSequences !== undefined) callOptions.stopSequences = settings.stopSequences;
  if (settings.seed !== undefined) callOptions.seed = settings.seed;
  if (settings.headers !== undefined) callOptions.headers = settings.headers;
  if (tools !== undefined) callOptions.tools = tools;
  if (toolChoice !== undefined) callOptions.toolChoice = toolChoice;
  if (stepInput.providerOptions !== undefined) callOptions.providerOptions = stepInput.providerOptions;
  if (responseFormat.responseFormat !== undefined) callOptions.responseFormat = responseFormat.responseFormat;
  callOptions.abortSignal = env.ctx.abortSignal;
  const request: LLMRequest =
    stepInput.modelSettings === undefined
      ? { prompt, model: stepInput.model, stepNumber: stepInput.stepNumber }
      : { prompt, model: stepInput.model, stepNumber: stepInput.stepNumber, modelSettings: stepInput.modelSettings };
  return { request, callOptions };
}
