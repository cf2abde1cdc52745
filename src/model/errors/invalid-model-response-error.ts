import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.InvalidModelResponseError');

/**
 * Options of {@link InvalidModelResponseError}.
 *
 * @example
 * ```ts
 * import type { InvalidModelResponseErrorOptions } from 'rxagent';
 * const options: InvalidModelResponseErrorOptions = { provider: 'openai.chat', modelId: 'gpt-4.1', problem: 'no stream' };
 * ```
 */
export interface InvalidModelResponseErrorOptions {
  /** The model's `provider` (e.g. `'openai.chat'`), or `'unknown provider'`. */
  provider: string;
  /** The model's `modelId`, when it has one. */
  modelId?: string;
  /** What was wrong, e.g. "doStream() resolved with { stream: null }". */
  problem: string;
  /** What the provider code threw while it was being read, if anything. */
  cause?: unknown;
}

/**
 * A provider broke the language-model contract: `doStream` resolved with something that is not
 * `{ stream: ReadableStream }`, the stream's `getReader()` or `read()` misbehaved, a stream part
 * was not an object or had a field the spec does not allow (an id, a name or tool input that is
 * not a string, metadata or values that cannot be written as JSON, a `file` or `source` missing
 * what it needs), a `doGenerate` answer was malformed the same way, or the provider failed with
 * an error that cannot be read or written as JSON. The run ends with one `error` chunk carrying
 * this error (it names the provider, the model and the problem); it is never an unhandled
 * rejection.
 *
 * @example
 * ```ts
 * import { InvalidModelResponseError } from 'rxagent';
 * const { fullStream } = await agent.stream('hi');
 * for await (const chunk of fullStream) {
 *   if (chunk.type === 'error' && InvalidModelResponseError.isInstance(chunk.payload.error)) console.error(chunk.payload.error.provider);
 * }
 * ```
 */
export class InvalidModelResponseError extends RxAgentError {
  private readonly [marker] = true;
  /** The provider's name. */
  readonly provider: string;
  /** The model's id at the provider. */
  readonly modelId: string | undefined;
  /** What the model did wrong. */
  readonly problem: string;

  constructor({ provider, modelId, problem, cause }: InvalidModelResponseErrorOptions) {
    const model = modelId === undefined ? '' : ` (model "${modelId}")`;
    super('InvalidModelResponseError', `Provider "${provider}"${model} broke the model contract: ${problem}`, { cause });
    this.provider = provider;
    this.modelId = modelId;
    this.problem = problem;
  }

  static override isInstance(error: unknown): error is InvalidModelResponseError {
    return hasMarker(error, marker);
  }
}
