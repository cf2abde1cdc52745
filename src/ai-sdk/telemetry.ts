/**
 * OpenTelemetry spans for rxagent runs: the run, each step, each model call, each tool call
 * (derived from the chunk stream) and each processor hook (from `tracingContext.onHook`).
 * `@opentelemetry/api` is an optional peer dependency, loaded on first use: without it, or with
 * no tracer provider registered (non-recording spans), nothing is traced and the run's hot path
 * is untouched (`tracingContext.onHook` stays unset).
 */
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api'; // internal use only: never in an exported type
import { defer, finalize, from, switchMap, tap, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import type { ChunkType, ProcessorHookEvent, TracingContext } from '../contract/index.js';
import { RunSpans } from './internal/run-spans.js';

type OtelApi = typeof import('@opentelemetry/api');

let otelApi: OtelApi | null | undefined;
let loadingApi: Promise<OtelApi | null> | undefined;

function loadOtelApi(): Promise<OtelApi | null> {
  loadingApi ??= import('@opentelemetry/api').then(
    (api) => (otelApi = api),
    () => (otelApi = null),
  );
  return loadingApi;
}

/**
 * An attribute value, as OpenTelemetry's `AttributeValue`. The telemetry types are declared here,
 * structurally, so that `rxagent/ai-sdk`'s declarations type-check without `@opentelemetry/api`
 * installed (it is an optional peer dependency); OpenTelemetry's own values fit them.
 *
 * @example
 * ```ts
 * import type { TelemetryAttributeValue } from 'rxagent/ai-sdk';
 * const value: TelemetryAttributeValue = ['a', 'b'];
 * ```
 */
export type TelemetryAttributeValue =
  | string
  | number
  | boolean
  | Array<null | undefined | string>
  | Array<null | undefined | number>
  | Array<null | undefined | boolean>;

/**
 * Span attributes, as OpenTelemetry's `Attributes`.
 *
 * @example
 * ```ts
 * import type { TelemetryAttributes } from 'rxagent/ai-sdk';
 * const attributes: TelemetryAttributes = { 'app.tenant': 'acme' };
 * ```
 */
export interface TelemetryAttributes {
  [attributeKey: string]: TelemetryAttributeValue | undefined;
}

/**
 * An OpenTelemetry `Context` (the same shape as `@opentelemetry/api`'s).
 *
 * @example
 * ```ts
 * import { context } from '@opentelemetry/api';
 * import type { TelemetryContext } from 'rxagent/ai-sdk';
 * const parent: TelemetryContext = context.active();
 * ```
 */
export interface TelemetryContext {
  /** The value stored under `key`. */
  getValue(key: symbol): unknown;
  /** A context with `key` set to `value`. */
  setValue(key: symbol, value: unknown): TelemetryContext;
  /** A context without `key`. */
  deleteValue(key: symbol): TelemetryContext;
}

/**
 * An OpenTelemetry `Tracer` (any `trace.getTracer(…)` fits): the part of its shape the types need.
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * import type { TelemetryTracer } from 'rxagent/ai-sdk';
 * const tracer: TelemetryTracer = trace.getTracer('support-bot');
 * ```
 */
export interface TelemetryTracer {
  /** Starts a span (OpenTelemetry `Tracer.startSpan`). */
  startSpan(name: string, options?: object, context?: TelemetryContext): object;
}

/**
 * Options of {@link createRunTelemetry}, {@link traceRun} and {@link withTelemetry}.
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * import type { RunTelemetryOptions } from 'rxagent/ai-sdk';
 * const options: RunTelemetryOptions = { tracer: trace.getTracer('support-bot'), attributes: { 'app.tenant': 'acme' } };
 * ```
 */
export interface RunTelemetryOptions {
  /** Default: `trace.getTracer('rxagent')` from the globally registered provider. */
  tracer?: TelemetryTracer;
  /** Put on the run span. */
  attributes?: TelemetryAttributes;
  /** The run span's parent. Default: the active context when the run is subscribed. */
  parentContext?: TelemetryContext;
  /**
   * `processOutputStream` runs once per chunk and processor: `'aggregate'` (default) records one
   * span per processor and step with call, drop and time counts; `'each'` one span per call.
   */
  streamHookSpans?: 'aggregate' | 'each';
}

/**
 * One run's telemetry: pass `tracingContext` to the run and pipe the run through `operator`.
 *
 * @example
 * ```ts
 * import { createRunTelemetry, type RunTelemetry } from 'rxagent/ai-sdk';
 * const telemetry: RunTelemetry = createRunTelemetry();
 * agent.stream$('Hi', { tracingContext: telemetry.tracingContext }).pipe(telemetry.operator).subscribe();
 * ```
 */
export interface RunTelemetry {
  /** Hand to the run (`stream$(input, { tracingContext })`): its `onHook` records processor spans. */
  readonly tracingContext: TracingContext;
  /** Opens and closes the run, step, model and tool spans from the run's chunks. */
  readonly operator: MonoTypeOperatorFunction<ChunkType>;
}

function traced(source: Observable<ChunkType>, tracingContext: TracingContext, options: RunTelemetryOptions): Observable<ChunkType> {
  const start = (api: OtelApi | null): Observable<ChunkType> => {
    if (api === null) return source;
    // the structural option types are OpenTelemetry's own objects at run time
    const tracer = (options.tracer as Tracer | undefined) ?? api.trace.getTracer('rxagent');
    const parent = (options.parentContext as Context | undefined) ?? api.context.active();
    const spans = new RunSpans(api, tracer, parent, { ...options, attributes: options.attributes as Attributes | undefined });
    if (!spans.recording) {
      spans.discard();
      return source;
    }
    const onHook = (event: ProcessorHookEvent): void => spans.hook(event);
    tracingContext.onHook = onHook;
    tracingContext.currentSpan = spans.currentSpan;
    spans.onCurrentSpan = (span: Span) => {
      tracingContext.currentSpan = span;
    };
    // tap/finalize (not a hand-made subscribe) so an unsubscription during a synchronous run
    // reaches the run at once and the spans end as cancelled
    return source.pipe(
      tap({
        next: (chunk) => spans.chunk(chunk),
        error: (error: unknown) => spans.fail(error),
        complete: () => spans.complete(),
      }),
      finalize(() => {
        spans.cancel();
        if (tracingContext.onHook === onHook) delete tracingContext.onHook;
      }),
    );
  };
  return defer(() => (otelApi !== undefined ? start(otelApi) : from(loadOtelApi()).pipe(switchMap(start))));
}

/**
 * Telemetry for one run: a `tracingContext` for the run's processor hooks and an operator for
 * its chunks. Spans (all children of `rxagent.run`):
 *
 * - `rxagent.run` — `rxagent.run.id`, `rxagent.run.outcome` (finish | tripwire | error | aborted |
 *   cancelled), finish reason, summed token usage; tripwires add `rxagent.tripwire.*`.
 * - `rxagent.step` — `rxagent.step.number`, finish reason (`retry` for a rejected attempt).
 * - `rxagent.model` (child of the step) — `gen_ai.*` attributes (response id and model, usage,
 *   finish reasons); ends when the step's post-model hooks start, or its first tool result.
 * - `rxagent.tool` (child of the step) — `gen_ai.tool.name`, `gen_ai.tool.call.id`, outcome.
 * - `rxagent.processor.<hook>` (child of the step, or of the run outside steps) —
 *   `rxagent.processor.id`, `.hook`, `.outcome` (pass | drop | abort | retry | error), duration.
 *
 * Without a recording tracer the operator passes the chunks through untouched and never sets
 * `onHook`. Use one telemetry per run (or {@link traceRun}, which makes one per subscription).
 *
 * @example
 * ```ts
 * import { createRunTelemetry } from 'rxagent/ai-sdk';
 * const telemetry = createRunTelemetry({ attributes: { 'app.user': userId } });
 * agent.stream$(input, { tracingContext: telemetry.tracingContext }).pipe(telemetry.operator).subscribe(send);
 * ```
 */
export function createRunTelemetry(options: RunTelemetryOptions = {}): RunTelemetry {
  const tracingContext: TracingContext = {};
  return {
    tracingContext,
    operator: (source) => traced(source, tracingContext, options),
  };
}

/**
 * A traced run: calls `run` with a fresh `tracingContext` per subscription and pipes the result
 * through that run's telemetry (see {@link createRunTelemetry}).
 *
 * @example
 * ```ts
 * import { traceRun, toUIMessageStreamResponse } from 'rxagent/ai-sdk';
 * const run$ = traceRun((tracingContext) => agent.stream$(messages, { tracingContext }));
 * return toUIMessageStreamResponse(run$);
 * ```
 */
export function traceRun(run: (tracingContext: TracingContext) => Observable<ChunkType>, options: RunTelemetryOptions = {}): Observable<ChunkType> {
  return defer(() => {
    const telemetry = createRunTelemetry(options);
    return run(telemetry.tracingContext).pipe(telemetry.operator);
  });
}

/**
 * The run, step, model and tool spans of any chunk stream (no processor spans: those need the
 * run's `tracingContext`, see {@link createRunTelemetry}).
 *
 * @example
 * ```ts
 * import { withTelemetry } from 'rxagent/ai-sdk';
 * agent.stream$('Hi').pipe(withTelemetry({ tracer })).subscribe();
 * ```
 */
export function withTelemetry(options: RunTelemetryOptions = {}): MonoTypeOperatorFunction<ChunkType> {
  return (source) => defer(() => traced(source, {}, options));
}
