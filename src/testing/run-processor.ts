/**
 * `runProcessor(processor, hook, args)`: calls one hook of one processor the way a run would,
 * filling every argument the test leaves out, and reports what happened without throwing.
 */
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { firstValueFrom, from, type Observable } from 'rxjs';
import { MessageList } from '../message-list/index.js';
import {
  type DataChunkType,
  defaultAbortReason,
  isObservableResult,
  notifyViolation,
  type Processor,
  type ProcessorHookName,
  type ProcessorState,
  readOnlyStreamParts,
  RequestContext,
  TripWire,
  type TripWireOptions,
} from '../contract/index.js';
import { createRunContext } from '../operators/index.js';
import { TEST_RUN_ID, testUsage } from './chunk-builders.js';
import { checkRunProcessorCall } from './internal/run-processor-checks.js';

/**
 * The argument object of `hook`, as the `Processor` interface types it.
 *
 * @example
 * ```ts
 * import type { HookArgs } from 'rxagent/testing';
 * type StreamArgs = HookArgs<'processOutputStream'>; // ProcessOutputStreamArgs
 * ```
 */
export type HookArgs<H extends ProcessorHookName> = Parameters<NonNullable<Processor[H]>>[0];

/**
 * The arguments a test must give for each hook (everything else has a default).
 *
 * @example
 * ```ts
 * import type { RequiredHookArgs } from 'rxagent/testing';
 * type MustGive = RequiredHookArgs['processToolResult']; // 'toolName' | 'toolCallId' | 'result'
 * ```
 */
export interface RequiredHookArgs {
  /** Nothing: every argument has a default. */
  processInput: never;
  /** Nothing: every argument has a default. */
  processInputStep: never;
  /** The prompt. */
  processLLMRequest: 'prompt';
  /** Nothing: every argument has a default. */
  processLLMResponse: never;
  /** The error. */
  processAPIError: 'error';
  /** The chunk (`part`). */
  processOutputStream: 'part';
  /** Nothing: every argument has a default. */
  processOutputStep: never;
  /** The tool's name, the call's id and the result. */
  processToolResult: 'toolName' | 'toolCallId' | 'result';
  /** Nothing: every argument has a default. */
  processOutputResult: never;
}

/**
 * What `runProcessor` accepts for `hook`: any of its arguments, with the few it cannot guess required.
 *
 * @example
 * ```ts
 * import { chunk, type RunProcessorArgs } from 'rxagent/testing';
 * const args: RunProcessorArgs<'processOutputStream'> = { part: chunk.textDelta('hi'), retryCount: 1 };
 * ```
 */
export type RunProcessorArgs<H extends ProcessorHookName> = Partial<HookArgs<H>> &
  Pick<HookArgs<H>, Extract<RequiredHookArgs[H], keyof HookArgs<H>>>;

/**
 * What the hook returned (awaited; an Observable's first value), by processor type and hook.
 *
 * @example
 * ```ts
 * import type { HookResult } from 'rxagent/testing';
 * type Filtered = HookResult<ContentFilter, 'processInput'>; // MastraDBMessage[]
 * ```
 */
export type HookResult<P, H extends keyof P> = NonNullable<P[H]> extends (...args: never[]) => infer R ? Settled<R> : never;

/** A hook's return, settled: a promise awaited, an Observable's first value. */
type Settled<R> = R extends Observable<infer V> ? V : Awaited<R>;

/**
 * The outcome of one hook call made by `runProcessor`.
 *
 * @example
 * ```ts
 * import { runProcessor, type RunProcessorResult } from 'rxagent/testing';
 * const outcome: RunProcessorResult<unknown> = await runProcessor(guard, 'processOutputStep');
 * if (outcome.tripwire) console.log(outcome.tripwire.reason);
 * ```
 */
export interface RunProcessorResult<TResult> {
  /** What the hook returned (`undefined` when it threw or aborted). */
  result: TResult | undefined;
  /** The `TripWire` when the processor aborted — also when it caught its own abort. */
  tripwire?: TripWire;
  /** Anything else the hook threw, as thrown. */
  error?: unknown;
  /** Chunks the hook wrote with `writer.custom()`, and the chunk of each signal it sent with `sendSignal` (as a run streams it), in order. */
  customChunks: DataChunkType[];
  /** The processor's `state` after the call (pass it to the next call to share it). */
  state: ProcessorState;
  /** The `MessageList` the hook received. */
  messageList: MessageList;
}

const placeholderModel: LanguageModelV4 = {
  specificationVersion: 'v4',
  provider: 'rxagent-testing',
  modelId: 'placeholder',
  supportedUrls: {},
  doGenerate() {
    return Promise.reject(new Error('runProcessor placeholder model: pass a model in the args to call one.'));
  },
  doStream() {
    return Promise.reject(new Error('runProcessor placeholder model: pass a model in the args to call one.'));
  },
};


function hookDefaults(hook: ProcessorHookName, messageList: MessageList, given: Record<string, unknown>): Record<string, unknown> {
  const steps = { stepNumber: 0, steps: [] };
  switch (hook) {
    case 'processInput':
      return { messages: messageList.get.input.db(), systemMessages: messageList.getSystemMessages() };
    case 'processInputStep':
      return { ...steps, messages: messageList.get.all.db(), systemMessages: messageList.getSystemMessages(), model: placeholderModel };
    case 'processLLMRequest':
      // a run's call with nothing but the prompt (no tools, settings or provider options), frozen as a run's is
      return { ...steps, model: placeholderModel, callOptions: Object.freeze({}) };
    case 'processLLMResponse':
      return { ...steps, model: placeholderModel, chunks: [], fromCache: false };
    case 'processAPIError':
      return { ...steps, messages: messageList.get.all.db() };
    case 'processOutputStream':
      return { streamParts: given.part === undefined ? [] : [given.part] };
    case 'processOutputStep':
      return {
        ...steps,
        messages: messageList.get.all.db(),
        systemMessages: messageList.getSystemMessages(),
        finishReason: 'stop',
        toolCalls: [],
        text: '',
        usage: testUsage(),
      };
    case 'processToolResult':
      return { ...steps, messages: messageList.get.all.db(), systemMessages: messageList.getAllSystemMessages(), args: undefined };
    case 'processOutputResult':
      return {
        messages: messageList.get.response.db(),
        result: { text: '', usage: testUsage(), finishReason: 'stop', steps: [] },
      };
  }
}

/**
 * Calls `processor[hook]` once, as a run would: every argument the test leaves out is filled — a
 * fresh `MessageList`, `abort` bound to the processor id (with the runtime's default reasons), state
 * `{}`, `retryCount` 0, a `RequestContext`, a `tracingContext`, a `writer` that records custom
 * chunks, `sendSignal` (the signal's chunk recorded as a run streams it), `processorIndex`, an
 * `abortSignal`, and the hook's own defaults (`messages` from the list's view for the hook,
 * `stepNumber` 0, `steps` `[]`, …). `streamParts` (default: `[part]`; or the test's own list) is the
 * read-only view a run gives: a write to it is the `ProcessorError` a run ends with, reported as
 * `error`, and the list is left as it was. The hook is called directly, not through its operator: it gets
 * the test's arguments as given, and `result` is what it returned (the operator would rebuild
 * `messages`, `retryCount` and the rest from its run, and apply the result). Never throws for what the hook does: an abort (even one
 * the processor caught) is reported as `tripwire`, any other throw as `error`.
 *
 * @example
 * ```ts
 * import { expect, it } from 'vitest';
 * import { chunk, runProcessor } from 'rxagent/testing';
 *
 * it('blocks "secret"', async () => {
 *   const { tripwire } = await runProcessor(new ContentFilter(['secret']), 'processOutputStream', {
 *     part: chunk.textDelta('a secret'),
 *   });
 *   expect(tripwire?.reason).toBe('Blocked content detected in output');
 * });
 * ```
 */
export async function runProcessor<P extends Processor, H extends ProcessorHookName & keyof P>(
  processor: P,
  hook: H,
  ...[args]: [RequiredHookArgs[H]] extends [never] ? [args?: RunProcessorArgs<H>] : [args: RunProcessorArgs<H>]
): Promise<RunProcessorResult<HookResult<P, H>>> {
  checkRunProcessorCall(processor, hook, args);
  const method = (processor as unknown as Record<string, unknown>)[hook];
  const given = { ...(args ?? {}) } as Record<string, unknown>;
  const messageList = (given.messageList as MessageList | undefined) ?? new MessageList();
  const state = (given.state as ProcessorState | undefined) ?? {};
  const customChunks: DataChunkType[] = [];
  // the run's services as a run context makes them: `writer.custom()` and the chunk `sendSignal`
  // shows in the stream land in `customChunks`
  const runContext = createRunContext({ runId: TEST_RUN_ID });
  runContext.custom$.subscribe((chunk) => customChunks.push(chunk));
  let armed: TripWire | undefined;
  const abort = (reason?: string, options?: TripWireOptions): never => {
    const tripwire = new TripWire(reason || defaultAbortReason(processor.id, hook), options ?? {}, processor.id);
    armed ??= tripwire;
    notifyViolation(processor, tripwire.reason, tripwire.metadata);
    throw tripwire;
  };
  const fullArgs: Record<string, unknown> = {
    abort,
    retryCount: 0,
    tracingContext: {},
    requestContext: new RequestContext(),
    abortSignal: new AbortController().signal,
    writer: runContext.writer,
    sendSignal: runContext.sendSignal,
    processorIndex: processor.processorIndex ?? 0,
    runId: TEST_RUN_ID,
    ...hookDefaults(hook, messageList, given),
    ...given,
    messageList,
    state,
  };
  // read-only as in a run (the same view): a write to it fails the unit test as it fails the run
  if (hook === 'processOutputStream' && Array.isArray(fullArgs.streamParts)) {
    fullArgs.streamParts = readOnlyStreamParts(fullArgs.streamParts, processor.id);
  }

  const outcome: RunProcessorResult<HookResult<P, H>> = { result: undefined, customChunks, state, messageList };
  try {
    const returned: unknown = await (method as (args: object) => unknown).call(processor, fullArgs);
    // an Observable result counts by its first value (undefined when it completes empty), as in a run
    outcome.result = (isObservableResult(returned) ? await firstValueFrom(from(returned), { defaultValue: undefined }) : returned) as HookResult<P, H>;
  } catch (thrown) {
    if (TripWire.isInstance(thrown)) {
      outcome.tripwire = thrown.processorId === undefined ? new TripWire(thrown.reason, thrown.options, processor.id) : thrown;
    } else {
      outcome.error = thrown;
    }
    return outcome;
  }
  if (armed !== undefined) outcome.tripwire = armed; // the processor caught its own abort: it still counts
  return outcome;
}
