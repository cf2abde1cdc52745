/**
 * Observability hooks a run hands to every processor. rxagent calls `onHook` around each
 * processor hook when a tracer is attached (see `rxagent/ai-sdk`'s OpenTelemetry bridge);
 * without one, `tracingContext` is an empty object and costs nothing.
 *
 * An inspector (`rxagent/devtools`) also sets `includePayloads`, so that each `onHook` event
 * carries what the hook got and returned, and `onJudge`, which model-backed processors call
 * around each model call they make. Both are opt-in: a run whose `tracingContext` leaves them
 * unset builds no payloads and reports no judge calls.
 *
 * @example
 * ```ts
 * import type { TracingContext } from 'rxagent';
 * const tracingContext: TracingContext = { attributes: { tenant: 'acme' } };
 * ```
 */
export interface TracingContext {
  /** The span (or span-like object) of the enclosing operation, if a tracer is attached. */
  currentSpan?: unknown;
  /** Attributes to put on spans created under this context. */
  attributes?: Record<string, string | number | boolean>;
  /** Called for every processor hook run, when set. */
  onHook?: (event: ProcessorHookEvent) => void;
  /**
   * When `true` (and `onHook` is set), each hook event also carries `input`, `output` and
   * `error`. Default: unset — events carry timings and the outcome only.
   */
  includePayloads?: boolean;
  /** Called after each model call a model-backed processor makes (its "judge"), when set. */
  onJudge?: (event: JudgeCallEvent) => void;
}

/**
 * What happened in one processor hook run (for tracing).
 *
 * @example
 * ```ts
 * import type { ProcessorHookEvent, TracingContext } from 'rxagent';
 * const slow: ProcessorHookEvent[] = [];
 * const tracingContext: TracingContext = { onHook: (event) => { if (event.endTime - event.startTime > 50) slow.push(event); } };
 * ```
 */
export interface ProcessorHookEvent {
  /** The id of the processor concerned. */
  processorId: string;
  /** The hook's name. */
  hook: string;
  /** `drop`: a `processOutputStream` hook returned `null`/`undefined`; `retry`: an abort with `retry: true` (or `processAPIError` asking for one). */
  outcome: 'pass' | 'drop' | 'abort' | 'retry' | 'error';
  /** `performance.now()` when the hook was called. */
  startTime: number;
  /** `performance.now()` when its result settled. */
  endTime: number;
  /**
   * With `includePayloads`: what the hook got — the chunk (`part`) for `processOutputStream`, a
   * shallow copy of the argument object (taken when the hook was called) for the other hooks.
   */
  input?: unknown;
  /** With `includePayloads`: what the hook returned (`null`/`undefined` for a dropped chunk); unset when it threw. */
  output?: unknown;
  /** With `includePayloads`: what the hook ended with when it threw or aborted (a `TripWire`, a `ProcessorError`). */
  error?: unknown;
}

/**
 * One model call of a model-backed processor (moderation, PII detection, …), reported to
 * `tracingContext.onJudge` when set.
 *
 * @example
 * ```ts
 * import type { JudgeCallEvent, TracingContext } from 'rxagent';
 * const judged: JudgeCallEvent[] = [];
 * const tracingContext: TracingContext = { onJudge: (event) => judged.push(event) };
 * ```
 */
export interface JudgeCallEvent {
  /** The processor that made the call. */
  processorId: string;
  /** The judging model's provider. */
  provider: string;
  /** The judging model's id. */
  modelId: string;
  /** `error`: the call failed or answered something unreadable (the processor's error strategy then applies). */
  outcome: 'ok' | 'error';
  /** `performance.now()` when the call started and when it settled. */
  startTime: number;
  /** When it ended (ms since the epoch). */
  endTime: number;
  /** With `includePayloads`: the system text and the prompt sent. */
  input?: {
    /** The judge's instructions. */
    system: string;
    /** The judged content as sent. */
    prompt: string;
  };
  /** With `includePayloads`: the parsed answer (`ok`) or the failure (`error`). */
  output?: unknown;
}
