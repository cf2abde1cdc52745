/**
 * One model call seen by `processorsMiddleware`: its run context, the prompt as a `MessageList`,
 * and the input-side hooks (`processInput`, `processInputStep`, `processLLMRequest`) applied to
 * the call options. Its context's `abortSignal` is the call's own: aborted when the caller's is,
 * and when the call is over with its step finished (`endsCall`) with the reason of a run that ended
 * with its `finish` (`RUN_FINISHED`) — what a processor waits for to keep what it saw of an
 * accepted step (`ResponseCache`).
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolChoice,
} from '@ai-sdk/provider';
import { jsonSchema } from '@ai-sdk/provider-utils';
import type { ModelMessage } from 'ai';
import { MessageList } from '../../message-list/index.js';
import { finalize, lastValueFrom, of, type MonoTypeOperatorFunction } from 'rxjs';
import {
  createRunContext,
  processInput,
  processInputStep,
  processLLMRequest,
  type RunContext,
  type StepInput,
} from '../../operators/index.js';
import {
  type AgentToolChoice,
  type AgentToolSet,
  type CachedLLMStepResponse,
  type CallSettings,
  type Processor,
  type RequestContext,
  type StructuredOutputOptions,
  type TracingContext,
  RUN_FINISHED,
  RUN_UNFINISHED,
  TripWire,
  hasHook,
  sentCallOptions,
} from '../../contract/index.js';
import { createRunState, type RunState } from '../../loop/index.js';
import { DuplicateToolNameError } from '../errors/duplicate-tool-name-error.js';

/** The middleware options a call needs. */
export interface MiddlewareCallConfig {
  inputProcessors: readonly Processor[];
  outputProcessors: readonly Processor[];
  errorProcessors: readonly Processor[];
  maxProcessorRetries: number | undefined;
  requestContext: (() => RequestContext) | undefined;
  tracingContext: TracingContext | undefined;
  generateId: () => string;
}

/** What `transformParams` prepared for `wrapStream` / `wrapGenerate`. */
export interface MiddlewareCall {
  ctx: RunContext;
  /** The call's state (the loop's `RunState`: the attempt runs on it). */
  state: RunState;
  /** The call options after the input hooks (the object handed to the model). */
  params: LanguageModelV4CallOptions;
  /** A cached response from `processLLMRequest`: replaces the model call. */
  cached: CachedLLMStepResponse | undefined;
  /** A `TripWire` from an input hook: the call ends with it, the model is not called. */
  tripwire: TripWire | undefined;
  /** The list as it stood when the call was made (to tell whether `processAPIError` changed it). */
  listSnapshot: string;
  /**
   * Ends the call (once): the caller's signal is let go, and the context's signal is aborted with
   * the reason of a run that ended with its `finish` when the call's step finished, with that of a
   * run that did not otherwise (a call that failed or was cut: a processor waiting for the step to
   * be accepted learns it was not).
   */
  end(): void;
}

/**
 * The signal of a call's context: aborted when `caller` is (one listener — not `AbortSignal.any`,
 * for a long-lived caller signal), and by `over` — as a run's at its end: `RUN_FINISHED` for a call
 * whose step passed every processor, `RUN_UNFINISHED` for any other. `release` lets the caller's
 * signal go.
 */
function callSignal(caller: AbortSignal | undefined): { signal: AbortSignal; over: (finished: boolean) => void; release: () => void } {
  const controller = new AbortController();
  const over = (finished: boolean): void => controller.abort(finished ? RUN_FINISHED : RUN_UNFINISHED);
  if (caller?.aborted === true) controller.abort(caller.reason);
  if (caller === undefined || caller.aborted) return { signal: controller.signal, over, release: () => undefined };
  const follow = (): void => controller.abort(caller.reason);
  caller.addEventListener('abort', follow, { once: true });
  return { signal: controller.signal, over, release: () => caller.removeEventListener('abort', follow) };
}

/**
 * Ends `call` when the stream of its parts ends, however it ends (completed, failed, cancelled);
 * nothing is added per part (a teardown only).
 *
 * ```
 * parts:  --p--p--f--|
 * result: --p--p--f--|      (then call.end())
 * ```
 */
export function endsCall<T>(call: MiddlewareCall): MonoTypeOperatorFunction<T> {
  return finalize(() => call.end());
}

/** A V4 prompt message as the `ModelMessage` the MessageList accepts (file data unwrapped). */
function toModelMessage(message: LanguageModelV4Message): ModelMessage {
  if (message.role === 'system') return { role: 'system', content: message.content };
  const content = (message.content as ReadonlyArray<{ type: string }>).map((part) => {
    if (part.type !== 'file') return part;
    const file = part as { type: 'file'; data: { type: string; data?: unknown; url?: URL }; mediaType: string; filename?: string };
    if (file.data.type === 'data') return { ...file, data: file.data.data };
    if (file.data.type === 'url') return { ...file, data: file.data.url };
    return part;
  });
  return { ...message, content } as ModelMessage;
}

/**
 * The prompt as a MessageList: system messages as system messages, every other message as `input`
 * (what `processInput` sees as the new messages). The whole prompt came from the caller — with a
 * chat route, from the client — so input guards check every turn of a posted history, as on the
 * Agent path without memory.
 */
export function promptToMessageList(prompt: LanguageModelV4Prompt, generateId: () => string): MessageList {
  const list = new MessageList({ generateId });
  const system = prompt.filter((message) => message.role === 'system');
  const rest = prompt.filter((message) => message.role !== 'system');
  if (system.length > 0) list.addSystem(system.map((message) => ({ role: 'system' as const, content: message.content as string })));
  if (rest.length > 0) list.add(rest.map(toModelMessage), 'input');
  return list;
}

function toAgentToolChoice(choice: LanguageModelV4ToolChoice | undefined): AgentToolChoice | undefined {
  if (choice === undefined) return undefined;
  return choice.type === 'tool' ? { type: 'tool', toolName: choice.toolName } : choice.type;
}

function fromAgentToolChoice(choice: AgentToolChoice | undefined): LanguageModelV4ToolChoice | undefined {
  if (choice === undefined) return undefined;
  return typeof choice === 'string' ? { type: choice } : { type: 'tool', toolName: choice.toolName };
}

/**
 * Refuses a call that offers two tools of one name (`DuplicateToolNameError`), before any hook
 * runs: `processInputStep` sees the tools by name, so it would judge one definition while the
 * provider got both (providers refuse such a request too).
 */
function refuseDuplicateTools(tools: NonNullable<LanguageModelV4CallOptions['tools']>): void {
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new DuplicateToolNameError(tool.name);
    names.add(tool.name);
  }
}

/**
 * The call's tools as `processInputStep` sees them: each definition as the SDK sent it (a copy;
 * a hook's changes to them are ignored), by name, a function tool's JSON schema as an AI SDK
 * schema (what the SDK sends may carry its source's `~standard`: read as a JSON schema, not as
 * that source). Names are unique (`refuseDuplicateTools`).
 */
function toolSetOf(tools: NonNullable<LanguageModelV4CallOptions['tools']>): AgentToolSet {
  const set: AgentToolSet = {};
  for (const tool of tools) {
    const definition = tool.type === 'function' ? { ...tool, inputSchema: jsonSchema(tool.inputSchema) } : { ...tool };
    // defined, not assigned: a tool named `__proto__` is a key, never the object's prototype
    Object.defineProperty(set, tool.name, { value: definition, enumerable: true, writable: true, configurable: true });
  }
  return set;
}

/** A JSON `responseFormat` as the `structuredOutput` `processInputStep` sees: its JSON schema, as an AI SDK schema. */
function structuredOutputOf(format: LanguageModelV4CallOptions['responseFormat']): StructuredOutputOptions | undefined {
  if (format?.type !== 'json') return undefined;
  return { schema: format.schema === undefined ? undefined : jsonSchema(format.schema) };
}

const settingKeys = ['maxOutputTokens', 'temperature', 'topP', 'topK', 'presencePenalty', 'frequencyPenalty', 'stopSequences', 'seed', 'headers'] as const;

function settingsOf(params: LanguageModelV4CallOptions): CallSettings {
  const settings: Record<string, unknown> = {};
  for (const key of settingKeys) if (params[key] !== undefined) settings[key] = params[key];
  return settings as CallSettings;
}

function applyStepInput(params: LanguageModelV4CallOptions, before: StepInput, after: StepInput): LanguageModelV4CallOptions {
  const next: LanguageModelV4CallOptions = { ...params };
  if (after.modelSettings !== before.modelSettings) {
    for (const key of settingKeys) delete (next as Record<string, unknown>)[key];
    Object.assign(next, after.modelSettings ?? {});
  }
  if (after.toolChoice !== before.toolChoice) {
    const toolChoice = fromAgentToolChoice(after.toolChoice);
    if (toolChoice === undefined) delete next.toolChoice;
    else next.toolChoice = toolChoice;
  }
  if (after.activeTools !== before.activeTools && after.activeTools !== undefined && next.tools !== undefined) {
    const active = new Set(after.activeTools);
    next.tools = next.tools.filter((tool) => active.has(tool.name));
  }
  if (after.providerOptions !== before.providerOptions) {
    if (after.providerOptions === undefined) delete next.providerOptions;
    else next.providerOptions = after.providerOptions;
  }
  return next;
}

/** A stable text of the list's messages, to tell whether a hook changed it. */
export function snapshotOf(list: MessageList): string {
  return JSON.stringify([list.getAllSystemMessages(), list.get.all.db()]);
}

/**
 * Prepares a call: builds its context and list, runs the input hooks and returns the call
 * options to send. A `TripWire` from a hook is kept in the result (the stream ends with it);
 * any other error is thrown (fail closed).
 */
export async function prepareCall(
  config: MiddlewareCallConfig,
  params: LanguageModelV4CallOptions,
  model: LanguageModelV4,
): Promise<MiddlewareCall> {
  if (params.tools !== undefined) refuseDuplicateTools(params.tools);
  const messageList = promptToMessageList(params.prompt, config.generateId);
  const runId = `mw_${config.generateId()}`;
  const state = createRunState(runId, messageList);
  const signal = callSignal(params.abortSignal);
  const ctx = createRunContext({
    runId,
    state,
    generateId: config.generateId,
    ...(config.requestContext === undefined ? {} : { requestContext: config.requestContext() }),
    ...(config.tracingContext === undefined ? {} : { tracingContext: config.tracingContext }),
    abortSignal: signal.signal,
    maxProcessorRetries: config.maxProcessorRetries,
  });
  let ended = false;
  const call: MiddlewareCall = {
    ctx,
    state,
    params,
    cached: undefined,
    tripwire: undefined,
    listSnapshot: '',
    end: () => {
      if (ended) return;
      ended = true;
      signal.release();
      // its step finished (`step-finish` made): every hook after the model passed it
      signal.over(state.attempt?.phase === 'done');
    },
  };
  const inputs = config.inputProcessors;
  try {
    let next = params;
    if (hasHook(inputs, 'processInput') || hasHook(inputs, 'processInputStep')) {
      await lastValueFrom(of(messageList).pipe(processInput(inputs, ctx)));
      const stepInput: StepInput = {
        stepNumber: 0,
        model,
        ...(params.toolChoice === undefined ? {} : { toolChoice: toAgentToolChoice(params.toolChoice) as AgentToolChoice }),
        ...(params.tools === undefined ? {} : { tools: toolSetOf(params.tools), activeTools: params.tools.map((tool) => tool.name) }),
        ...(params.providerOptions === undefined ? {} : { providerOptions: params.providerOptions }),
        ...(params.responseFormat?.type === 'json' ? { structuredOutput: structuredOutputOf(params.responseFormat) as StructuredOutputOptions } : {}),
        modelSettings: settingsOf(params),
      };
      const stepOutput = await lastValueFrom(of(stepInput).pipe(processInputStep(inputs, ctx)));
      next = { ...applyStepInput(params, stepInput, stepOutput), prompt: messageList.get.all.prompt() };
    }
    if (hasHook(inputs, 'processLLMRequest')) {
      // the hooks get what is sent besides the prompt (the options after processInputStep)
      const request = await lastValueFrom(of({ prompt: next.prompt, model, stepNumber: 0, modelSettings: settingsOf(next), callOptions: sentCallOptions(next) }).pipe(processLLMRequest(inputs, ctx)));
      next = { ...next, prompt: request.prompt };
      call.cached = request.response;
    }
    call.params = next;
  } catch (error) {
    if (!TripWire.isInstance(error)) throw error;
    call.tripwire = error;
  }
  call.listSnapshot = snapshotOf(messageList);
  return call;
}

/**
 * The options for a re-call after `processAPIError` asked for a retry: unchanged when the hooks
 * left the list alone, else the list's prompt (through `processLLMRequest` again).
 */
export async function retryParams(config: MiddlewareCallConfig, call: MiddlewareCall, model: LanguageModelV4): Promise<LanguageModelV4CallOptions> {
  const list = call.ctx.messageList;
  if (snapshotOf(list) === call.listSnapshot) return call.params;
  call.listSnapshot = snapshotOf(list);
  const request = await lastValueFrom(
    of({ prompt: list.get.all.prompt(), model, stepNumber: 0, modelSettings: settingsOf(call.params), callOptions: sentCallOptions(call.params) }).pipe(processLLMRequest(config.inputProcessors, call.ctx)),
  );
  call.params = { ...call.params, prompt: request.prompt };
  return call.params;
}
