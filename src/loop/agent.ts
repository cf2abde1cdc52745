/** The Agent: a configured model, tools and processors; each call is one Observable run. */
import { lastValueFrom, tap, type Observable } from 'rxjs';
import type { ChunkType } from '../processor/chunk-types.js';
import type { AgentCallOptions, AgentConfig, AgentInput, GenerateResult } from './agent-types.js';
import { AgentOutput } from './output/agent-output.js';
import { foldResult } from './output/fold-result.js';
import type { RunEnvironment } from './run-environment.js';
import { createRun } from './run.js';
import { withPacedRun } from './paced-run.js';
import { demandOf } from '../operators/internal/demand.js';
import { validateAgentConfig } from './validate-options.js';

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
  readonly id: string;
  readonly name: string;
  readonly #config: AgentConfig;

  constructor(config: AgentConfig) {
    validateAgentConfig(config); // a TypeError naming the first wrong option
    this.id = config.id;
    this.name = config.name ?? config.id;
    this.#config = config;
  }

  /** One run as a cold Observable of chunks (subscribe to start it). */
  stream$(input: AgentInput, options?: AgentCallOptions): Observable<ChunkType> {
    // the paced variant lets toUIMessageStream hold the run's demand gate (read only as fast as its reader)
    return withPacedRun(createRun(this.#config, input, options), (attach) =>
      createRun(this.#config, input, options, (env) => attach(demandOf(env.ctx))),
    );
  }

  /** Starts one run; its chunks as `fullStream`/`textStream` and its result as promises. */
  async stream(input: AgentInput, options?: AgentCallOptions): Promise<AgentOutput> {
    return new AgentOutput((onEnd) => createRun(this.#config, input, options, onEnd));
  }

  /** Runs to the end and folds the run into a result. */
  async generate(input: AgentInput, options?: AgentCallOptions): Promise<GenerateResult> {
    const chunks: ChunkType[] = [];
    let env: RunEnvironment | undefined;
    await lastValueFrom(
      createRun(this.#config, input, options, (ended) => {
        env = ended;
      }).pipe(tap((chunk) => chunks.push(chunk))),
      { defaultValue: undefined },
    );
    return foldResult(chunks, env);
  }
}
