/**
 * A durable run's call options: the JSON part of `AgentCallOptions`. Functions (`prepareStep`,
 * `stopWhen`, processors) come from the agent's configuration, which every worker has; what the
 * call gives is stored with the run, so any worker rebuilds the same run from it.
 */
import { closestKey, findNonJson, toJsonValue, type JsonValue } from '../contract/index.js';
import type { AgentCallOptions, AgentInput } from '../loop/index.js';
import { NotDurableError } from './errors/not-durable-error.js';

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
  /** The id of the assistant message the run's stream starts (`start.payload.messageId`). Default: derived from the run id. */
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

/** `value` at `path` must be strictly JSON (`NotDurableError` naming the path and what was found). */
function strictJson(value: unknown, path: string): JsonValue {
  const found = findNonJson(value);
  if (found !== undefined) {
    throw new NotDurableError({ what: `${path}${found.path.slice(1)}`, message: `a ${found.type} is not JSON: a durable run keeps its options as JSON` });
  }
  return value as JsonValue;
}

/**
 * Checks a submit's options and input and returns what the journal stores: `NotDurableError` for
 * what a durable run cannot carry, `TypeError` for an unknown option (with the closest known one).
 *
 * @example
 * ```ts
 * storedCallOf('Hi', { maxSteps: 2 }); // { input: 'Hi', options: { maxSteps: 2 } }
 * storedCallOf('Hi', { requestContext: { at: new Date() } }); // NotDurableError: options.requestContext.at
 * ```
 */
export function storedCallOf(input: AgentInput, options: DurableCallOptions | undefined): StoredCall {
  if (options !== undefined && !isRecord(options)) throw new TypeError('submit(agent, input, options): options must be a plain object.');
  const stored: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(options ?? {})) {
    if (value === undefined || key === 'runId') continue;
    const why = notDurable[key];
    if (why !== undefined) throw new NotDurableError({ what: `options.${key}`, message: why });
    if (!durableKeys.includes(key)) {
      const closest = closestKey(key, durableKeys);
      throw new TypeError(`submit(agent, input, options): unknown option "${key}"${closest === undefined ? '' : ` (did you mean "${closest}"?)`}.`);
    }
    if (key === 'requestContext' && !isRecord(value)) {
      throw new NotDurableError({ what: 'options.requestContext', message: 'a durable run takes its request context as a plain JSON record ({ key: value })' });
    }
    if (key === 'messageId' && (typeof value !== 'string' || value === '')) throw new TypeError('submit(agent, input, options): messageId must be a non-empty string.');
    stored[key] = strictJson(value, `options.${key}`);
  }
  let json: JsonValue;
  try {
    json = toJsonValue(input, 'the input');
  } catch (error) {
    throw new NotDurableError({ what: 'input', message: (error as Error).message, cause: error });
  }
  return { input: json, options: stored };
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
