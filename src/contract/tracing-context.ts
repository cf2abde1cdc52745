/**
 * Observability hooks a run hands to every processor. rxagent calls `onHook` around each
 * processor hook when a tracer is attached (see `rxagent/ai-sdk`'s OpenTelemetry bridge);
 * without one, `tracingContext` is an empty object and costs nothing.
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
}

/** What happened in one processor hook run (for tracing). */
export interface ProcessorHookEvent {
  /** The id of the processor concerned. */
  processorId: string;
  /** The hook's name. */
  hook: string;
  /** How the hook call ended. */
  outcome: 'pass' | 'drop' | 'abort' | 'retry' | 'error';
  /** When the hook call started (ms since the epoch). */
  startTime: number;
  /** When it ended (ms since the epoch). */
  endTime: number;
}
