/**
 * Runs one client tool call: input validated first, `execute` given its options, outcome captured.
 * Nothing waits on a promise unless the validator or `execute` returned one.
 */
import { catchError, concatMap, defaultIfEmpty, defer, isObservable, map, of, takeLast, type Observable } from 'rxjs';
import type { ToolBegin, ToolLedger } from '../data/run-durability.js';
import type { ModelMessage } from 'ai';
import { isPromiseLike, thenMaybe, type MaybeAsync, type MaybePromise } from '../../contract/maybe-async.js';
import { toObservable } from '../../contract/to-observable.js';
import { isReadableError } from '../../errors/thrown-message.js';
import type { ToolCallInfo } from '../../contract/chunk-types.js';
import type { RequestContext } from '../../contract/request-context.js';
import type { ProcessorStreamWriter } from '../../contract/stream-writer.js';
import { noopToolObserve, type AgentTool } from '../../contract/tool-types.js';
import { validateToolInput } from '../../model/tool-schema.js';
import { ToolExecutionError, invalidInputMessage, readThrown, shownToolName } from './tool-execution-error.js';

/** The AI SDK tool context rxagent passes: none (an empty object, so `context.x` reads `undefined`). */
const NO_TOOL_CONTEXT: Readonly<Record<string, unknown>> = Object.freeze({});

/** What a tool call ended with. */
export type ToolOutcome =
  | { kind: 'result'; call: ToolCallInfo; result: unknown }
  | { kind: 'error'; call: ToolCallInfo; error: Error };

/** What every tool execution of a run gets. */
export interface ToolEnvironment {
  /** The run's id (each call's `idempotencyKey` is `<runId>:<toolCallId>`). */
  runId: string;
  abortSignal: AbortSignal;
  writer: ProcessorStreamWriter;
  requestContext: RequestContext;
  messages: () => ModelMessage[];
}

/** A JSON-safe copy of a tool result (BigInt → string); throws for cycles. */
export function toSerializable(value: unknown): unknown {
  if (value === undefined) return null;
  const text = JSON.stringify(value, (_key, inner: unknown) => (typeof inner === 'bigint' ? inner.toString() : inner));
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

/** Ends an iterator early, ignoring what a broken `return()` throws or rejects with. */
function closeIterator(iterator: AsyncIterator<unknown>): void {
  try {
    const closing = iterator.return?.();
    if (closing !== undefined) Promise.resolve(closing).catch(() => undefined);
  } catch {
    // a generator whose return() throws: nothing more to release
  }
}

/**
 * The last value of a tool's async iterable (AI SDK tools may `yield` preliminary results). Pulls
 * one value at a time and never after `signal` aborted: an abort calls the iterator's `return()`
 * (so an `async function*` runs its `finally`) and rejects with the abort reason.
 */
function lastOf(iterable: AsyncIterable<unknown>, signal: AbortSignal): Promise<unknown> {
  const iterator = iterable[Symbol.asyncIterator]();
  return new Promise<unknown>((resolve, reject) => {
    let last: unknown;
    let settled = false;
    const finish = (): void => {
      settled = true;
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      if (settled) return;
      finish();
      closeIterator(iterator);
      reject(signal.reason);
    };
    const pull = (): void => {
      if (settled) return;
      if (signal.aborted) {
        onAbort();
        return;
      }
      Promise.resolve()
        .then(() => iterator.next())
        .then((step) => {
          if (settled) return;
          if (step.done) {
            finish();
            resolve(last);
            return;
          }
          last = step.value;
          pull();
        })
        // a rejected `next()`, or a step that cannot be read (null, a throwing `done` getter)
        .catch((error: unknown) => {
          if (settled) return;
          finish();
          reject(error);
        });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    pull();
  });
}

/** The error of a tool result that cannot be serialized (reading it threw `error`). */
function notSerializable(call: ToolCallInfo, error: unknown): ToolExecutionError {
  const { text, cause } = readThrown(error);
  return new ToolExecutionError({
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    message: `Tool "${call.toolName}" returned a value that is not serializable: ${text}`,
    cause,
  });
}

/** The tool result as the model gets it: a JSON-safe copy, or a `ToolExecutionError`. */
function serializableResult(call: ToolCallInfo, value: unknown): unknown {
  try {
    return toSerializable(value);
  } catch (error) {
    throw notSerializable(call, error);
  }
}

/**
 * What `execute` returned is: an async iterable, an Observable, a promise, or the value itself (a
 * value that throws when asked is not serializable).
 */
function outputKind(call: ToolCallInfo, output: unknown): 'iterable' | 'observable' | 'promise' | 'value' {
  try {
    if (output !== null && typeof output === 'object' && Symbol.asyncIterator in output) return 'iterable';
    if (isObservable(output)) return 'observable';
    return isPromiseLike(output) ? 'promise' : 'value';
  } catch (error) {
    throw notSerializable(call, error);
  }
}

/**
 * Validates the input, runs `execute`, serializes the result: synchronous (no promise hop) when
 * the validation and `execute` are, so a synchronous tool stays on virtual time.
 */
function run(call: ToolCallInfo, tool: AgentTool, environment: ToolEnvironment): MaybeAsync<unknown> {
  return thenMaybe(validateToolInput(tool.inputSchema, call.args), (validated) => {
    if (!validated.success) {
      throw new ToolExecutionError({
        toolName: call.toolName,
        toolCallId: call.toolCallId,
        // the issues and an excerpt: the validation error's own text repeats the whole input (kept as the cause)
        message: invalidInputMessage(call.toolName, validated.error, call.args),
        cause: validated.error,
      });
    }
    const execute = tool.execute as (input: unknown, options: unknown) => unknown;
    const output = execute(validated.value, {
      toolCallId: call.toolCallId,
      idempotencyKey: `${environment.runId}:${call.toolCallId}`,
      messages: environment.messages(),
      abortSignal: environment.abortSignal,
      writer: environment.writer,
      requestContext: environment.requestContext,
      context: NO_TOOL_CONTEXT,
      observe: noopToolObserve,
    });
    const kind = outputKind(call, output);
    if (kind === 'observable') {
      // like an async iterable: its last value (`undefined` when it completes empty), one outcome per call
      return (output as Observable<unknown>).pipe(takeLast(1), defaultIfEmpty(undefined), map((resolved) => serializableResult(call, resolved)));
    }
    const value: MaybePromise<unknown> =
      kind === 'iterable' ? lastOf(output as AsyncIterable<unknown>, environment.abortSignal) : kind === 'promise' ? Promise.resolve(output) : output;
    return thenMaybe(value, (resolved) => serializableResult(call, resolved));
  });
}

/**
 * Executes `call` with `tool` as a cold Observable of exactly one `ToolOutcome` (never an error
 * notification: a failure is a `{ kind: 'error' }` outcome the model will see).
 */
export function executeToolCall(call: ToolCallInfo, tool: AgentTool | undefined, environment: ToolEnvironment): Observable<ToolOutcome> {
  return defer(() => {
    if (tool === undefined) {
      return of<ToolOutcome>({ kind: 'error', call, error: new ToolExecutionError({ toolName: call.toolName, toolCallId: call.toolCallId, message: `Tool "${shownToolName(call.toolName)}" not found.` }) });
    }
    if (typeof tool.execute !== 'function') {
      return of<ToolOutcome>({ kind: 'error', call, error: new ToolExecutionError({ toolName: call.toolName, toolCallId: call.toolCallId, message: `Tool "${call.toolName}" has no execute function.` }) });
    }
    let ran: MaybeAsync<unknown>;
    try {
      ran = run(call, tool, environment);
    } catch (error) {
      return of(failedOutcome(call, error));
    }
    // a synchronous tool's outcome is one `of` (no inner defer, map and catchError per call)
    if (!isPromiseLike(ran) && !isObservable(ran)) return of<ToolOutcome>({ kind: 'result', call, result: ran });
    return toObservable(ran).pipe(
      map((result): ToolOutcome => ({ kind: 'result', call, result })),
      catchError((error: unknown) => of(failedOutcome(call, error))),
    );
  });
}

/** The outcome of a call that threw or rejected with `error`: an `Error` as it is, anything else a `ToolExecutionError`. */
function failedOutcome(call: ToolCallInfo, error: unknown): ToolOutcome {
  // an `Error` the stream and the next prompt can read as it is (a Proxy posing as one, or a revoked one, is not)
  if (isReadableError(error)) return { kind: 'error', call, error };
  const { text, cause } = readThrown(error);
  return { kind: 'error', call, error: new ToolExecutionError({ toolName: call.toolName, toolCallId: call.toolCallId, message: text, cause }) };
}

/**
 * `executeToolCall` asked through a durable run's tool ledger: `begin` says whether to run the call
 * (or answers it: a result an earlier owner completed, an outcome nobody knows), `end` is told what
 * the execution ended with. Without a ledger, `executeToolCall` itself.
 *
 * ```
 * ledger:  begin → 'execute':  --(execute)--(end)--o|
 *          begin → 'result':   --o|                     (o = the outcome, nothing executed)
 * ```
 */
export function executeWithLedger(call: ToolCallInfo, tool: AgentTool | undefined, environment: ToolEnvironment, ledger: ToolLedger | undefined): Observable<ToolOutcome> {
  if (ledger === undefined) return executeToolCall(call, tool, environment);
  const entry = { toolCallId: call.toolCallId, toolName: call.toolName, args: call.args };
  const idempotent = (tool as { idempotent?: unknown } | undefined)?.idempotent === true;
  return defer(() => toObservable(ledger.begin(entry, { idempotent }) as MaybePromise<ToolBegin>)).pipe(
    concatMap((begin): Observable<ToolOutcome> => {
      if (begin.kind === 'result') return of({ kind: 'result', call, result: begin.result });
      if (begin.kind === 'error') return of({ kind: 'error', call, error: begin.error });
      return executeToolCall(call, tool, environment).pipe(
        concatMap((outcome) =>
          toObservable(ledger.end(entry, outcome.kind === 'result' ? { result: outcome.result } : { error: outcome.error }) as MaybePromise<void>).pipe(map(() => outcome)),
        ),
      );
    }),
  );
}
