/** The Agent: a configured model, tools and processors; each call is one Observable run. */
import type { Observable } from 'rxjs';
import type { ChunkType } from '../contract/chunk-types.js';
import type { ProcessorLike } from '../contract/processor-types.js';
import type { AgentCallOptions, AgentConfig, AgentInput, DynamicArgument, GenerateResult, StreamCallOptions } from './agent-types.js';
import { AgentOutput } from './consumers/agent-output.js';
import { foldRun } from './consumers/fold-result.js';
import type { RetryBudgets } from './consumers/text-gate.js';
import { DEFAULT_API_ERROR_RETRIES } from '../operators/retry-on-api-error.js';
import { DemandGate } from '../contract/demand-gate.js';
import { hasHook } from '../contract/has-hook.js';
import { createRun, type RunWiring } from './run/create-run.js';
import type { DurableRunItem } from './run/run-events.js';
import { PacedRun } from './consumers/paced-run.js';
import { readOptionsOnce, validateAgentConfig } from './run/validate-options.js';

/** Whether any of the processor lists may hold a `processAPIError` hook (a dynamic list may). */
function mayRecoverAPIErrors(lists: ReadonlyArray<DynamicArgument<readonly ProcessorLike[]> | undefined>): boolean {
  return lists.some((list) => typeof list === 'function' || (list !== undefined && hasHook(list, 'processAPIError')));
}

/** The retry budgets a run of `config` with `options` may use (what `textStream` holds text for). */
function retryBudgets(config: AgentConfig, options: AgentCallOptions | undefined): RetryBudgets {
  const call = { ...config.defaultOptions, ...options };
  const maxProcessorRetries = call.maxProcessorRetries ?? config.maxProcessorRetries;
  const errorProcessors = call.errorProcessors ?? config.errorProcessors;
  const recoverable = mayRecoverAPIErrors([call.inputProcessors ?? config.inputProcessors, call.outputProcessors ?? config.outputProcessors, errorProcessors]);
  return {
    tripwire: maxProcessorRetries ?? 0,
    apiError: !recoverable ? 0 : (maxProcessorRetries ?? (errorProcessors === undefined ? 0 : DEFAULT_API_ERROR_RETRIES)),
  };
}

/** The budgets of a run whose options could not be read (it ends with that error before any step). */
const NO_RETRIES: RetryBudgets = { tripwire: 0, apiError: 0 };

/** Reads an agent's configuration (set once, by the class's static block: `#config` stays private). */
let configOf: (agent: Agent) => AgentConfig;

/**
 * An LLM agent whose every run is an RxJS pipeline of processor hooks.
 *
 * - `stream$()` — a cold `Observable<ChunkType>`: each subscription is one run; unsubscribing
 *   cancels the provider request and tools.
 * - `stream()` — starts a run and returns web streams plus result promises (Mastra-style).
 * - `generate()` — the same streaming run folded into a result; a tripwired run resolves with
 *   `tripwire` and `finishReason: 'other'`; an error rejects.
 *
 * @example
 * ```ts
 * import { Agent } from 'rxagent';
 * const agent = new Agent({ id: 'support', instructions: 'Be brief.', model, outputProcessors: [redactor] });
 * agent.stream$('Hello').subscribe((chunk) => console.log(chunk.type));
 * const { text, tripwire } = await agent.generate('Hello');
 * ```
 */
export class Agent {
  /** The id. */
  readonly id: string;
  /** A human-readable name. */
  readonly name: string;
  readonly #config: AgentConfig;

  static {
    configOf = (agent) => agent.#config;
  }

  constructor(config: AgentConfig) {
    validateAgentConfig(config); // a TypeError naming the first wrong option
    this.id = config.id;
    this.name = config.name ?? config.id;
    this.#config = config;
  }

  /**
   * One run as a cold Observable of chunks (subscribe to start it). With `options.demand`, the run
   * reads its provider only while nobody holds that gate (the consumer's: see
   * {@link StreamCallOptions.demand}); without it, a consumer handed this Observable itself
   * (`toUIMessageStream(agent.stream$(…))`) paces the run with a gate of its own.
   */
  stream$(input: AgentInput, options?: StreamCallOptions): Observable<ChunkType> {
    const config = this.#config;
    let callOptions: AgentCallOptions | undefined = options;
    if (typeof options === 'object' && options !== null && 'demand' in options) {
      const { demand, ...rest } = options;
      if (demand !== undefined) return createRun(config, input, rest, { demand, results: false });
      callOptions = rest;
    }
    return new PacedRun((demand) => createRun(config, input, callOptions, { ...(demand === undefined ? {} : { demand }), results: false }));
  }

  /** Starts one run; its chunks as `fullStream`/`textStream` and its result as promises. */
  async stream(input: AgentInput, options?: AgentCallOptions): Promise<AgentOutput> {
    const demand = new DemandGate();
    // one reading of the options for the run and for the budgets its text stream holds text by
    const read = readOptionsOnce(options);
    const budgets = 'options' in read ? retryBudgets(this.#config, read.options as AgentCallOptions | undefined) : NO_RETRIES;
    return new AgentOutput(createRun(this.#config, input, options, { demand, read }), budgets, demand);
  }

  /** Runs to the end and folds the run into a result. */
  async generate(input: AgentInput, options?: AgentCallOptions): Promise<GenerateResult> {
    return foldRun(createRun(this.#config, input, options, { folded: true }));
  }
}

/**
 * One run of `agent` with a consumer's wiring — its events, not only its chunks. Internal to the
 * package: `rxagent/durable`'s worker runs an agent with its commit points as values
 * (`commitPoints: true`), a tool ledger, a memory fence and a snapshot to go on from.
 *
 * @example
 * ```ts
 * // internal: the durable worker (src/durable/internal/run-execution.ts)
 * runAgent(agent, input, options, { demand, commitPoints: true, tools, restore }).pipe(map(recordOf), journalTo(journal, lease, { demand }));
 * ```
 */
export function runAgent(agent: Agent, input: AgentInput, options: AgentCallOptions | undefined, wiring: RunWiring): Observable<DurableRunItem> {
  return createRun(configOf(agent), input, options, wiring);
}

/**
 * The configuration `agent` was built with (read, never changed). Internal to the package: the
 * durable worker checks an agent's processors and memory before it stores a run.
 *
 * @example
 * ```ts
 * // internal: the durable worker
 * const { memory } = agentConfig(agent);
 * ```
 */
export function agentConfig(agent: Agent): AgentConfig {
  return configOf(agent);
}
