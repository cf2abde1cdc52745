/**
 * Checks of what hooks return, field by field: a wrong type is a `ProcessorError` naming the field
 * (fail closed), never silently accepted or ignored.
 */
import { ProcessorError, type ProcessorHookName } from '../../contract/errors/processor-error.js';
import { aiSdkShapedChunk } from '../../contract/processor-checks.js';
import { callSettingsProblem, readCallSettings } from '../../contract/call-settings-check.js';
import type { CallSettings } from '../../contract/processor-types.js';
import { USAGE_COUNT_RULE, usageProblem } from '../../model/usage.js';
import { chunkFieldsProblem, replayedChunkProblem } from '../../model/replay-call.js';

/** Where a check runs: the processor and the hook whose result it is. */
export interface ShapeScope {
  processorId: string;
  hook: ProcessorHookName;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return `number ${String(value)}`;
  return typeof value;
}

/** A `ProcessorError` saying `field` of the result is wrong. */
export function badField(scope: ShapeScope, field: string, expected: string, value: unknown): ProcessorError {
  return new ProcessorError(scope.processorId, scope.hook, `returned ${field} = ${describe(value)}; expected ${expected}.`);
}

/** Throws unless every key of `result` is one of `allowed`. */
export function assertKnownKeys(result: Record<string, unknown>, allowed: readonly string[], scope: ShapeScope, expected: string): void {
  const keys = Object.keys(result);
  const unknown = keys.filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new ProcessorError(
      scope.processorId,
      scope.hook,
      `returned an object with unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => JSON.stringify(key)).join(', ')}; expected ${expected}.`,
    );
  }
}

const TOOL_CHOICES = new Set(['auto', 'none', 'required']);

/** Checks each field a `processInputStep` result may carry (`undefined` clears a field and is allowed). */
export function assertStepResultFields(result: Record<string, unknown>, scope: ShapeScope): void {
  // (`modelSettings` is read, copied and checked once, by checkedModelSettings)
  const { toolChoice, activeTools, tools, providerOptions, structuredOutput, messageId, retryCount, model } = result;
  if ('model' in result && (model === null || (typeof model !== 'string' && typeof model !== 'object' && model !== undefined))) {
    throw badField(scope, 'model', "a language model or a 'provider/model' id", model);
  }
  if (toolChoice !== undefined && !(typeof toolChoice === 'string' && TOOL_CHOICES.has(toolChoice))) {
    if (!(isRecord(toolChoice) && toolChoice.type === 'tool' && typeof toolChoice.toolName === 'string')) {
      throw badField(scope, 'toolChoice', "'auto', 'none', 'required' or { type: 'tool', toolName }", toolChoice);
    }
  }
  if (activeTools !== undefined && !(Array.isArray(activeTools) && activeTools.every((name) => typeof name === 'string'))) {
    throw badField(scope, 'activeTools', 'an array of tool names', activeTools);
  }
  if (tools !== undefined) {
    if (!isRecord(tools)) throw badField(scope, 'tools', 'an object of tools by name', tools);
    for (const [name, tool] of Object.entries(tools)) {
      if (!isRecord(tool)) throw badField(scope, `tools.${name}`, 'a tool object', tool);
    }
  }
  if (providerOptions !== undefined) {
    if (!isRecord(providerOptions)) throw badField(scope, 'providerOptions', 'an object of options by provider', providerOptions);
    for (const [provider, options] of Object.entries(providerOptions)) {
      if (!isRecord(options)) throw badField(scope, `providerOptions.${provider}`, 'an object', options);
    }
  }
  if (structuredOutput !== undefined && !(isRecord(structuredOutput) && structuredOutput.schema !== undefined && structuredOutput.schema !== null)) {
    throw badField(scope, 'structuredOutput', 'an object with a schema', structuredOutput);
  }
  if (messageId !== undefined && typeof messageId !== 'string') throw badField(scope, 'messageId', 'a string', messageId);
  if (retryCount !== undefined && typeof retryCount !== 'number') throw badField(scope, 'retryCount', 'a number', retryCount);
}

/**
 * `settings` a hook gave a step (returned, or left in its `modelSettings` argument), read once into
 * objects of its own and checked by a call's rules (`callSettingsProblem`): the copy is what the
 * step uses, so what was checked is what reaches the provider. A `ProcessorError` naming the field
 * otherwise; `undefined` stays `undefined`.
 *
 * @example
 * ```ts
 * next.modelSettings = checkedModelSettings(returned.modelSettings, { processorId: 'tune', hook: 'processInputStep' });
 * ```
 */
export function checkedModelSettings(settings: unknown, scope: ShapeScope): CallSettings | undefined {
  if (settings === undefined) return undefined;
  const own = readCallSettings(settings);
  if (!isRecord(own)) throw badField(scope, 'modelSettings', 'an object of call settings', settings);
  const problem = callSettingsProblem(own);
  if (problem === undefined) return own as CallSettings;
  if (problem.kind === 'value') {
    throw new ProcessorError(scope.processorId, scope.hook, `set modelSettings.${problem.field} = ${describe(problem.value)}; expected ${problem.expected}.`);
  }
  if (problem.kind === 'header-name') {
    const { name } = problem;
    throw new ProcessorError(
      scope.processorId,
      scope.hook,
      `set modelSettings.headers with ${JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)}, which is not a valid header name.`,
    );
  }
  throw new ProcessorError(scope.processorId, scope.hook, `set modelSettings.${problem.field} with CR, LF or NUL (header injection).`);
}

const PROMPT_ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** Checks a prompt returned by `processLLMRequest`: an array of `{ role, content }` messages. */
export function assertPrompt(prompt: unknown, scope: ShapeScope): void {
  if (!Array.isArray(prompt)) throw badField(scope, 'prompt', 'an array of prompt messages', prompt);
  prompt.forEach((message: unknown, index) => {
    if (!isRecord(message)) throw badField(scope, `prompt[${index}]`, 'a prompt message { role, content }', message);
    if (typeof message.role !== 'string' || !PROMPT_ROLES.has(message.role)) {
      throw badField(scope, `prompt[${index}].role`, "'system', 'user', 'assistant' or 'tool'", message.role);
    }
    const content = message.content;
    if (message.role === 'system') {
      if (typeof content !== 'string') throw badField(scope, `prompt[${index}].content`, 'a string (system message)', content);
      return;
    }
    if (!Array.isArray(content)) throw badField(scope, `prompt[${index}].content`, 'an array of content parts', content);
    content.forEach((part: unknown, partIndex) => {
      if (!isRecord(part) || typeof part.type !== 'string') {
        throw badField(scope, `prompt[${index}].content[${partIndex}]`, 'a content part { type, … }', part);
      }
      if (part.type === 'text' && typeof part.text !== 'string') throw badField(scope, `prompt[${index}].content[${partIndex}].text`, 'a string', part.text);
    });
  });
}

/** Checks a cached response returned by `processLLMRequest`: `{ chunks: { type, payload? }[], warnings? }`. */
export function assertCachedResponse(response: unknown, scope: ShapeScope): void {
  if (!isRecord(response)) throw badField(scope, 'response', 'a cached response { chunks }', response);
  const chunks = response.chunks;
  if (!Array.isArray(chunks)) throw badField(scope, 'response.chunks', 'an array of chunks', chunks);
  chunks.forEach((chunk: unknown, index) => {
    if (!isRecord(chunk) || typeof chunk.type !== 'string') throw badField(scope, `response.chunks[${index}]`, 'a chunk { type, payload }', chunk);
    assertChunkPayload(chunk, scope, `response.chunks[${index}]`);
    if (chunk.type === 'finish') assertCachedUsage(chunk.payload, scope, `response.chunks[${index}].payload.output.usage`);
    assertReplayedFields(chunk, scope, `response.chunks[${index}]`);
  });
  if (response.warnings !== undefined && !Array.isArray(response.warnings)) throw badField(scope, 'response.warnings', 'an array', response.warnings);
}

/**
 * What the step reads of a replayed chunk (ids, names, a source's kind, a `finish`'s reason) and
 * whether it can be written as JSON (`replayedChunkProblem`): a malformed cached response is the
 * processor's `ProcessorError`, before any of it is replayed.
 */
function assertReplayedFields(chunk: Record<string, unknown>, scope: ShapeScope, field: string): void {
  const problem = replayedChunkProblem(chunk as { type: string; payload?: unknown });
  if (problem !== undefined) throw new ProcessorError(scope.processorId, scope.hook, `returned ${field}${problem}.`);
}

/** A cached `finish`'s usage, when it gives one, becomes the step's: token counts the run can add up. */
function assertCachedUsage(payload: unknown, scope: ShapeScope, path: string): void {
  const output = isRecord(payload) ? payload.output : undefined;
  const usage = isRecord(output) ? output.usage : undefined;
  if (usage === undefined) return;
  const problem = usageProblem(usage, path);
  if (problem !== undefined) throw new ProcessorError(scope.processorId, scope.hook, `returned ${problem}; ${USAGE_COUNT_RULE}.`);
}

/** Delta chunks whose `payload.text` is appended to text. */
const TEXT_CARRYING = new Set(['text-delta', 'reasoning-delta']);

/**
 * Checks the payload of a chunk a processor produced: a non-`data-*` chunk needs a `payload`
 * object, and a text or reasoning delta a string `payload.text` (so `undefined` is never appended).
 */
export function assertChunkPayload(chunk: Record<string, unknown> | { type: string; payload?: unknown }, scope: ShapeScope, field = 'chunk'): void {
  const type = chunk.type as string;
  if (type.startsWith('data-')) return;
  const payload = (chunk as { payload?: unknown }).payload;
  if (TEXT_CARRYING.has(type)) {
    if (!isRecord(payload) || typeof payload.text !== 'string') {
      const aiSdk = aiSdkShapedChunk(chunk);
      if (aiSdk !== undefined) throw new ProcessorError(scope.processorId, scope.hook, aiSdk);
      throw badField(scope, `${field}.payload.text`, `a string (a ${type} chunk's text)`, isRecord(payload) ? payload.text : payload);
    }
    return;
  }
  const aiSdk = aiSdkShapedChunk(chunk);
  if (aiSdk !== undefined) throw new ProcessorError(scope.processorId, scope.hook, aiSdk);
  if (payload !== undefined && !isRecord(payload)) throw badField(scope, `${field}.payload`, 'an object', payload);
  // a tool chunk's ids and name bind it to its call (the step, the tools and memory read them):
  // one that is not a string would drop the call silently or fail far from here. Text deltas
  // returned above: this costs nothing per delta.
  if (type.startsWith('tool-')) {
    const problem = chunkFieldsProblem(chunk as { type: string; payload?: unknown });
    if (problem !== undefined) throw new ProcessorError(scope.processorId, scope.hook, `returned ${field}${problem}.`);
  }
  // the error of an error chunk is read by the step's record, memory and the client: it must be readable
  if ((type === 'tool-error' || type === 'error') && isRecord(payload)) assertReadableError(payload.error, scope, `${field}.payload.error`);
}

/** `error` can be told apart as an `Error` (or not) and its message read: a revoked Proxy or a throwing getter cannot. */
function assertReadableError(error: unknown, scope: ShapeScope, field: string): void {
  try {
    if (error instanceof Error) void String(error.message);
  } catch {
    throw new ProcessorError(scope.processorId, scope.hook, `${field} cannot be read (a revoked Proxy, or a getter that throws): give an Error or a plain value.`);
  }
}
