/**
 * The output side of `processorsMiddleware`: the model's V4 parts → rxagent chunks →
 * `processOutputStream` → V4 parts again, then `processLLMResponse` and `processOutputStep` at
 * the end of the stream. API errors before any content go to `processAPIError` (which may re-call
 * the model); a `TripWire` ends the stream with an `error` part carrying it and an `other` finish.
 */
import type {
  LanguageModelV4,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { Observable, catchError, concat, defer, filter, from, ignoreElements, map, of, switchMap, tap } from 'rxjs';
import { modelPartToChunk, newStepFacts } from '../../model/model-part-to-chunk.js';
import { StepAccumulator } from '../../loop/step-accumulator.js';
import { emptyUsage } from '../../model/usage.js';
import { makeChunk } from '../../processor/make-chunk.js';
import { closeBrackets } from '../../loop/output/close-brackets.js';
import { stepFinishChunk, stepStartChunk } from '../../loop/step-chunks.js';
import { processOutputStream } from '../../operators/process-output-stream.js';
import { runProcessLLMResponse } from '../../operators/process-llm-response.js';
import { runProcessOutputStep } from '../../operators/process-output-step.js';
import { apiErrorBudget, askProcessAPIError, retryOnAPIError } from '../../operators/retry-on-api-error.js';
import { toObservable } from '../../processor/to-observable.js';
import type { AgentChunk, ChunkType } from '../../processor/chunk-types.js';
import { TripWire } from '../../processor/errors/trip-wire.js';
import { ModelCallError } from '../../model/errors/model-call-error.js';
import { streamOf } from '../../model/checked-stream.js';
import type { StepResult } from '../../processor/processor-types.js';
import { chunkToModelPart } from '../chunk-to-model-part.js';
import { retryParams, type MiddlewareCall, type MiddlewareCallConfig } from './middleware-call.js';
import { readableToObservable } from './streams.js';

const unwrap = (error: unknown): unknown => ModelCallError.unwrap(error);

const nonContent = new Set(['stream-start', 'response-metadata', 'finish', 'ping', 'raw', 'error']);

function emptyV4Usage(): LanguageModelV4Usage {
  return {
    inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: undefined, text: undefined, reasoning: undefined },
  };
}

/** Calls the model, asking `processAPIError` about thrown errors (bounded like the loop). */
export async function openModelStream(
  config: MiddlewareCallConfig,
  call: MiddlewareCall,
  model: LanguageModelV4,
  first: () => PromiseLike<LanguageModelV4StreamResult>,
): Promise<LanguageModelV4StreamResult> {
  const processors = [...config.inputProcessors, ...config.outputProcessors, ...config.errorProcessors];
  let attempt = first;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      const budget = apiErrorBudget(processors, call.ctx);
      if (TripWire.isInstance(error) || call.ctx.apiErrorRetryCount >= budget || call.ctx.abortSignal.aborted) throw error;
      const retry = await askProcessAPIError(processors, call.ctx, error);
      if (!retry) throw error;
      call.ctx.apiErrorRetryCount++;
      const params = await retryParams(config, call, model);
      attempt = () => model.doStream(params);
    }
  }
}

/** The V4 parts of the model call(s), with `processAPIError` retries of errors before content. */
function modelParts(
  config: MiddlewareCallConfig,
  call: MiddlewareCall,
  model: LanguageModelV4,
  opened: LanguageModelV4StreamResult | undefined,
  onFinish: (part: Extract<LanguageModelV4StreamPart, { type: 'finish' }>) => void,
): Observable<LanguageModelV4StreamPart> {
  const processors = [...config.inputProcessors, ...config.outputProcessors, ...config.errorProcessors];
  let pending = opened;
  const attempt$ = defer(() => {
    const current = pending;
    pending = undefined;
    const stream$ =
      current !== undefined
        ? of(current)
        : from(retryParams(config, call, model).then((params) => model.doStream(params)));
    let contentSeen = false;
    return stream$.pipe(
      catchError((error: unknown) => {
        throw new ModelCallError({ cause: error });
      }),
      switchMap((result) => readableToObservable(streamOf<LanguageModelV4StreamPart>(result, model))),
      tap({
        next: (part) => {
          if (part.type === 'error') throw new ModelCallError({ cause: part.error, source: 'stream-part', contentSeen });
          if (part.type === 'finish') onFinish(part);
          if (!nonContent.has(part.type)) contentSeen = true;
        },
      }),
      catchError((error: unknown) => {
        if (ModelCallError.isInstance(error)) throw error;
        throw new ModelCallError({ cause: error, contentSeen });
      }),
    );
  });
  return attempt$.pipe(
    retryOnAPIError<LanguageModelV4StreamPart>(processors, call.ctx, {
      isAPIError: (error) => ModelCallError.isInstance(error) && !error.contentSeen && !TripWire.isInstance(error.error),
      toAPIError: unwrap,
    }),
  );
}

function cachedChunks(call: MiddlewareCall): Observable<ChunkType> {
  const runId = call.ctx.runId;
  return from(call.cached?.chunks ?? []).pipe(
    map((cached): ChunkType =>
      cached.type.startsWith('data-')
        ? ({ type: cached.type as `data-${string}`, data: cached.data } as ChunkType)
        : ({ type: cached.type, runId, from: 'AGENT', payload: cached.payload } as ChunkType),
    ),
  );
}

/** Emits `stream-start` (with the model's warnings) before anything else, even before an error. */
function leadWithStreamStart(source: Observable<LanguageModelV4StreamPart>, warnings: () => unknown[]): Observable<LanguageModelV4StreamPart> {
  return new Observable<LanguageModelV4StreamPart>((subscriber) => {
    let sent = false;
    const lead = (): void => {
      if (sent) return;
      sent = true;
      subscriber.next({ type: 'stream-start', warnings: warnings() as Extract<LanguageModelV4StreamPart, { type: 'stream-start' }>['warnings'] });
    };
    return source.subscribe({
      next(part) {
        lead();
        subscriber.next(part);
      },
      error(error: unknown) {
        lead();
        subscriber.error(error);
      },
      complete() {
        lead();
        subscriber.complete();
      },
    });
  });
}

/**
 * The processed stream of one call. `opened` is the first model response (already asked for,
 * so its request/response metadata could be returned); `undefined` for a cached response or a
 * call an input hook aborted.
 */
export function processedStream(
  config: MiddlewareCallConfig,
  call: MiddlewareCall,
  model: LanguageModelV4,
  opened: LanguageModelV4StreamResult | undefined,
): Observable<LanguageModelV4StreamPart> {
  return defer(() => {
    const { ctx } = call;
    const facts = newStepFacts(emptyUsage());
    const accumulator = new StepAccumulator();
    let finishPart: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
    const fromCache = call.cached !== undefined;
    if (fromCache) facts.finishReason = 'stop';

    const finishWith = (reason: LanguageModelV4FinishReason): LanguageModelV4StreamPart => ({
      type: 'finish',
      usage: finishPart?.usage ?? emptyV4Usage(),
      finishReason: reason,
      ...(finishPart?.providerMetadata ? { providerMetadata: finishPart.providerMetadata } : {}),
    });

    const chunks$: Observable<ChunkType> =
      call.tripwire !== undefined
        ? defer(() => {
            throw call.tripwire;
          })
        : fromCache
          ? cachedChunks(call)
          : modelParts(config, call, model, opened, (part) => {
              finishPart = part;
            }).pipe(
              map((part) => modelPartToChunk(part, ctx.runId, facts)),
              filter((chunk): chunk is ChunkType => chunk !== null),
            );

    const messageId = `${ctx.runId}-response`;
    // The same chain state for every subscription (shared per context and processor array), as in the loop.
    const throughProcessors = (source$: Observable<ChunkType>): Observable<ChunkType> =>
      source$.pipe(
        processOutputStream(config.outputProcessors, ctx),
        tap((chunk) => accumulator.observe(chunk)),
      );

    // step-start, then the model's content, through processOutputStream.
    const content$ = throughProcessors(concat(of<ChunkType>(stepStartChunk(ctx.runId, 0, messageId)), chunks$));

    // After the content: the response into the list, processLLMResponse, processOutputStep.
    const postModel$ = defer(() => {
      const stepResult: StepResult = {
        stepNumber: 0,
        text: accumulator.text,
        toolCalls: accumulator.toolCalls,
        toolResults: accumulator.toolResults,
        finishReason: facts.finishReason,
        usage: facts.usage,
        warnings: facts.warnings,
        ...(facts.providerMetadata ? { providerMetadata: facts.providerMetadata } : {}),
        response: facts.response,
      };
      const message = accumulator.buildMessage(messageId, new Date());
      if (message !== undefined) ctx.messageList.add(message, 'response');
      ctx.steps.push(stepResult);
      return concat(
        defer(() =>
          toObservable(
            runProcessLLMResponse(config.inputProcessors, ctx, {
              chunks: [...accumulator.compact],
              model,
              stepNumber: 0,
              fromCache,
              warnings: facts.warnings,
            }),
          ),
        ),
        defer(() =>
          toObservable(
            runProcessOutputStep(config.outputProcessors, ctx, {
              stepNumber: 0,
              finishReason: facts.finishReason,
              ...(facts.providerMetadata ? { providerMetadata: facts.providerMetadata } : {}),
              toolCalls: accumulator.toolCalls,
              text: accumulator.text,
              usage: facts.usage,
            }),
          ),
        ),
      ).pipe(ignoreElements());
    });

    // step-finish and finish through processOutputStream too (processors flush held text on them).
    const closing$ = throughProcessors(
      defer(() => {
        if (fromCache && accumulator.toolCalls.length > 0) facts.finishReason = 'tool-calls';
        const output = { text: accumulator.text, toolCalls: accumulator.toolCalls, usage: facts.usage };
        return of<ChunkType[]>(
          stepFinishChunk(ctx.runId, {
            stepNumber: 0,
            messageId,
            reason: facts.finishReason,
            rawReason: facts.rawFinishReason,
            isContinued: false,
            ...output,
            warnings: facts.warnings,
            response: facts.response,
          }),
          makeChunk(ctx.runId, 'finish', { stepResult: { reason: facts.finishReason }, output: { usage: facts.usage, text: accumulator.text } }),
        );
      }),
    );

    const tail$ = defer(() =>
      of<LanguageModelV4StreamPart>(
        finishPart ?? finishWith({ unified: fromCache ? (accumulator.toolCalls.length > 0 ? 'tool-calls' : 'stop') : 'other', raw: undefined }),
      ),
    );

    // An error ends the chunks with an `error` chunk, so closeBrackets() ends the parts still open
    // before it (the loop's one bracket implementation); it becomes an `error` part and a finish.
    let failure: AgentChunk<'error'> | undefined;
    const chunkParts$ = concat(content$, postModel$, closing$).pipe(
      catchError((error: unknown) => {
        failure = makeChunk(ctx.runId, 'error', { error: unwrap(error) });
        return of<ChunkType>(failure);
      }),
      closeBrackets(),
      map((chunk) => (chunk === failure ? null : chunkToModelPart(chunk))),
      filter((part): part is LanguageModelV4StreamPart => part !== null),
    );
    const end$ = defer(() => {
      if (failure === undefined) return tail$;
      const cause = failure.payload.error;
      return of<LanguageModelV4StreamPart[]>(
        { type: 'error', error: cause },
        finishWith({ unified: TripWire.isInstance(cause) ? 'other' : 'error', raw: TripWire.isInstance(cause) ? 'tripwire' : undefined }),
      );
    });
    const out$ = concat(chunkParts$, end$);
    return leadWithStreamStart(out$, () => facts.warnings);
  });
}
