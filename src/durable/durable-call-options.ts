/**
 * A durable run's call options: the JSON part of `AgentCallOptions`. Functions (`prepareStep`,
 * `stopWhen`, processors) come from the agent's configuration, which every worker has; what the
 * call gives is stored with the run, so any worker rebuilds the same run from it.
 */
import { RequestContext, closestKey, findNonJson, thrownMessage, type JsonValue } from '../contract/index.js';
import { optionError, type AgentCallOptions, type AgentInput } from '../loop/index.js';
import { storageIdProblem } from '../storage/index.js';
import { NotDurableError } from './errors/not-durable-error.js';
import { storedJson } from './internal/stored-json.js';

/**
 * What `RunWorker.submit` takes: the JSON options of an agent call (passed on to the run as
 * given, `providerOptions` included), the run's id (default: a random UUID), the id of the
 * assistant message its stream starts (default: derived from the run id), and the request
 * context as a plain JSON record.
 *
 * @example
 * ```ts
 * import type { DurableCallOptions } from 'rxagent/durable';
 * const options: DurableCallOptions = { memory: { thread: chatId, resource: userId }, requestContext: { tenant: 'acme' }, maxSteps: 4 };
 * await worker.submit('support', 'Where is my order?', options);
 * ```
 */
export type DurableCallOptions = Pick<
  AgentCallOptions,
  'instructions' | 'memory' | 'maxSteps' | 'maxProcessorRetries' | 'toolChoice' | 'activeTools' | 'modelSettings' | 'providerOptions'
> & {
  /** The run's id (default: a random UUID). The same id again is the same run (`created: false`). */
  runId?: string;
  /**
   * The id of the assistant message the run's stream starts (`start.payload.messageId`). Default:
   * derived from the run id. Bounded as a run id is (non-empty, at most 256 UTF-16 units, no NUL,
   * no lone surrogate, no control characters): anything else is an option error at submit.
   */
  messageId?: string;
  /** Values for processors and tools, as JSON (a `RequestContext` is made of them in every worker). */
  requestContext?: Record<string, JsonValue>;
};

/**
 * What the journal keeps of a submitted call (the run's `input`).
 *
 * @example
 * ```ts
 * const stored: StoredCall = { input: 'Hi', options: { maxSteps: 2 } };
 * ```
 */
export interface StoredCall {
  readonly input: JsonValue;
  readonly options: Record<string, JsonValue>;
}

const durableKeys = Object.keys({
  instructions: true,
  memory: true,
  maxSteps: true,
  maxProcessorRetries: true,
  toolChoice: true,
  activeTools: true,
  modelSettings: true,
  providerOptions: true,
  runId: true,
  messageId: true,
  requestContext: true,
} satisfies Record<keyof DurableCallOptions, true>);

/** Call options a durable run cannot carry, and why. */
const notDurable: Record<string, string> = {
  abortSignal: 'a signal lives in one process; cancel a durable run with worker.cancel(runId) from any instance',
  prepareStep: 'a function cannot be stored with the run; give the agent its prepareStep (input processors) in its configuration',
  stopWhen: 'functions cannot be stored with the run; give the agent its stopWhen in its configuration',
  inputProcessors: 'processors cannot be stored with the run; durable runs use the agent’s configured processors',
  outputProcessors: 'processors cannot be stored with the run; durable runs use the agent’s configured processors',
  errorProcessors: 'processors cannot be stored with the run; durable runs use the agent’s configured processors',
  structuredOutput: 'a schema cannot be stored with the run; use an agent configured for structured output',
  tracingContext: 'a tracing context lives in one process',
  processorTimeoutMs: 'give the agent its processorTimeoutMs in its configuration',
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

/** Deeper than this, options are not copied (the codec writes values at most this deep). */
const MAX_OPTION_DEPTH = 1000;

/** An `Error`'s `name`, read defensively; `undefined` for anything else, or a name that cannot be read. */
function errorName(value: unknown): string | undefined {
  try {
    return value instanceof Error ? String(value.name) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What reading `path` threw, as the `NotDurableError` naming it: `Name: message` cut to 200 code
 * units, read as every error text reads a thrown value (`thrownMessage`); a value that cannot be
 * read either (a revoked Proxy, a null-prototype object) is said so and not kept as the cause.
 */
function unreadable(path: string, error: unknown): NotDurableError {
  const message = thrownMessage(error);
  const name = message === undefined ? undefined : errorName(error);
  const why = message === undefined ? 'a value that cannot be read' : name === undefined ? message : `${name}: ${message}`;
  return new NotDurableError({
    what: path,
    message: `reading it threw (${why.length > 200 ? `${why.slice(0, 200)}…` : why}): a durable run keeps its options as JSON data`,
    ...(message === undefined ? {} : { cause: error }),
  });
}

/** Whether `error` is the `NotDurableError` a read already made (false for a value that cannot be read). */
function isNotDurable(error: unknown): error is NotDurableError {
  try {
    return NotDurableError.isInstance(error);
  } catch {
    return false;
  }
}

/**
 * `value` read once: arrays and plain objects copied, each element and own enumerable property read
 * exactly once (a getter answering differently on each read, or a Proxy, cannot make two readers of
 * the options disagree); anything else kept as it is, for {@link strictJson} to name. What a getter or
 * a Proxy trap throws is a `NotDurableError` naming the path.
 */
function readOnce(value: unknown, path: string, depth: number, onPath: Set<object>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  try {
    if (onPath.has(value)) throw new NotDurableError({ what: path, message: 'a cycle is not JSON: a durable run keeps its options as JSON' });
    if (depth >= MAX_OPTION_DEPTH) throw new NotDurableError({ what: path, message: `nested deeper than ${MAX_OPTION_DEPTH} levels: a durable run keeps its options as JSON` });
    if (Array.isArray(value)) {
      onPath.add(value);
      const length = value.length;
      const copy = new Array<unknown>(length);
      for (let index = 0; index < length; index++) copy[index] = readOnce(value[index], `${path}[${index}]`, depth + 1, onPath);
      onPath.delete(value);
      return copy;
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return value;
    onPath.add(value);
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      // defined, not assigned: a `__proto__` key (JSON.parse makes one) stays an own property
      Object.defineProperty(copy, key, { value: readOnce((value as Record<string, unknown>)[key], `${path}.${key}`, depth + 1, onPath), enumerable: true, writable: true, configurable: true });
    }
    onPath.delete(value);
    return copy;
  } catch (error) {
    throw isNotDurable(error) ? error : unreadable(path, error);
  }
}

/** C0 controls and DEL: what the run refuses in a run id (it goes into chunks, logs and headers). */
const controlCharacter = /[\u0000-\u001f\u007f]/;

/**
 * What is wrong with a message id, or `undefined`: it is bounded as a run id is — an id every store
 * holds (non-empty, at most 256 UTF-16 units, no NUL, well-formed UTF-16) without control
 * characters (it goes into the run's `start` chunk, the UI stream and memory).
 *
 * @example
 * ```ts
 * messageIdProblem('m-1');     // undefined
 * messageIdProblem('m\nx: 1'); // 'the id contains control characters (U+0000–U+001F, U+007F)'
 * ```
 */
export function messageIdProblem(value: unknown): string | undefined {
  const problem = storageIdProblem(value);
  if (problem !== undefined) return problem.message;
  return controlCharacter.test(value as string) ? 'the id contains control characters (U+0000–U+001F, U+007F)' : undefined;
}

/** A submit's message id, checked ({@link messageIdProblem}): an option error naming it. */
function checkMessageId(value: unknown): void {
  const why = messageIdProblem(value);
  if (why !== undefined) throw optionError(`submit(agent, input, options): options.messageId is not a valid id: ${why}.`);
}

/** `value` at `path` must be strictly JSON (`NotDurableError` naming the path and what was found). */
function strictJson(value: unknown, path: string): JsonValue {
  const found = findNonJson(value);
  if (found !== undefined) {
    throw new NotDurableError({ what: `${path}${found.path.slice(1)}`, message: `a ${found.type} is not JSON: a durable run keeps its options as JSON` });
  }
  return value as JsonValue;
}

/**
 * A submit's call read once: what the journal stores and the run id given. The options object and
 * everything in it is read exactly once (see {@link storedCallOf}); the run's row, the processors'
 * check and the stored call are all made of that one reading.
 *
 * @example
 * ```ts
 * submittedCallOf('Hi', { runId: 'r1', maxSteps: 2 }); // { stored: { input: 'Hi', options: { maxSteps: 2 } }, runId: 'r1' }
 * ```
 */
export function submittedCallOf(input: AgentInput, options: DurableCallOptions | undefined): { stored: StoredCall; runId: unknown } {
  let given: unknown;
  try {
    given = readOnce(options, 'options', 0, new Set());
    if (given !== undefined && !isRecord(given)) throw new TypeError('submit(agent, input, options): options must be a plain object.');
  } catch (error) {
    throw NotDurableError.isInstance(error) || error instanceof TypeError ? error : unreadable('options', error);
  }
  const stored: Record<string, JsonValue> = {};
  let runId: unknown;
  for (const [key, value] of Object.entries(given ?? {})) {
    if (value === undefined) continue;
    if (key === 'runId') {
      runId = value;
      continue;
    }
    // own keys only: `constructor`, `toString`, `__proto__` are unknown options, not Object.prototype's members
    if (Object.hasOwn(notDurable, key)) throw new NotDurableError({ what: `options.${key}`, message: notDurable[key] as string });
    if (!durableKeys.includes(key)) {
      const closest = closestKey(key, durableKeys);
      throw new TypeError(`submit(agent, input, options): unknown option "${key}"${closest === undefined ? '' : ` (did you mean "${closest}"?)`}.`);
    }
    if (key === 'requestContext' && !isRecord(value)) {
      throw new NotDurableError({ what: 'options.requestContext', message: 'a durable run takes its request context as a plain JSON record ({ key: value })' });
    }
    if (key === 'messageId') checkMessageId(value);
    Object.defineProperty(stored, key, { value: strictJson(value, `options.${key}`), enumerable: true, writable: true, configurable: true });
  }
  let json: JsonValue;
  try {
    // stored as given: an own `__proto__` key too (a walk that assigned keys dropped it)
    json = storedJson(input, 'the input');
  } catch (error) {
    throw new NotDurableError({ what: 'input', message: (error as Error).message, cause: error });
  }
  return { stored: { input: json, options: stored }, runId };
}

/**
 * Checks a submit's options and input and returns what the journal stores: `NotDurableError` for
 * what a durable run cannot carry (or options that cannot be read: a Proxy, a getter that throws),
 * `TypeError` for an unknown option (with the closest known one). The options are read once.
 *
 * @example
 * ```ts
 * storedCallOf('Hi', { maxSteps: 2 }); // { input: 'Hi', options: { maxSteps: 2 } }
 * storedCallOf('Hi', { requestContext: { at: new Date() } }); // NotDurableError: options.requestContext.at
 * ```
 */
export function storedCallOf(input: AgentInput, options: DurableCallOptions | undefined): StoredCall {
  return submittedCallOf(input, options).stored;
}

/**
 * The call options a worker runs a stored call with (and a submit checks with the run's own
 * check, before anything is stored): the stored options without `messageId` (the worker puts it
 * on the run's `start`), the run's id, a `RequestContext` made of the stored record, the signal.
 *
 * @example
 * ```ts
 * runCallOptionsOf('r1', { input: 'Hi', options: { maxSteps: 2 } }, signal); // { maxSteps: 2, runId: 'r1', requestContext, abortSignal: signal }
 * ```
 */
export function runCallOptionsOf(runId: string, stored: StoredCall, abortSignal: AbortSignal): AgentCallOptions & { requestContext: RequestContext } {
  const { requestContext, messageId: _messageId, ...options } = stored.options;
  const values = isRecord(requestContext) ? Object.entries(requestContext) : [];
  return { ...(options as AgentCallOptions), runId, requestContext: new RequestContext(values), abortSignal };
}

/**
 * The thread and resource of a stored call (for `activeRun` and the run's row).
 *
 * @example
 * ```ts
 * threadOf({ memory: { thread: 't1', resource: 'u1' } }); // { threadId: 't1', resourceId: 'u1' }
 * ```
 */
export function threadOf(options: Record<string, JsonValue>): { threadId?: string; resourceId?: string } {
  const memory = options['memory'];
  if (!isRecord(memory)) return {};
  const thread = memory['thread'];
  const threadId = typeof thread === 'string' ? thread : isRecord(thread) && typeof thread['id'] === 'string' ? thread['id'] : undefined;
  const resource = memory['resource'];
  return { ...(threadId === undefined ? {} : { threadId }), ...(typeof resource === 'string' ? { resourceId: resource } : {}) };
}
