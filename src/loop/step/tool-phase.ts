/**
 * The tool phase of a step: the step's client tool calls run concurrently (bounded), their
 * outcomes stream in call order; each successful result goes through `processToolResult` before
 * it is committed; a failure becomes a `tool-error` chunk and an error result the model sees.
 * `data-*` chunks tools write stream live.
 */
import { EMPTY, type MonoTypeOperatorFunction, Observable, concatMap, from, map, of, tap } from 'rxjs';
import { processToolResult, type ToolResultEvent } from '../../operators/process-tool-result.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { AgentTool, AgentToolSet } from '../../contract/tool-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { thrownMessage } from '../../errors/thrown-message.js';
import type { StepEnvironment } from './step-environment.js';
import type { AttemptState } from '../data/attempt-state.js';
import { recordAfterMessage } from './after-model.js';
import { executeWithLedger, type ToolEnvironment, type ToolOutcome } from '../tools/execute-tool-call.js';
import { orderedMergeMap } from '../tools/ordered-merge.js';

/**
 * The chunk of one tool outcome: a failure becomes a `tool-error` chunk (and its neutral error
 * result for the model); a success goes through `processResult` (the `processToolResult` operator,
 * which commits the processed result) and becomes a `tool-result` chunk.
 */
function outcomeToChunk(
  env: StepEnvironment,
  stepNumber: number,
  processResult: MonoTypeOperatorFunction<ToolResultEvent>,
  outcome: ToolOutcome,
): Observable<ChunkType> {
  const { call } = outcome;
  if (outcome.kind === 'error') {
    // The call gets its error result at once (a prompt never carries a call without its result),
    // but with a neutral text: what the model and memory get is the `tool-error` chunk's error as
    // it leaves the output processors (see `recordToolError`), so a guard's redaction sticks and a
    // dropped chunk leaves nothing of the raw error behind.
    recordToolError(env, call.toolCallId, call.toolName, call.args, TOOL_FAILED);
    return of<ChunkType>(
      makeChunk(env.runId, 'tool-error', { toolCallId: call.toolCallId, toolName: call.toolName, args: call.args, error: outcome.error }),
    );
  }
  const event: ToolResultEvent = { stepNumber, toolName: call.toolName, toolCallId: call.toolCallId, args: call.args, result: outcome.result };
  return of(event).pipe(
    processResult,
    map((processed) => toolResultChunk(env, processed)),
  );
}

function toolResultChunk(env: StepEnvironment, event: ToolResultEvent): ChunkType {
  return makeChunk(env.runId, 'tool-result', { toolCallId: event.toolCallId, toolName: event.toolName, args: event.args, result: event.result });
}

/** The error text a failed call carries until its `tool-error` chunk has passed the output processors. */
const TOOL_FAILED = 'The tool failed.';

function recordToolError(env: StepEnvironment, toolCallId: string, toolName: string, args: unknown, errorText: string): void {
  env.ctx.messageList.updateToolInvocation({
    type: 'tool-invocation',
    toolInvocation: { state: 'output-error', toolCallId, toolName, args, errorText, isError: true },
  });
}

/**
 * The text of a `tool-error` chunk's error, as the model and memory get it; the neutral text for an
 * error a processor left unreadable (a BigInt, a cycle, a revoked Proxy).
 */
function errorTextOf(error: unknown): string {
  return thrownMessage(error, (value) => (typeof value === 'string' ? value : JSON.stringify(value) ?? String(value))) ?? TOOL_FAILED;
}

/** Records what passed the output processors: for a `tool-error`, its (possibly redacted) text. */
function observeToolChunk(env: StepEnvironment, attempt: AttemptState, chunk: ChunkType): void {
  recordAfterMessage(env, attempt, chunk);
  if (chunk.type === 'tool-error') recordToolError(env, chunk.payload.toolCallId, chunk.payload.toolName, chunk.payload.args, errorTextOf(chunk.payload.error));
}

/** The tool named `name` among `tools`' own: a name the model invents (`__proto__`, `toString`, an inherited key) finds none. */
function ownTool(tools: AgentToolSet | undefined, name: string): AgentTool | undefined {
  return tools !== undefined && Object.hasOwn(tools, name) ? tools[name] : undefined;
}

/** The tool phase's chunks (already through the output processors and recorded by `accumulator`); `tools`: the attempt's. */
export function toolPhase(env: StepEnvironment, attempt: AttemptState, tools: AgentToolSet | undefined): Observable<ChunkType> {
  const { stepNumber, accumulator } = attempt;
  const through = env.chain.through(attempt.requestedToolCalls);
  const calls = env.executesTools ? accumulator.toolCalls.filter((call) => !call.providerExecuted) : [];
  if (calls.length === 0) {
    const waiting = env.outlet.drain();
    // nothing written and no processOutputStream hook to run at the boundary: no stage at all
    if (waiting.length === 0 && !env.chain.hooked) return EMPTY;
    return from(waiting).pipe(through, tap((chunk) => recordAfterMessage(env, attempt, chunk)));
  }
  const toolEnvironment: ToolEnvironment = {
    runId: env.runId,
    abortSignal: env.ctx.abortSignal,
    writer: env.ctx.writer,
    requestContext: env.ctx.requestContext,
    messages() {
      return env.ctx.messageList.get.all.model();
    },
  };
  const processResult = processToolResult(env.outputProcessors, env.ctx);
  const execution$ = from(calls).pipe(
    orderedMergeMap((call) => executeWithLedger(call, ownTool(tools, call.toolName), toolEnvironment, env.durability?.tools), env.toolConcurrency),
    concatMap((outcome) => outcomeToChunk(env, stepNumber, processResult, outcome)),
  );
  const withLiveData$ = new Observable<ChunkType>((subscriber) => {
    const stopListening = env.outlet.listen((chunk) => subscriber.next(chunk));
    const subscription = execution$.subscribe(subscriber);
    return () => {
      stopListening();
      subscription.unsubscribe();
    };
  });
  return withLiveData$.pipe(
    through,
    tap((chunk) => observeToolChunk(env, attempt, chunk)),
  );
}
