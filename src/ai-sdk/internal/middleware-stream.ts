/**
 * The output side of `processorsMiddleware`: the model call the AI SDK opened runs through the
 * loop's own attempt (`runAttempt` in `src/loop/step/`: the step-output kernel and the fenced
 * `processOutputStream` chain, `finish` at the end of the output, the response into the list,
 * `processLLMResponse`, `processOutputStep`, `step-finish`) → V4 parts again. What is the
 * middleware's own is what the AI SDK forces: the call already prepared in `transformParams`,
 * API errors before any content retried by re-calling the model (`retryOnAPIError`), and the V4
 * stream around the chunks. A `TripWire` ends the stream with an `error` part carrying it and an
 * `other` finish.
 */
import type {
  LanguageModelV4,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { Observable, catchError, concat, defer, filter, from, lastValueFrom, map, of, switchMap, tap, throwError } from 'rxjs';
import { callMetadataOf, cancelQuietly, ModelCallError, replayCall, streamOf, streamResultParts, type ModelEvent } from '../../model/index.js';
import { type AgentChunk, type ChunkType, makeChunk, TripWire } from '../../contract/index.js';
import { closeBrackets, createOutputChain, CustomOutlet, isStepEnd, runAttempt, stepAt, withoutCommitPoints, type StepEnvironment } from '../../loop/index.js';
import { retryOnAPIError, type LLMRequest } from '../../operators/index.js';
import { chunkToModelPart } from '../chunk-to-model-part.js';
import { retryParams, type MiddlewareCall, type MiddlewareCallConfig } from './middleware-call.js';

const unwrap = (error: unknown): unknown => ModelCallError.unwrap(error);

const nonContent = new Set(['stream-start', 'response-metadata', 'finish', 'ping', 'raw', 'error']);

function emptyV4Usage(): LanguageModelV4Usage {
  return {
    inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: undefined, text: undefined, reasoning: undefined },
  };
}

/**
 * Calls the model, asking `processAPIError` about thrown errors (`retryOnAPIError`, bounded like the
 * loop). The result's `request` and `response` are read once, as the loop reads a call's
 * (`callMetadataOf`: a getter that throws is an `InvalidModelResponseError`, and the stream is
 * then cancelled): what the middleware hands the AI SDK is plain data.
 */
export async function openModelStream(
  config: MiddlewareCallConfig,
  call: MiddlewareCall,
  model: LanguageModelV4,
  first: () => PromiseLike<LanguageModelV4StreamResult>,
): Promise<LanguageModelV4StreamResult> {
  const processors = [...config.inputProcessors, ...config.outputProcessors, ...config.errorProcessors];
  let calls = 0;
  const call$ = defer(() => from(calls++ === 0 ? first() : retryParams(config, call, model).then((params) => model.doStream(params))));
  const result: unknown = await lastValueFrom(call$.pipe(retryOnAPIError<LanguageModelV4StreamResult>(processors, call.ctx)));
  let stream: ReadableStream<LanguageModelV4StreamPart>;
  try {
    stream = streamOf<LanguageModelV4StreamPart>(result, model);
  } catch {
    // no stream: `streamResultParts` refuses the result, naming the model, as the output's error
    return result as LanguageModelV4StreamResult;
  }
  let metadata: ReturnType<typeof callMetadataOf>;
  try {
    metadata = callMetadataOf(result as object, model, 'doStream()');
  } catch (error) {
    cancelQuietly(stream, error);
    throw error;
  }
  const { request, response } = metadata;
  return {
    stream,
    ...(request === undefined ? {} : { request }),
    ...(response === undefined ? {} : { response: response as LanguageModelV4StreamResult['response'] }),
  };
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
  const withholdRaw = config.outputProcessors.length > 0;
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
      // read and checked as the loop reads a model call (one check of every part, ends at `finish`)
      switchMap((result) => streamResultParts(model, result)),
      // `raw` parts (includeRawChunks) carry the provider's unfiltered payload: with output
      // processors the client gets what they let through, so raw parts are withheld (they never
      // reach the chain either, where they would release text a processor holds back)
      filter((part) => !withholdRaw || part.type !== 'raw'),
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

/** The step environment of one middleware call: the loop's, with the model reached through the AI SDK. */
function stepEnvironment(config: MiddlewareCallConfig, call: MiddlewareCall, model: LanguageModelV4, events: () => Observable<ModelEvent>): StepEnvironment {
  const { ctx } = call;
  return {
    ctx,
    runId: ctx.runId,
    inputProcessors: config.inputProcessors,
    outputProcessors: config.outputProcessors,
    stepProcessors: config.inputProcessors,
    apiErrorProcessors: [...config.inputProcessors, ...config.outputProcessors, ...config.errorProcessors],
    defaultApiErrorBudget: 0,
    chain: createOutputChain(config.outputProcessors, ctx),
    outlet: new CustomOutlet(call.state),
    stepDefaults: { model },
    model: {
      // the request was prepared in transformParams (processInput, processInputStep, processLLMRequest)
      prepare: (attempt) => {
        if (call.tripwire !== undefined) return throwError(() => call.tripwire);
        const request: LLMRequest = { prompt: call.params.prompt, model, stepNumber: 0, ...(call.cached === undefined ? {} : { response: call.cached }) };
        return { request, callOptions: call.params, stepInput: { stepNumber: 0, model }, tools: undefined };
      },
      call: (_attempt, { request }) => (request.response !== undefined ? replayCall(request.response) : events()),
    },
    generateId: config.generateId,
    now: () => new Date(),
    threadId: undefined,
    resourceId: undefined,
    maxSteps: 1,
    stopWhen: [],
    executesTools: false, // the AI SDK runs the tools
    toolConcurrency: 1,
  };
}

/**
 * The processed stream of one call: the loop's own attempt (`runAttempt`: the model output through
 * `processOutputStream`, `finish` at the end of the output, the response into the list,
 * `processLLMResponse`, `processOutputStep`, `step-finish`) as V4 parts again. `opened` is the first
 * model response (already asked for, so its request/response metadata could be returned);
 * `undefined` for a cached response or a call an input hook aborted.
 */
export function processedStream(
  config: MiddlewareCallConfig,
  call: MiddlewareCall,
  model: LanguageModelV4,
  opened: LanguageModelV4StreamResult | undefined,
): Observable<LanguageModelV4StreamPart> {
  return defer(() => {
    const { ctx } = call;
    let finishPart: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
    const env = stepEnvironment(config, call, model, () =>
      modelParts(config, call, model, opened, (part) => {
        finishPart = part;
      }),
    );
    const state = call.state;
    const finishWith = (reason: LanguageModelV4FinishReason): LanguageModelV4StreamPart => ({
      type: 'finish',
      usage: finishPart?.usage ?? emptyV4Usage(),
      finishReason: reason,
      ...(finishPart?.providerMetadata ? { providerMetadata: finishPart.providerMetadata } : {}),
    });
    // the middleware's step has no durability: no commit point among its values
    const step$ = withoutCommitPoints(runAttempt(env, state, stepAt(0))).pipe(filter((item): item is ChunkType => !isStepEnd(item)));
    const tail$ = defer(() => {
      const attempt = state.attempt;
      const cached = call.cached !== undefined;
      return of<LanguageModelV4StreamPart>(
        finishPart ?? finishWith({ unified: cached ? ((attempt?.accumulator.toolCalls.length ?? 0) > 0 ? 'tool-calls' : 'stop') : 'other', raw: undefined }),
      );
    });

    // An error ends the chunks with an `error` chunk, so closeBrackets() ends the parts still open
    // before it (the loop's one bracket implementation); it becomes an `error` part and a finish.
    let failure: AgentChunk<'error'> | undefined;
    const chunkParts$ = step$.pipe(
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
    return leadWithStreamStart(concat(chunkParts$, end$), () => state.attempt?.facts.warnings ?? []);
  });
}
