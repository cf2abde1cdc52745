/** Tools as the agent and `processInputStep` see them: AI SDK `tool()` objects or plain ones. */
import type { ModelMessage } from 'ai';
import type { RequestContext } from './request-context.js';
import type { ProcessorStreamWriter } from './stream-writer.js';

/** What a tool's `execute` receives besides its validated input. */
export interface AgentToolExecutionOptions {
  toolCallId: string;
  /** The messages sent to the model for the step that made the call (no system prompt). */
  messages: ModelMessage[];
  /** Fires when the run is cancelled (unsubscribe or the call's `abortSignal`). */
  abortSignal: AbortSignal;
  /** Writes `data-*` chunks into the run's stream. */
  writer: ProcessorStreamWriter;
  requestContext: RequestContext;
  /** AI SDK tool context: rxagent has none and passes an empty, frozen object. */
  context: Readonly<Record<string, unknown>>;
}

/**
 * A tool: an AI SDK `tool({ description, inputSchema, execute })` or a plain object with the same
 * fields. `inputSchema` may be a zod schema, an AI SDK schema (`jsonSchema()`/`zodSchema()`) or a
 * plain JSON schema object. Tools without `execute` (or `type: 'provider'`) are not run by rxagent.
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
export interface AgentTool {
  /**
   * What the model reads about the tool. A function (AI SDK 7 `tool({ description: ({ context }) => … })`)
   * is called once per step with an empty `context` (rxagent has no tool context).
   */
  description?: string | ((options: { context: never }) => string);
  inputSchema?: unknown;
  /** `'provider'` tools are executed by the provider; rxagent only passes their results on. */
  type?: 'function' | 'dynamic' | 'provider' | 'provider-defined';
  /** Provider tool id (`'openai.web_search'`…) for provider tools. */
  id?: string;
  args?: Record<string, unknown>;
  providerOptions?: Record<string, Record<string, unknown>>;
  /**
   * Runs the tool with the validated input; its (awaited) return value is the tool result. A method
   * (bivariant), so an AI SDK `tool()` whose `execute` reads its own typed options is accepted.
   */
  execute?(input: never, options: AgentToolExecutionOptions): unknown;
}

/** Tools by name. */
export type AgentToolSet = Record<string, AgentTool>;

/** How the model may use tools: AI SDK's `'auto' | 'none' | 'required' | { type: 'tool', toolName }`. */
export type AgentToolChoice = 'auto' | 'none' | 'required' | { type: 'tool'; toolName: string };
