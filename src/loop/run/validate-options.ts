/**
 * The Agent's options checked at the public surface. A wrong type or an out-of-range number is a
 * `TypeError` naming the option: thrown by `new Agent(config)`; for a call's options (and
 * processor lists a function returned) it is the run's `error` chunk and `generate()`'s
 * rejection. An unknown key is a `TypeError` naming it and the closest known key (a typo such as
 * `instrutions` would otherwise be silently ignored); `undefined` values of known keys are tolerated.
 */
import { callSettingsProblem, readCallSettings } from '../../contract/call-settings-check.js';
import { checkProcessorList } from '../../contract/processor-checks.js';
import { InvalidMessageError } from '../../message-list/errors/invalid-message-error.js';
import type { AgentCallOptions, AgentConfig } from '../agent-types.js';
import { closestKey } from '../../contract/closest-key.js';
import { rejectMisusedModel } from '../../model/resolve-model.js';
import { optionError } from '../data/option-error.js';

export { isOptionError, optionError } from '../data/option-error.js';

function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  return typeof value;
}

function fail(path: string, expected: string, value: unknown): never {
  throw optionError(`${path} must be ${expected} (got ${shown(value)}).`);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

// The known keys, checked against the option types at compile time (`satisfies`): a field added to
// AgentConfig / AgentCallOptions without a row here fails `npm run typecheck`. `processorTimeoutMs`
// is listed ahead of its declaration (being added to both option types in a parallel change).
const callOptionKeys = Object.keys({
  instructions: true,
  inputProcessors: true,
  outputProcessors: true,
  errorProcessors: true,
  maxProcessorRetries: true,
  processorTimeoutMs: true,
  requestContext: true,
  memory: true,
  abortSignal: true,
  toolChoice: true,
  activeTools: true,
  modelSettings: true,
  providerOptions: true,
  structuredOutput: true,
  maxSteps: true,
  stopWhen: true,
  prepareStep: true,
  tracingContext: true,
  runId: true,
  generateWith: true,
} satisfies Record<keyof AgentCallOptions | 'processorTimeoutMs', true>);

const agentConfigKeys = Object.keys({
  id: true,
  name: true,
  description: true,
  instructions: true,
  model: true,
  providers: true,
  tools: true,
  memory: true,
  inputProcessors: true,
  outputProcessors: true,
  errorProcessors: true,
  maxProcessorRetries: true,
  processorTimeoutMs: true,
  maxSteps: true,
  stopWhen: true,
  toolConcurrency: true,
  defaultOptions: true,
  generateId: true,
  now: true,
} satisfies Record<keyof AgentConfig | 'processorTimeoutMs', true>);

const memoryCallKeys = Object.keys({ thread: true, resource: true, readOnly: true } satisfies Record<keyof NonNullable<AgentCallOptions['memory']>, true>);

/** Throws a `TypeError` for the first own key of `options` that is not in `known`, naming the closest known key. */
function rejectUnknownKeys(options: Record<string, unknown>, known: readonly string[], path: string): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const closest = closestKey(key, known);
    const hint = closest === undefined ? `known options: ${known.join(', ')}` : `did you mean ${path}.${closest}?`;
    throw optionError(`${path}.${key} is not an option (${hint}).`);
  }
}

function integerAtLeast(value: unknown, minimum: number, path: string): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) fail(path, `a whole number ≥ ${minimum}`, value);
}

function optionalFunction(value: unknown, path: string): void {
  if (value !== undefined && typeof value !== 'function') fail(path, 'a function', value);
}

/** `stopWhen`: a condition function, or a non-empty array of them. */
function validateStopWhen(value: unknown, path: string): void {
  if (value === undefined || typeof value === 'function') return;
  if (!Array.isArray(value) || value.length === 0) fail(path, 'a stop condition (a function of { steps }) or a non-empty array of them', value);
  value.forEach((condition: unknown, index) => {
    if (typeof condition !== 'function') fail(`${path}[${index}]`, 'a function', condition);
  });
}

/** A processor list: an array of processor objects, each with a non-empty string `id`. */
export function validateProcessors(list: unknown, path: string): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) fail(path, 'an array of processors', list);
  list.forEach((processor: unknown, index) => {
    if (!isObject(processor)) fail(`${path}[${index}]`, 'a processor object', processor);
    if (typeof processor.id !== 'string' || processor.id.length === 0) fail(`${path}[${index}].id`, 'a non-empty string', processor.id);
  });
  checkProcessorList(list, path, optionError); // misspelt hooks, a processor in a list that runs none of its hooks
}

function validateInstructions(value: unknown, path: string): void {
  if (value === undefined || typeof value === 'string') return;
  const items = Array.isArray(value) ? value : [value];
  items.forEach((item: unknown, index) => {
    const where = Array.isArray(value) ? `${path}[${index}]` : path;
    if (typeof item === 'string') return;
    if (!isObject(item) || item.role !== 'system' || typeof item.content !== 'string') fail(where, "a string or a { role: 'system', content } message", item);
  });
}

function validateTools(value: unknown, path: string): void {
  if (value === undefined) return;
  if (!isObject(value)) fail(path, 'an object of tools (name → tool)', value);
  for (const [name, tool] of Object.entries(value)) if (!isObject(tool)) fail(`${path}.${name}`, 'a tool object', tool);
}

/** `toolChoice`: `'auto'`, `'none'`, `'required'` or `{ type: 'tool', toolName }` (a null or a bare `{ type: 'tool' }` would reach the provider call). */
function validateToolChoice(value: unknown, path: string): void {
  if (value === undefined || value === 'auto' || value === 'none' || value === 'required') return;
  if (!isObject(value) || value.type !== 'tool') fail(path, "'auto', 'none', 'required' or { type: 'tool', toolName }", value);
  if (typeof value.toolName !== 'string' || value.toolName.length === 0) fail(`${path}.toolName`, 'a non-empty string', value.toolName);
}

/**
 * `modelSettings` (a call's, an Agent's `defaultOptions`', what `prepareStep` gave a step; `path`
 * names it): the rules of `callSettingsProblem` — numbers finite (whole where the provider wants a
 * count), `stopSequences` strings, `headers` safe to send — as an option error naming the field.
 *
 * @example
 * ```ts
 * validateModelSettings({ temperature: Number.NaN }, 'prepareStep().modelSettings');
 * // TypeError: prepareStep().modelSettings.temperature must be a finite number (got number NaN).
 * ```
 */
export function validateModelSettings(value: unknown, path: string): void {
  if (value === undefined) return;
  if (!isObject(value)) fail(path, 'an object', value);
  const problem = callSettingsProblem(value);
  if (problem === undefined) return;
  if (problem.kind === 'value') fail(`${path}.${problem.field}`, problem.expected, problem.value);
  if (problem.kind === 'header-name') {
    const { name } = problem;
    throw optionError(`${path}.headers: ${JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)} is not a valid header name.`);
  }
  throw optionError(`${path}.${problem.field} must not hold CR, LF or NUL (header injection).`);
}

/** A run id: non-empty, and no control characters (it goes into chunks, logs and storage keys). */
function validateRunId(value: unknown, path: string): void {
  if (value === undefined) return;
  if (typeof value !== 'string' || value.length === 0) fail(path, 'a non-empty string', value);
  if (/[\u0000-\u001f\u007f]/.test(value)) throw optionError(`${path} must be a string without control characters (got ${shown(value)}).`);
}

/**
 * The call's options read once, as plain objects (`modelSettings`, its `headers` and `stopSequences` too): what
 * is checked is what the run uses, even when the caller's object has getters that change between
 * reads or is a Proxy. Throws what a getter throws. Anything not an object is returned as is (the
 * check names it).
 */
export function readCallOptions(options: unknown): unknown {
  if (!isObject(options)) return options;
  const copy: Record<string, unknown> = { ...options };
  if (copy.modelSettings !== undefined) copy.modelSettings = readCallSettings(copy.modelSettings);
  return copy;
}

/** The call's options as read once ({@link readCallOptions}), or what reading them threw (the run's error). */
export type OptionsRead = { readonly options: unknown } | { readonly thrown: unknown };

/**
 * Reads the call's options once (see {@link readCallOptions}), catching what a getter of theirs
 * throws: a run, and `stream()`'s text stream, use this one reading.
 *
 * @example
 * ```ts
 * const read = readOptionsOnce(options);
 * if ('thrown' in read) throw read.thrown; // inside the run: its error chunk
 * ```
 */
export function readOptionsOnce(options: unknown): OptionsRead {
  try {
    return { options: readCallOptions(options) };
  } catch (thrown) {
    return { thrown };
  }
}

/** A RequestContext, ours or alike (a `Map`): `get` and `set`, and `has` and `entries`, which the run reads through too (ReadableRequestContext). */
function isRequestContextLike(value: unknown): boolean {
  return isObject(value) && ['get', 'set', 'has', 'entries'].every((method) => typeof value[method] === 'function');
}

/** The options of one call (`stream$`, `stream`, `generate`), or an Agent's `defaultOptions`. */
export function validateCallOptions(options: unknown, path = 'options'): asserts options is AgentCallOptions | undefined {
  if (options === undefined) return;
  if (!isObject(options)) fail(path, 'an object', options);
  rejectUnknownKeys(options, callOptionKeys, path);
  validateInstructions(options.instructions, `${path}.instructions`);
  validateProcessors(options.inputProcessors, `${path}.inputProcessors`);
  validateProcessors(options.outputProcessors, `${path}.outputProcessors`);
  validateProcessors(options.errorProcessors, `${path}.errorProcessors`);
  integerAtLeast(options.maxProcessorRetries, 0, `${path}.maxProcessorRetries`);
  integerAtLeast(options.processorTimeoutMs, 1, `${path}.processorTimeoutMs`);
  integerAtLeast(options.maxSteps, 1, `${path}.maxSteps`);
  validateStopWhen(options.stopWhen, `${path}.stopWhen`);
  if (options.abortSignal !== undefined && !(options.abortSignal instanceof AbortSignal)) fail(`${path}.abortSignal`, 'an AbortSignal', options.abortSignal);
  const context = options.requestContext;
  if (context !== undefined && !isRequestContextLike(context)) {
    fail(`${path}.requestContext`, 'a RequestContext', context);
  }
  const memory = options.memory;
  if (memory !== undefined) {
    if (!isObject(memory)) fail(`${path}.memory`, 'an object { thread, resource }', memory);
    rejectUnknownKeys(memory, memoryCallKeys, `${path}.memory`);
    const thread = memory.thread;
    if (!(typeof thread === 'string' && thread.length > 0) && !(isObject(thread) && typeof thread.id === 'string' && thread.id.length > 0)) {
      fail(`${path}.memory.thread`, 'a thread id or { id }', thread);
    }
    if (typeof memory.resource !== 'string' || memory.resource.length === 0) fail(`${path}.memory.resource`, 'a non-empty string', memory.resource);
  }
  const activeTools = options.activeTools;
  if (activeTools !== undefined && (!Array.isArray(activeTools) || activeTools.some((name) => typeof name !== 'string'))) {
    fail(`${path}.activeTools`, 'an array of tool names', activeTools);
  }
  optionalFunction(options.prepareStep, `${path}.prepareStep`);
  validateRunId(options.runId, `${path}.runId`);
  validateToolChoice(options.toolChoice, `${path}.toolChoice`);
  validateModelSettings(options.modelSettings, `${path}.modelSettings`);
  if (options.generateWith !== undefined && options.generateWith !== 'doGenerate' && options.generateWith !== 'doStream') {
    fail(`${path}.generateWith`, "'doGenerate' or 'doStream'", options.generateWith);
  }
  for (const key of ['modelSettings', 'providerOptions', 'structuredOutput'] as const) {
    if (options[key] !== undefined && !isObject(options[key])) fail(`${path}.${key}`, 'an object', options[key]);
  }
  // each provider's entry is that provider's options (the AI SDK's `Record<string, JSONValue>`):
  // no `null`/`undefined` entry, which a processInputStep hook's copy would otherwise make `{}`
  if (isObject(options.providerOptions)) {
    for (const [provider, entry] of Object.entries(options.providerOptions)) {
      if (!isObject(entry)) fail(`${path}.providerOptions.${provider}`, `an object (the options of provider ${JSON.stringify(provider)})`, entry);
    }
  }
}

/** What the function forms of an Agent's options returned for a run (tools, instructions, processor lists). */
export function validateResolved(resolved: { tools: unknown; instructions: unknown; processors: Array<[string, unknown]> }): void {
  validateTools(resolved.tools, 'config.tools');
  validateInstructions(resolved.instructions, 'instructions');
  for (const [path, list] of resolved.processors) validateProcessors(list, path);
}

/** An Agent's configuration (`new Agent(config)`). */
export function validateAgentConfig(config: unknown): asserts config is AgentConfig {
  if (!isObject(config) || typeof config.id !== 'string' || config.id.length === 0) {
    throw optionError('new Agent(config): config.id must be a non-empty string.');
  }
  if (config.model === undefined || config.model === null) {
    throw optionError(`new Agent({ id: ${JSON.stringify(config.id)} }): config.model is required.`);
  }
  if (typeof config.model !== 'string' && typeof config.model !== 'object' && typeof config.model !== 'function') {
    fail('config.model', "a language model, a 'provider/model' id or a function returning one", config.model);
  }
  // a provider passed as the model (`openai` for `openai('gpt-4o')`) would otherwise be called as a
  // function of { requestContext } and fail at run time with a message about its model id
  rejectMisusedModel(config.model, { where: `new Agent({ id: ${JSON.stringify(config.id)} }): config.model` });
  rejectUnknownKeys(config, agentConfigKeys, 'config');
  if (config.name !== undefined && typeof config.name !== 'string') fail('config.name', 'a string', config.name);
  if (typeof config.instructions !== 'function') validateInstructions(config.instructions, 'config.instructions');
  if (typeof config.tools !== 'function') validateTools(config.tools, 'config.tools');
  for (const key of ['inputProcessors', 'outputProcessors', 'errorProcessors'] as const) {
    if (typeof config[key] !== 'function') validateProcessors(config[key], `config.${key}`);
  }
  integerAtLeast(config.maxProcessorRetries, 0, 'config.maxProcessorRetries');
  integerAtLeast(config.processorTimeoutMs, 1, 'config.processorTimeoutMs');
  integerAtLeast(config.maxSteps, 1, 'config.maxSteps');
  validateStopWhen(config.stopWhen, 'config.stopWhen');
  integerAtLeast(config.toolConcurrency, 1, 'config.toolConcurrency');
  const memory = config.memory;
  if (memory !== undefined && (!isObject(memory) || typeof memory.processorsFor !== 'function')) fail('config.memory', 'a Memory', memory);
  optionalFunction(config.generateId, 'config.generateId');
  optionalFunction(config.now, 'config.now');
  validateCallOptions(config.defaultOptions, 'config.defaultOptions');
  if (memory === undefined && config.defaultOptions?.memory !== undefined) {
    throw optionError('config.defaultOptions.memory is set but the agent has no memory: give the Agent a `memory` (e.g. new Memory({ storage })).');
  }
}

/**
 * What a run starts from: the call's options (as {@link validateCallOptions}), a `memory` call
 * option only on an agent that has memory, and an input that is not empty (`''` and `[]` alike are
 * an `InvalidMessageError`: there is nothing to answer).
 */
export function validateRunArguments(config: AgentConfig, input: unknown, options: unknown): void {
  validateCallOptions(options);
  if (options?.memory !== undefined && config.memory === undefined) {
    throw optionError(
      `options.memory is set but agent ${JSON.stringify(config.id)} has no memory: give the Agent a \`memory\` (new Agent({ …, memory: new Memory({ storage }) })) to use threads.`,
    );
  }
  if (Array.isArray(input) && input.length === 0) {
    throw new InvalidMessageError([{ path: [], message: 'must not be empty: give at least one message' }]);
  }
}
