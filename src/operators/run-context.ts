/**
 * The run context: everything one run's hooks share — ids, the `MessageList`, request and tracing
 * context, per-processor state, retry counters, the abort signal and the custom-chunk outlet.
 */
import { Subject } from 'rxjs';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { MessageList } from '../message-list/message-list.js';
import type { DataChunkType } from '../processor/chunk-types.js';
import { ModelResolutionError } from '../processor/errors/model-resolution-error.js';
import type { ModelInput, Processor, ProcessorState, StepResult } from '../processor/processor-types.js';
import { RequestContext } from '../processor/request-context.js';
import type { ProcessorStreamWriter } from '../processor/stream-writer.js';
import type { TracingContext } from '../processor/tracing-context.js';
import { bindProcessor, type ProcessorBinding } from './internal/processor-binding.js';
import { guardReferenceState } from './internal/reference-state-guard.js';

/** The context one run's operators share. */
export interface RunContext {
  readonly runId: string;
  messageList: MessageList;
  requestContext: RequestContext;
  tracingContext: TracingContext;
  /** Fires when the run is cancelled; hooks and tools receive it. */
  abortSignal: AbortSignal;
  /** Processor retry budget (`undefined`: a retry request is a plain abort). */
  maxProcessorRetries: number | undefined;
  /** Processor-triggered (tripwire) retries so far: the `retryCount` hooks see. */
  retryCount: number;
  /** `processAPIError` retries so far: the `retryCount` `processAPIError` sees. */
  apiErrorRetryCount: number;
  /** Completed steps (rejected attempts included, with their `tripwire`). */
  steps: StepResult[];
  /** The current step number (0-based). */
  stepNumber: number;
  /** Feedback for the next attempt after a tripwire retry (set by `retryOnTripwire`). */
  retryFeedback: string | undefined;
  /** Resolves a model returned by `processInputStep` (the loop passes its registry-aware resolver). */
  resolveModel: (model: ModelInput) => LanguageModelV4;
  /** Where `writer.custom()` chunks go outside `processOutputStream` (the loop merges it into the stream). */
  readonly custom$: Subject<DataChunkType>;
  /** The writer hooks receive outside `processOutputStream`. */
  readonly writer: ProcessorStreamWriter;
  /** This run's state object for a processor id (one per id per run). */
  stateFor(processorId: string): ProcessorState;
  /** This run's binding of `processor` (state, abort functions). */
  bind(processor: Processor): ProcessorBinding;
}

/** What `createRunContext` accepts; every field is optional. */
export type RunContextInit = Partial<
  Pick<
    RunContext,
    | 'runId'
    | 'messageList'
    | 'requestContext'
    | 'tracingContext'
    | 'abortSignal'
    | 'maxProcessorRetries'
    | 'retryCount'
    | 'steps'
    | 'stepNumber'
    | 'resolveModel'
  >
>;

/**
 * Throws a clear error unless `chunk` is a custom data chunk (`type` starting with `data-`).
 * Synchronous, so a bad chunk fails the hook that wrote it even when the promise is not awaited.
 */
export function assertDataChunk(chunk: DataChunkType): void {
  const type: unknown = (chunk as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !type.startsWith('data-')) {
    throw new TypeError(
      `writer.custom() takes data chunks only: chunk.type must start with "data-" (got ${JSON.stringify(type)}).`,
    );
  }
}

function defaultResolveModel(model: ModelInput): LanguageModelV4 {
  if (typeof model === 'object' && model !== null && model.specificationVersion === 'v4') return model;
  const described = typeof model === 'string' ? model : `${String(model?.specificationVersion)} model object`;
  throw new ModelResolutionError(
    described,
    `Cannot resolve model ${JSON.stringify(described)} here: outside an Agent only LanguageModelV4 objects are accepted (pass resolveModel to createRunContext).`,
  );
}

let runCounter = 0;

/**
 * Makes a fresh run context (for using the operators standalone, or in tests).
 *
 * @example
 * ```ts
 * import { createRunContext, processOutputStream } from 'rxagent/operators';
 * const ctx = createRunContext({ maxProcessorRetries: 2 });
 * chunks$.pipe(processOutputStream([myProcessor], ctx)).subscribe(console.log);
 * ```
 */
export function createRunContext(init: RunContextInit = {}): RunContext {
  const states = new Map<string, ProcessorState>();
  const bindings = new Map<Processor, ProcessorBinding>();
  const custom$ = new Subject<DataChunkType>();
  const stateFor = (processorId: string): ProcessorState => {
    let state = states.get(processorId);
    if (state === undefined) {
      state = guardReferenceState(processorId, {});
      states.set(processorId, state);
    }
    return state;
  };
  return {
    runId: init.runId ?? `run-${++runCounter}`,
    messageList: init.messageList ?? new MessageList(),
    requestContext: init.requestContext ?? new RequestContext(),
    tracingContext: init.tracingContext ?? {},
    abortSignal: init.abortSignal ?? new AbortController().signal,
    maxProcessorRetries: init.maxProcessorRetries,
    retryCount: init.retryCount ?? 0,
    apiErrorRetryCount: 0,
    steps: init.steps ?? [],
    stepNumber: init.stepNumber ?? 0,
    retryFeedback: undefined,
    resolveModel: init.resolveModel ?? defaultResolveModel,
    custom$,
    writer: {
      custom(chunk) {
        assertDataChunk(chunk);
        custom$.next(chunk);
        return Promise.resolve();
      },
    },
    stateFor,
    bind(processor) {
      let binding = bindings.get(processor);
      if (binding === undefined) {
        binding = bindProcessor(processor, stateFor(processor.id));
        bindings.set(processor, binding);
      }
      return binding;
    },
  };
}
