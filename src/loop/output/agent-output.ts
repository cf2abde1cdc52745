/** What `agent.stream()` returns: the run's chunks as web streams, and promises of its result. */
import type { Observable, Subscription } from 'rxjs';
import type { LanguageModelUsage } from 'ai';
import type { ChunkType, RxFinishReason, ToolCallInfo, ToolResultInfo, TripwirePayload } from '../../processor/chunk-types.js';
import type { StepResult } from '../../processor/processor-types.js';
import type { GenerateResult } from '../agent-types.js';
import type { RunEnvironment } from '../run-environment.js';
import { foldResult } from './fold-result.js';

function settled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined); // unobserved promises must not become unhandled rejections
  return promise;
}

/**
 * A started run (Mastra-style output): `fullStream` and `textStream` as `ReadableStream`s, and
 * promises of the folded result. The run starts at once and buffers for late readers; cancelling
 * `fullStream` cancels the run (provider request and tools).
 *
 * @example
 * ```ts
 * const output = await agent.stream('Hello');
 * for await (const text of output.textStream) process.stdout.write(text);
 * console.log(await output.finishReason);
 * ```
 */
export class AgentOutput {
  readonly fullStream: ReadableStream<ChunkType>;
  readonly textStream: ReadableStream<string>;
  readonly result: Promise<GenerateResult>;
  readonly text: Promise<string>;
  readonly finishReason: Promise<RxFinishReason>;
  readonly usage: Promise<LanguageModelUsage>;
  readonly steps: Promise<StepResult[]>;
  readonly toolCalls: Promise<ToolCallInfo[]>;
  readonly toolResults: Promise<ToolResultInfo[]>;
  readonly tripwire: Promise<TripwirePayload | undefined>;
  readonly object: Promise<unknown>;
  readonly #subscription: Subscription;

  constructor(run: (onEnd: (env: RunEnvironment) => void) => Observable<ChunkType>) {
    let fullController!: ReadableStreamDefaultController<ChunkType>;
    let textController!: ReadableStreamDefaultController<string>;
    let fullOpen = true;
    let textOpen = true;
    this.fullStream = new ReadableStream<ChunkType>({
      start: (controller) => {
        fullController = controller;
      },
      cancel: () => {
        fullOpen = false;
        this.#subscription.unsubscribe();
      },
    });
    this.textStream = new ReadableStream<string>({
      start: (controller) => {
        textController = controller;
      },
      cancel: () => {
        textOpen = false;
      },
    });
    const chunks: ChunkType[] = [];
    let env: RunEnvironment | undefined;
    let resolveResult!: (result: GenerateResult) => void;
    let rejectResult!: (error: unknown) => void;
    this.result = settled(
      new Promise<GenerateResult>((resolve, reject) => {
        resolveResult = resolve;
        rejectResult = reject;
      }),
    );
    this.text = settled(this.result.then((result) => result.text));
    this.finishReason = settled(this.result.then((result) => result.finishReason));
    this.usage = settled(this.result.then((result) => result.usage));
    this.steps = settled(this.result.then((result) => result.steps));
    this.toolCalls = settled(this.result.then((result) => result.toolCalls));
    this.toolResults = settled(this.result.then((result) => result.toolResults));
    this.tripwire = settled(this.result.then((result) => result.tripwire));
    this.object = settled(this.result.then((result) => result.object));
    const close = (): void => {
      if (fullOpen) fullController.close();
      if (textOpen) textController.close();
      fullOpen = textOpen = false;
      try {
        resolveResult(foldResult(chunks, env));
      } catch (error) {
        rejectResult(error);
      }
    };
    this.#subscription = run((ended) => {
      env = ended;
    }).subscribe({
      next: (chunk) => {
        chunks.push(chunk);
        if (fullOpen) fullController.enqueue(chunk);
        if (textOpen && chunk.type === 'text-delta') textController.enqueue(chunk.payload.text);
      },
      error: (error: unknown) => {
        if (fullOpen) fullController.error(error);
        if (textOpen) textController.error(error);
        fullOpen = textOpen = false;
        rejectResult(error);
      },
      complete: close,
    });
  }

  /** Stops the run (aborts the provider request and tools). */
  cancel(): void {
    this.#subscription.unsubscribe();
  }
}
