/** Tools as the agent and `processInputStep` see them: AI SDK `tool()` objects or plain ones. */
import type { ModelMessage } from 'ai';
import type { RequestContext } from './request-context.js';
import type { ProcessorStreamWriter } from './stream-writer.js';

/** What a tool's `execute` receives besides its validated input. */
export interface AgentToolExecutionOptions {
  /** The id of the model's tool call this execution answers. */
  toolCallId: string;
  /**
   * `<runId>:<toolCallId>`: the same for every execution of this call, on any instance (a durable
   * run may execute an `idempotent` tool again after a takeover). Pass it to a target that dedupes
   * (a payment API's idempotency key) and the call has one effect.
   */
  idempotencyKey: string;
  /** The messages sent to the model for the step that made the call (no system prompt). */
  messages: ModelMessage[];
  /** Fires when the run is cancelled (unsubscribe or the call's `abortSignal`). */
  abortSignal: AbortSignal;
  /** Writes `data-*` chunks into the run's stream. */
  writer: ProcessorStreamWriter;
  /** The run's request context (per-run view: what the tool sets stays in this run). */
  requestContext: RequestContext;
  /** AI SDK tool context: rxagent has none and passes an empty, frozen object. */
  context: Readonly<Record<string, unknown>>;
  /** For tools written for the reference: a no-op {@link ToolObserve} (`span` runs the function). */
  observe: ToolObserve;
}

/**
 * Observability helpers a tool written for the reference implementation (`createTool` from
 * `@mastra/core/tools`) reads from its context as `observe`. rxagent passes a no-op one: `span`
 * runs the function, `log` does nothing (trace tools with `rxagent/ai-sdk`'s telemetry instead).
 *
 * @example
 * ```ts
 * import type { ToolObserve } from 'rxagent';
 * const timed = (observe: ToolObserve) => observe.span('lookup', () => 42);
 * ```
 */
export interface ToolObserve {
  /** Runs `fn` (as a child span where tracing is active; rxagent: just runs it). */
  span<T>(name: string, fn: () => Promise<T> | T, attributes?: Record<string, unknown>): Promise<T>;
  /** A structured log line (rxagent: ignored). */
  log(level: 'debug' | 'info' | 'warn' | 'error' | 'fatal', message: string, data?: Record<string, unknown>): void;
}

/**
 * A tool's `execute(input, options)`, checked bivariantly (as a method is): a tool whose `execute`
 * declares its own, narrower input or options type (an AI SDK `tool()`, a reference tool) is accepted.
 * The return value, awaited (an async iterable's last value), is the tool result.
 *
 * @example
 * ```ts
 * import type { ToolExecute, AgentToolExecutionOptions } from 'rxagent';
 * const run: ToolExecute<AgentToolExecutionOptions> = async (input: { city: string }, { toolCallId }) => ({ ...input, toolCallId });
 * ```
 */
export type ToolExecute<TOptions> = {
  /** Runs the tool with its validated input and the options. */
  execute(input: never, options: TOptions): unknown;
}['execute'];

/**
 * A tool written for rxagent or the AI SDK: an AI SDK `tool({ description, inputSchema, execute })`
 * or a plain object with the same fields. `inputSchema` may be a zod schema, an AI SDK schema
 * (`jsonSchema()`/`zodSchema()`) or a plain JSON schema object. Tools without `execute` are not run
 * by rxagent. It has no `id` (that is what tells it from a {@link MastraCompatibleTool}).
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import type { AgentFunctionTool } from 'rxagent';
 * const weather: AgentFunctionTool = {
 *   description: 'Weather for a city',
 *   inputSchema: z.object({ city: z.string() }),
 *   execute: async ({ city }: { city: string }, { abortSignal }) => ({ city, tempC: 21, cancelled: abortSignal.aborted }),
 * };
 * ```
 */
export interface AgentFunctionTool {
  /** Function tools have no `id` (provider tools and tools made with the reference's `createTool` do). */
  id?: undefined;
  /**
   * What the model reads about the tool. A function (AI SDK 7 `tool({ description: ({ context }) => … })`)
   * is called once per step with an empty `context` (rxagent has no tool context).
   */
  description?: string | ((options: { context: never }) => string) | undefined;
  /** The input's schema: zod, an AI SDK schema, or a plain JSON schema object. Input is validated before `execute`. */
  inputSchema?: unknown;
  /** AI SDK tool kinds rxagent runs itself (`'dynamic'` tools too). */
  type?: 'function' | 'dynamic' | undefined;
  /** Accepted from AI SDK tool objects; unused by function tools. */
  args?: Record<string, unknown> | undefined;
  /** Provider-specific options for this tool, passed to the provider with the tool definition. */
  providerOptions?: Record<string, Record<string, unknown>> | undefined;
  /**
   * Runs the tool with the validated input; its (awaited) return value is the tool result (an async
   * iterable's last value). A method (bivariant), so an AI SDK `tool()` whose `execute` reads its
   * own typed options is accepted.
   */
  execute?: ToolExecute<AgentToolExecutionOptions> | undefined;
  /**
   * Running it twice with the same `idempotencyKey` has one effect. A durable run whose owner died
   * while this tool ran runs it again after the takeover; a tool that is not idempotent gets a
   * `ToolOutcomeUnknownError` instead (the model is told). Default `false`.
   */
  idempotent?: boolean | undefined;
}

/**
 * A provider-executed tool (`openai.tools.webSearch()`, …): the provider runs it and rxagent passes
 * its results on (`tool-result` chunks with `providerExecuted: true`).
 *
 * @example
 * ```ts
 * import type { AgentProviderTool } from 'rxagent';
 * const search: AgentProviderTool = { type: 'provider', id: 'openai.web_search', args: {} };
 * ```
 */
export interface AgentProviderTool {
  /** `'provider'` (AI SDK 6/7) or `'provider-defined'` (AI SDK 5). */
  type: 'provider' | 'provider-defined';
  /** The provider's tool id, e.g. `'openai.web_search'`. */
  id: string;
  /** The provider tool's arguments. */
  args?: Record<string, unknown> | undefined;
  /** The tool's name at the provider, when it differs from its key. */
  name?: string | undefined;
  /** What the model reads about the tool (most provider tools have none). */
  description?: string | ((options: { context: never }) => string) | undefined;
  /** The input's schema, if the provider tool declares one. */
  inputSchema?: unknown;
  /** Provider-specific options for this tool. */
  providerOptions?: Record<string, Record<string, unknown>> | undefined;
  /** Not called by rxagent (the provider executes the tool). */
  execute?: ToolExecute<AgentToolExecutionOptions> | undefined;
}

/**
 * A tool made with the reference implementation's `createTool({ id, description, inputSchema,
 * execute })` (`@mastra/core/tools`), used as it is. rxagent calls `execute(input, context)` with
 * its {@link AgentToolExecutionOptions} (`toolCallId`, `messages`, `abortSignal`, `writer`,
 * `requestContext`, and a no-op `observe`); the reference's `agent`, `workflow`, `mcp`,
 * `suspend`/`resumeData` and `mastra` are not provided. Its context parameter is typed `object`
 * because the reference's own context type names its classes (`RequestContext`, `ToolStream`),
 * which rxagent's values cannot be, even when they have the same methods.
 *
 * @example
 * ```ts
 * import type { MastraCompatibleTool } from 'rxagent';
 * const lookup: MastraCompatibleTool = { id: 'lookup', description: 'Looks up a word', execute: async (input: { word: string }) => input.word.length };
 * ```
 */
export interface MastraCompatibleTool {
  /** The tool's id (`createTool({ id })`); the agent calls it by its key in `tools`. */
  id: string;
  /** Reference tools have no `type`. */
  type?: undefined;
  /** What the model reads about the tool. */
  description?: string | undefined;
  /** The input's schema (zod or any Standard Schema with JSON Schema), validated before `execute`. */
  inputSchema?: unknown;
  /** The output's schema (not checked by rxagent). */
  outputSchema?: unknown;
  /** Provider-specific options for this tool, passed to the provider with the tool definition. */
  providerOptions?: Record<string, Record<string, unknown>> | undefined;
  /** Runs the tool: `execute(input, context)`; its (awaited) return value is the tool result. */
  execute?: ToolExecute<object> | undefined;
  /** Running it twice with the same `idempotencyKey` has one effect (see {@link AgentFunctionTool.idempotent}). */
  idempotent?: boolean | undefined;
}

/**
 * A tool: an AI SDK `tool()` or plain {@link AgentFunctionTool}, a {@link AgentProviderTool}, or a
 * tool made with the reference's `createTool` ({@link MastraCompatibleTool}). Told apart by `id` and
 * `type`: an object without `id` is a function tool, so an inline tool's `execute` gets
 * {@link AgentToolExecutionOptions} as its typed second argument.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import type { AgentTool } from 'rxagent';
 * const weather: AgentTool = {
 *   description: 'Weather for a city',
 *   inputSchema: z.object({ city: z.string() }),
 *   execute: async ({ city }: { city: string }) => ({ city, tempC: 21 }),
 * };
 * ```
 */
export type AgentTool = AgentFunctionTool | AgentProviderTool | MastraCompatibleTool;

/** Tools by name. */
export type AgentToolSet = Record<string, AgentTool>;

/** How the model may use tools: AI SDK's `'auto' | 'none' | 'required' | { type: 'tool', toolName }`. */
export type AgentToolChoice = 'auto' | 'none' | 'required' | {
  /** What kind of value this is. */
  type: 'tool';
  /** The name of the tool. */
  toolName: string;
};

/**
 * The no-op {@link ToolObserve} rxagent hands to tools.
 *
 * @example
 * ```ts
 * await noopToolObserve.span('step', () => 1); // 1
 * ```
 */
export const noopToolObserve: ToolObserve = Object.freeze({
  span: <T>(_name: string, fn: () => Promise<T> | T): Promise<T> => Promise.resolve().then(fn),
  log: (): void => undefined,
});
