/**
 * The model's output in a step: `step-start`, the content (live or a cached replay) through the
 * fenced `processOutputStream` chain into the step's accumulator, and — at the end of the run's
 * output — `finish` through the same chain, before the step's message is built.
 */
import {
  EMPTY,
  Observable,
  catchError,
  concatMap,
  defer,
  filter,
  finalize,
  from,
  isObservable,
  map,
  of,
  tap,
  throwError,
  type MonoTypeOperatorFunction,
  type Subscriber,
} from 'rxjs';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { CachedLLMStepResponse } from '../../contract/processor-types.js';
import { processToolResult } from '../../operators/process-tool-result.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { addUsage } from '../../model/usage.js';
import { ModelCallError } from '../../model/errors/model-call-error.js';
import { modelChunks, type ModelCall } from '../../model/model-chunks.js';
import { modelPartToChunk } from '../../model/model-part-to-chunk.js';
import { getObservableStream } from '../../model/observable-stream.js';
import { readModelStream, type ModelRead, type PartSink } from '../../model/stream-model.js';
import type { OutputSink, OutputStreamPass } from '../../operators/process-output-stream.js';
import { recordToolCalls } from './output-chain.js';
import { stepStartChunk } from './step-chunks.js';
import { subscribeLinked } from '../internal/subscribe-linked.js';
import { withPartialObjects } from './structured-output.js';
import { admitToStep, callsToRun, continuesAfter, type Attempt } from './attempt.js';
import type { StepEnvironment } from './step-environment.js';

/** The chunks of a cached response (`processLLMRequest` returned `response`), replayed as the model's. */
export function cachedContent(env: StepEnvironment, attempt: Attempt, cached: CachedLLMStepResponse): Observable<ChunkType> {
  attempt.fromCache = true;
  attempt.facts.finishReason = 'stop';
  attempt.meta = {
    ...(cached.warnings ? { warnings: cached.warnings } : {}),
    ...(cached.request === undefined ? {} : { request: cached.request as { body?: unknown } }),
  };
  return from(cached.chunks).pipe(
    map((item): ChunkType => {
      const chunk = item.type.startsWith('data-')
        ? ({ type: item.type as `data-${string}`, data: item.data } as ChunkType)
        : ({ type: item.type, runId: env.runId, from: 'AGENT', payload: item.payload } as ChunkType);
      if (chunk.type === 'tool-call') attempt.facts.finishReason = 'tool-calls';
      return chunk;
    }),
  );
}

/**
 * The step's output: `step-start`, the `writer.custom()` chunks waiting, then the content — a
 * live model call, or chunks (a cached replay) — through `processToolResult` for provider-executed
 * results, the output chain and its fence, into the step's accumulator (and partial objects for
 * structured output).
 *
 * With the run's chain at hand (`env.openChain`) this is one subscriber: each part the model's
 * stream yields is converted, recorded, run through the processors, fenced and accumulated in the
 * read's own frame, with no subscriber hop between (see {@link StepOutput}); a step whose model
 * call must stay an Observable (virtual-time models, provider-executed results with a
 * `processToolResult` hook) subscribes it once.
 *
 * ```
 * model:   --a--b--|
 * output:  S-A--B--|      (S = step-start; A, B = the chunks as the processors returned them)
 * ```
 */
export function stepOutput(env: StepEnvironment, attempt: Attempt, content: Observable<ChunkType> | ModelCall): Observable<ChunkType> {
  const structured = attempt.stepInput?.structuredOutput;
  env.requestedToolCalls?.clear();
  const partial = structured !== undefined && structured.model === undefined ? withPartialObjects(env.runId, attempt.accumulator) : (chunks$: Observable<ChunkType>) => chunks$;
  const open = env.openChain;
  const live = !isObservable(content) && !needsProviderResults(env) && getObservableStream(content.model) === undefined ? content : undefined;
  const source =
    live ??
    (isObservable(content) ? content : modelChunks(content.model, content.callOptions, content.onResponse, content.runId, content.facts, content.demand)).pipe(
      recordToolCalls(env.requestedToolCalls),
      providerToolResults(env, attempt.stepNumber),
    );
  return partial(new Observable<ChunkType>((subscriber) => new StepOutput(env, attempt, subscriber, open).start(source)));
}

/** Whether provider-executed tool results go through `processToolResult` (an Observable step per result). */
function needsProviderResults(env: StepEnvironment): boolean {
  return env.outputProcessors.some((processor) => typeof processor.processToolResult === 'function');
}

/**
 * One subscription of the fused step output: the sink of the output chain's pass (what comes out
 * of the processors is fenced, accumulated and emitted) and the entry for the content. The same
 * order, pacing, errors and teardown as `concat(step-start, outlet, content).pipe(recordToolCalls,
 * rawChain, filter(admitToStep))`: a source error waits for the chunks before it, an unsubscribe
 * stops the hooks and cancels the provider's stream at once.
 */
class StepOutput implements OutputSink {
  readonly #pass: OutputStreamPass | undefined;
  /** The content source ended (completed, failed, or a part failed to convert): no part is read after. */
  sourceEnded = false;
  /** Stops the live model read (cancels the reader, aborts the call) before its end. */
  stopRead: ModelRead | undefined;

  constructor(
    private readonly env: StepEnvironment,
    private readonly attempt: Attempt,
    readonly subscriber: Subscriber<ChunkType>,
    open: (sink: OutputSink) => OutputStreamPass | undefined,
  ) {
    this.#pass = open(this);
  }

  start(content: ModelCall | Observable<ChunkType>): void {
    const { env, attempt, subscriber } = this;
    const pass = this.#pass;
    // before anything is emitted: a consumer that leaves at the first chunk stops the hooks at once
    if (pass !== undefined) subscriber.add(pass);
    this.push(stepStartChunk(env.runId, attempt.stepNumber, attempt.messageId));
    for (const chunk of env.outlet.drain()) {
      if (subscriber.closed) return;
      this.push(chunk);
    }
    if (subscriber.closed) return;
    if (isObservable(content)) {
      subscribeLinked(content, subscriber, {
        next: (chunk) => this.push(chunk),
        error: (error: unknown) => this.contentError(error),
        complete: () => this.contentDone(),
      });
      return;
    }
    const reader = new PartReader(this, content.runId, content.facts, env.requestedToolCalls);
    const read = readModelStream(content.model, content.callOptions, content.onResponse, content.demand, reader);
    this.stopRead = read;
    subscriber.add(read);
  }

  /** A chunk into the chain (or, with no processor hook, straight to the fence). */
  push(chunk: ChunkType): void {
    const pass = this.#pass;
    if (pass !== undefined) pass.push(chunk);
    else this.next(chunk);
  }

  contentError(error: unknown): void {
    this.sourceEnded = true;
    if (this.#pass !== undefined) this.#pass.error(error);
    else this.subscriber.error(error);
  }

  contentDone(): void {
    this.sourceEnded = true;
    if (this.#pass !== undefined) this.#pass.complete();
    else this.subscriber.complete();
  }

  /** Out of the chain: fenced, accumulated, emitted. */
  next(chunk: ChunkType): void {
    if (admitToStep(this.env, this.attempt, chunk)) this.subscriber.next(chunk);
  }

  error(error: unknown): void {
    this.subscriber.error(error);
  }

  complete(): void {
    this.subscriber.complete();
  }
}

/**
 * The live model read's sink: each V4 part converted (`modelPartToChunk`; fact-only parts
 * dropped), a tool call recorded as requested, then into the step output. A read error or a part
 * that fails to convert is a `ModelCallError`, as in `partsToChunks`.
 */
class PartReader implements PartSink<LanguageModelV4StreamPart> {
  constructor(
    private readonly output: StepOutput,
    private readonly runId: string,
    private readonly facts: ModelCall['facts'],
    private readonly requested: Map<string, string> | undefined,
  ) {}

  get closed(): boolean {
    return this.output.sourceEnded || this.output.subscriber.closed;
  }

  next(part: LanguageModelV4StreamPart): void {
    let chunk: ChunkType | null;
    try {
      chunk = modelPartToChunk(part, this.runId, this.facts);
    } catch (error) {
      // the part ends the call, as an error notification would: the reader is cancelled now
      this.output.sourceEnded = true;
      this.output.stopRead?.unsubscribe();
      this.output.contentError(new ModelCallError({ cause: error }));
      return;
    }
    if (chunk === null) return;
    if (this.requested !== undefined && chunk.type === 'tool-call') this.requested.set(chunk.payload.toolCallId, chunk.payload.toolName);
    this.output.push(chunk);
  }

  error(error: unknown): void {
    this.output.contentError(new ModelCallError({ cause: error }));
  }

  complete(): void {
    this.output.contentDone();
  }
}


/**
 * The end of the run's output, as the output processors see it: in the last step, once the model
 * output (and the tools it ran) passed them, the `finish` chunk goes through the chain — before
 * the step's message is built when no tool runs — so a processor that holds text back until
 * `finish` (a guard matching across text blocks, the specification's word counter) releases it
 * into the stored reply, `processLLMResponse`, `processOutputStep` and `steps`. What the chain
 * returns for it is emitted now; the `finish` it returns is kept (`env.finish`) and goes out last,
 * after `processOutputResult`, carrying the run's result. A step that continues sends nothing.
 *
 * ```
 * output:  --S--t--e--|                 (S = step-start, t = text-delta, e = text-end)
 * guard:   --S--------(te)|             (holds t and e until finish)
 * end:                    (f→ t' e)|    (finish releases them; f is kept for the run's end)
 * ```
 */
export function endOfOutput(env: StepEnvironment, attempt: Attempt, afterTools: boolean): Observable<ChunkType> {
  return defer(() => {
    if (continuesAfter(env, attempt) || callsToRun(env, attempt) !== afterTools) return EMPTY;
    const accepted = env.ctx.steps.filter((step) => step.tripwire === undefined);
    const provisional = makeChunk(env.runId, 'finish', {
      stepResult: { reason: attempt.facts.finishReason },
      output: {
        usage: accepted.reduce((total, step) => addUsage(total, step.usage), attempt.facts.usage),
        text: accepted.map((step) => step.text).join('') + attempt.accumulator.text,
      },
    });
    env.finish = undefined;
    return of(provisional).pipe(
      env.rawChain,
      filter((chunk) => {
        if (chunk.type !== 'finish') return admitToStep(env, attempt, chunk);
        env.finish ??= chunk;
        return false;
      }),
      tap({
        complete: () => {
          env.finish ??= provisional;
        },
      }),
    );
  });
}

/**
 * `processToolResult` on the results of provider-executed tools (web search, web fetch, hosted
 * MCP) before they stream or are stored: the chunk carries the processed result. Identity when no
 * output processor has the hook.
 */
function providerToolResults(env: StepEnvironment, stepNumber: number): MonoTypeOperatorFunction<ChunkType> {
  if (!env.outputProcessors.some((processor) => typeof processor.processToolResult === 'function')) return (chunks$) => chunks$;
  // a provider error waits for the hooks of the results before it (a hook that throws fails closed first)
  return (chunks$) =>
    chunks$.pipe(
      catchError((error: unknown) => of(new SourceError(error))),
      concatMap((item) => (item instanceof SourceError ? throwError(() => item.error) : processProviderResult(env, stepNumber, item))),
    );
}

/** A source error carried in order behind the chunks before it. */
class SourceError {
  constructor(readonly error: unknown) {}
}

function processProviderResult(env: StepEnvironment, stepNumber: number, chunk: ChunkType): Observable<ChunkType> {
  if (chunk.type !== 'tool-result' || chunk.payload.providerExecuted !== true) return of(chunk);
  const { payload } = chunk;
  return defer(() => {
    // the step's message is built when the stream ends: while the hooks run, the call stands in
    // the list on its own (so `messageList.updateToolInvocation` can replace the result), then leaves
    const standIn = env.generateId();
    env.ctx.messageList.add(
      {
        id: standIn,
        role: 'assistant',
        createdAt: env.now(),
        content: {
          format: 2,
          parts: [
            {
              type: 'tool-invocation',
              toolInvocation: { state: 'call', toolCallId: payload.toolCallId, toolName: payload.toolName, args: payload.args },
              providerExecuted: true,
            },
          ],
        },
      },
      'response',
    );
    return of({
      stepNumber,
      toolName: payload.toolName,
      toolCallId: payload.toolCallId,
      args: payload.args,
      result: payload.result,
      providerExecuted: true,
    }).pipe(
      processToolResult(env.outputProcessors, env.ctx),
      map((event): ChunkType => (event.result === payload.result ? chunk : { ...chunk, payload: { ...payload, result: event.result } })),
      finalize(() => env.ctx.messageList.removeByIds([standIn])),
    );
  });
}
