/**
 * The model's output in a step: `step-start`, the content (live or a cached replay) through the
 * fenced `processOutputStream` chain into the step's accumulator, and — at the end of the run's
 * output — `finish` through the same chain, before the step's message is built.
 */
import { EMPTY, Observable, catchError, concat, concatMap, defer, filter, finalize, from, map, of, tap, throwError, type MonoTypeOperatorFunction } from 'rxjs';
import type { CachedLLMStepResponse } from '../../contract/processor-types.js';
import { processToolResult } from '../../operators/process-tool-result.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { addUsage } from '../../model/usage.js';
import { recordToolCalls } from './output-chain.js';
import { stepStartChunk } from './step-chunks.js';
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
 * The step's output: `step-start`, the `writer.custom()` chunks waiting, then `content$` — through
 * `processToolResult` for provider-executed results, the output chain and its fence — into the
 * step's accumulator (and partial objects for structured output). One hop per chunk.
 */
export function stepOutput(env: StepEnvironment, attempt: Attempt, content$: Observable<ChunkType>): Observable<ChunkType> {
  const structured = attempt.stepInput?.structuredOutput;
  env.requestedToolCalls?.clear();
  return concat(
    of<ChunkType>(stepStartChunk(env.runId, attempt.stepNumber, attempt.messageId)),
    defer(() => from(env.outlet.drain())),
    content$.pipe(recordToolCalls(env.requestedToolCalls), providerToolResults(env, attempt.stepNumber)),
  ).pipe(
    env.rawChain,
    filter((chunk) => admitToStep(env, attempt, chunk)),
    structured !== undefined && structured.model === undefined ? withPartialObjects(env.runId, attempt.accumulator) : (chunks$) => chunks$,
  );
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
