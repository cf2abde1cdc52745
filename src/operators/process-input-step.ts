import { concatMap, defer, type OperatorFunction } from 'rxjs';
import type { LanguageModelV4, SharedV4ProviderOptions } from '@ai-sdk/provider';
import { ProcessorError } from '../contract/errors/processor-error.js';
import type { CallSettings, Processor, ProcessorLike, StructuredOutputOptions } from '../contract/processor-types.js';
import { asProcessors } from '../contract/processor-types.js';
import { isHooked } from '../contract/has-hook.js';
import type { AgentToolChoice, AgentToolSet } from '../contract/tool-types.js';
import { bindingsWith, contextArgs } from './internal/hook-args.js';
import { invokeHook } from './internal/invoke-hook.js';
import { checkedOnFailure, usageWatch } from './internal/usage-watch.js';
import { allChecks, messagesWatch, stepTextsWatch } from './internal/messages-watch.js';
import { reduceMaybe, thenMaybe, toMaybePromise, type MaybeAsync, type MaybePromise } from '../contract/maybe-async.js';
import type { ProcessorBinding } from './internal/processor-binding.js';
import { applyMessageResult, assertSameMessageList, isMessageListLike, reconcileMessages, replaceSystemMessages } from './internal/reconcile-messages.js';
import { assertKnownKeys, assertStepResultFields, checkedModelSettings } from './internal/result-shapes.js';
import { toObservable } from '../contract/to-observable.js';
import { checkedHookResult } from '../contract/processor-checks.js';
import { callSettingsProblem } from '../contract/call-settings-check.js';
import { ownModelSettings } from './internal/own-settings.js';
import { createRunContext, type RunContext } from './run-context.js';

/** What one step will call the model with; `processInputStep` results replace its fields. */
export interface StepInput {
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** The model (as the loop speaks to it: `LanguageModelV4`). */
  model: LanguageModelV4;
  /** The tools, by name. */
  tools?: AgentToolSet;
  /** How the model may use tools. */
  toolChoice?: AgentToolChoice;
  /** The names of the tools the model may call (all when unset). */
  activeTools?: string[];
  /** Provider-specific options (by provider name). */
  providerOptions?: SharedV4ProviderOptions;
  /** Call settings (temperature, maxOutputTokens, …). */
  modelSettings?: CallSettings;
  /** Structured output: the zod schema of the object to produce. */
  structuredOutput?: StructuredOutputOptions;
}

const replaceableKeys = ['toolChoice', 'activeTools', 'tools', 'providerOptions', 'modelSettings', 'structuredOutput'] as const;
/** Every field a `processInputStep` result may carry (`messageId` and `retryCount`: the reference's, accepted and ignored). */
const STEP_RESULT_KEYS = ['model', 'messages', 'messageList', 'systemMessages', ...replaceableKeys, 'messageId', 'retryCount'];

function applyStepResult(result: unknown, binding: ProcessorBinding, context: RunContext, step: StepInput, messagesBefore: Parameters<typeof reconcileMessages>[1]['before']): StepInput {
  const scope = {
    processorId: binding.processor.id,
    hook: 'processInputStep' as const,
    messageList: context.messageList,
    before: messagesBefore,
    defaultSource: 'input' as const,
  };
  if (result === undefined || result === null || isMessageListLike(result) || Array.isArray(result)) {
    applyMessageResult(result, scope);
    return step;
  }
  if (typeof result !== 'object') {
    throw new ProcessorError(scope.processorId, scope.hook, `returned ${typeof result}; expected a step result object, the messageList, messages or nothing.`);
  }
  const shaped = result as Record<string, unknown>;
  assertKnownKeys(shaped, STEP_RESULT_KEYS, scope, `a step result with ${STEP_RESULT_KEYS.join(', ')}`);
  assertStepResultFields(shaped, scope);
  // read once, copied and checked before anything is applied: what is checked is what the step uses
  const settings = 'modelSettings' in shaped ? checkedModelSettings(shaped.modelSettings, scope) : undefined;
  if (shaped.messages !== undefined && shaped.messageList !== undefined) {
    throw new ProcessorError(scope.processorId, scope.hook, 'returned both messages and messageList; return only one of them.');
  }
  if (shaped.messageList !== undefined) {
    if (!isMessageListLike(shaped.messageList)) {
      throw new ProcessorError(scope.processorId, scope.hook, 'returned a messageList that is not a MessageList.');
    }
    assertSameMessageList(shaped.messageList, scope);
  }
  const next: StepInput = { ...step };
  if (shaped.model !== undefined) {
    try {
      next.model = context.resolveModel(shaped.model as Parameters<RunContext['resolveModel']>[0]);
    } catch (error) {
      throw ProcessorError.fromThrown(scope.processorId, scope.hook, error);
    }
  }
  // System messages first (as for processInput): role 'system' entries of `messages` then add to
  // the replaced set instead of being wiped by it.
  if (shaped.systemMessages !== undefined) replaceSystemMessages(shaped.systemMessages, scope);
  if (shaped.messages !== undefined) reconcileMessages(shaped.messages as Parameters<typeof reconcileMessages>[0], scope);
  for (const key of replaceableKeys) {
    if (key in shaped) (next as unknown as Record<string, unknown>)[key] = key === 'modelSettings' ? settings : shaped[key];
  }
  return next;
}

/**
 * `step` (the step input as a hook left it: ours) with its `modelSettings` read once, copied and
 * checked: a hook may have edited its `modelSettings` argument in place (a header with CR/LF, a NaN)
 * instead of returning settings.
 */
function withCheckedSettings(step: StepInput, binding: ProcessorBinding): StepInput {
  if (step.modelSettings !== undefined) step.modelSettings = checkedModelSettings(step.modelSettings, { processorId: binding.processor.id, hook: 'processInputStep' });
  return step;
}

/**
 * Whether the settings a step came with meet a call's rules (the Agent's are checked as options;
 * the AI SDK middleware's are the SDK call's): only then is an edit in place a hook's to answer for.
 */
function settingsSound(settings: CallSettings | undefined): boolean {
  if (settings === undefined) return true;
  try {
    return callSettingsProblem(settings as Record<string, unknown>) === undefined;
  } catch {
    return false;
  }
}

/**
 * Runs every processor's `processInputStep` for one step, chaining each result into the next call.
 * Synchronous while the hooks are; a promise once one returns a promise, or an Observable that
 * does not settle at once (its first value is awaited: the operator form keeps it on its scheduler).
 */
export function runProcessInputStep(processors: readonly Processor[], context: RunContext, step: StepInput): MaybePromise<StepInput> {
  return toMaybePromise(runProcessInputStepHooks(processors, context, step));
}

/**
 * `step` with copies of its own of what hooks may edit in place: `tools`, `activeTools`,
 * `modelSettings` (its `headers` and `stopSequences` too) and `providerOptions` (each provider's
 * options too). Otherwise they are the agent's configuration, shared by all its runs: an edit
 * changes this step, never a later run. Made once per step, only when a processor has the hook.
 */
function withOwnSettings(step: StepInput): StepInput {
  const own: StepInput = { ...step };
  if (step.tools !== undefined) own.tools = { ...step.tools };
  if (step.activeTools !== undefined) own.activeTools = [...step.activeTools];
  if (step.modelSettings !== undefined) own.modelSettings = ownModelSettings(step.modelSettings);
  if (step.providerOptions !== undefined) {
    // an entry that is no object is handed on as it came: the copy changes nothing the model is sent
    own.providerOptions = Object.fromEntries(
      Object.entries(step.providerOptions).map(([provider, options]) => [provider, typeof options === 'object' && options !== null && !Array.isArray(options) ? { ...options } : options]),
    );
  }
  return own;
}

/** `runProcessInputStep`, an Observable hook result kept an Observable (the operator's path: its scheduler's time is kept). */
function runProcessInputStepHooks(processors: readonly Processor[], context: RunContext, step: StepInput): MaybeAsync<StepInput> {
  const bindings = bindingsWith(processors, context, 'processInputStep');
  if (bindings.length === 0) return step;
  const keptUsage = allChecks(usageWatch(context.steps), messagesWatch(context.messageList), stepTextsWatch(context.steps));
  const own = withOwnSettings(step);
  const checkInPlace = settingsSound(own.modelSettings);
  return reduceMaybe(bindings, own, (current, binding) => {
    const list = context.messageList;
    const messages = list.get.all.db();
    const args = {
      ...contextArgs(context, binding, 'processInputStep'),
      messages,
      messageList: list,
      stepNumber: current.stepNumber,
      steps: [...context.steps], // a copy of the list: a hook cannot drop or add the run's steps
      systemMessages: list.getSystemMessages(),
      model: current.model,
      toolChoice: current.toolChoice,
      activeTools: current.activeTools,
      tools: current.tools,
      providerOptions: current.providerOptions,
      modelSettings: current.modelSettings,
      structuredOutput: current.structuredOutput,
      // This processor's processLLMRequest runs on this step's prompt: it may trim there instead.
      llmRequestStage: context.llmRequestStage && isHooked(binding.processor, 'processLLMRequest') ? (true as const) : undefined,
    };
    return thenMaybe(checkedOnFailure(keptUsage, binding.processor.id, 'processInputStep', () => invokeHook<unknown>(binding, 'processInputStep', args, context.tracingContext)), (result) => {
      keptUsage?.(binding.processor.id, 'processInputStep');
      return checkedHookResult(binding.processor.id, 'processInputStep', result, (value) => {
        const next = applyStepResult(value, binding, context, current, messages);
        return checkInPlace ? withCheckedSettings(next, binding) : next;
      });
    });
  });
}

/**
 * Runs the processors' `processInputStep` hooks for each step, in order, chaining: processor N+1
 * sees the `model`, `tools`, `toolChoice`, `activeTools`, `providerOptions`, `modelSettings`,
 * `structuredOutput` and system messages processor N left. A returned `model` (object or
 * `'provider/model'` id) is resolved through the run context.
 *
 * ```
 * source:  --s0------s1--|
 * result:  --s0'-----s1'-|     (each step input as the chain left it)
 * abort:   --#               (# = TripWire; a retry request here is a plain abort)
 * ```
 *
 * @example
 * ```ts
 * import { processInputStep } from 'rxagent/operators';
 * stepInputs$.pipe(processInputStep([new DynamicModelProcessor()], ctx)).subscribe((step) => console.log(step.model.modelId));
 * ```
 */
export function processInputStep(list: readonly ProcessorLike[], ctx?: RunContext): OperatorFunction<StepInput, StepInput> {
  const processors = asProcessors(list);
  // with the run's context no per-subscription set-up is needed: the stage itself (one concatMap;
  // its project runs when the value's turn comes, so no inner `defer` either)
  if (ctx !== undefined) return processInputStepStage(processors, ctx);
  return (source) => defer(() => source.pipe(processInputStepStage(processors, createRunContext())));
}

/** The hooks of `processors` on each value, in order, with `context`. */
function processInputStepStage(processors: readonly Processor[], context: RunContext): OperatorFunction<StepInput, StepInput> {
  return concatMap((step) => toObservable(runProcessInputStepHooks(processors, context, step)));
}
