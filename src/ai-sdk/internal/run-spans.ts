/**
 * The span bookkeeping of one traced run: which run / step / model / tool spans are open, and the
 * processor-hook spans recorded from `onHook` events. Times are epoch milliseconds on the
 * performance clock (the clock hook events use).
 */
import type { Attributes, Context, Exception, Span, Tracer } from '@opentelemetry/api';
import { isReadableError, thrownMessage, type AgentChunk, type ChunkType, type ProcessorHookEvent } from '../../contract/index.js';

type OtelApi = typeof import('@opentelemetry/api');

/** Epoch ms of a `performance.now()` reading. */
const epoch = (performanceTime: number): number => performance.timeOrigin + performanceTime;
const now = (): number => epoch(performance.now());

const SPAN_STATUS_ERROR = 2;
const SPAN_STATUS_OK = 1;

interface OpenStep {
  span: Span;
  context: Context;
  model: Span | undefined;
  modelEnd: number | undefined;
  stream: Map<string, StreamHookAggregate>;
}

interface StreamHookAggregate {
  processorId: string;
  start: number;
  end: number;
  calls: number;
  drops: number;
  busyMs: number;
  outcome: ProcessorHookEvent['outcome'];
}

interface PendingTool {
  name: string;
  start: number;
  providerExecuted: boolean;
}

const postModelHooks = new Set(['processLLMResponse', 'processOutputStep', 'processToolResult']);

function usageAttributes(usage: { inputTokens?: number | undefined; outputTokens?: number | undefined } | undefined): Attributes {
  const attributes: Attributes = {};
  if (usage?.inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = usage.inputTokens;
  if (usage?.outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = usage.outputTokens;
  return attributes;
}

/** The text of what a run or tool failed with (an `Error`'s message, a string), read without trusting it. */
function errorMessage(error: unknown): string {
  return thrownMessage(error, (value) => (typeof value === 'string' ? value : 'error')) ?? 'error';
}

/**
 * What a run failed with as OpenTelemetry's `Exception`, read once here: a readable `Error`'s code,
 * name, message and stack (the SDK reads each field, and a getter may throw), else its text.
 */
function exceptionOf(error: unknown): Exception {
  if (!isReadableError(error)) return errorMessage(error);
  try {
    const { code, name, message, stack } = error as Error & { code?: unknown };
    return {
      name: String(name),
      message,
      ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
      ...(typeof stack === 'string' ? { stack } : {}),
    };
  } catch {
    return errorMessage(error);
  }
}

/** One run's spans. */
export class RunSpans {
  readonly #api: OtelApi;
  readonly #tracer: Tracer;
  readonly #run: Span;
  readonly #runContext: Context;
  readonly #eachStreamHook: boolean;
  #step: OpenStep | undefined;
  #ended = false;
  readonly #tools = new Map<string, PendingTool>();
  /** `processOutputStream` aggregates outside any step (e.g. the `finish` chunk's). */
  readonly #runStream = new Map<string, StreamHookAggregate>();
  /** Told when the span processors should see as `currentSpan` changes. */
  onCurrentSpan: ((span: Span) => void) | undefined;

  constructor(api: OtelApi, tracer: Tracer, parent: Context, options: { attributes?: Attributes; streamHookSpans?: 'aggregate' | 'each' }) {
    this.#api = api;
    this.#tracer = tracer;
    this.#eachStreamHook = options.streamHookSpans === 'each';
    this.#run = tracer.startSpan('rxagent.run', { startTime: now(), attributes: { ...options.attributes } }, parent);
    this.#runContext = api.trace.setSpan(parent, this.#run);
  }

  get recording(): boolean {
    return this.#run.isRecording();
  }

  get currentSpan(): Span {
    return this.#step?.span ?? this.#run;
  }

  /** Ends the (non-recording) run span without attributes. */
  discard(): void {
    this.#ended = true;
    this.#run.end();
  }

  hook(event: ProcessorHookEvent): void {
    if (this.#ended) return;
    const step = this.#step;
    if (step !== undefined && postModelHooks.has(event.hook)) this.#endModel(step, epoch(event.startTime));
    if (event.hook === 'processOutputStream' && !this.#eachStreamHook) {
      const bucket = step?.stream ?? this.#runStream;
      const aggregate = bucket.get(event.processorId);
      const start = epoch(event.startTime);
      const end = epoch(event.endTime);
      if (aggregate === undefined) {
        bucket.set(event.processorId, {
          processorId: event.processorId,
          start,
          end,
          calls: 1,
          drops: event.outcome === 'drop' ? 1 : 0,
          busyMs: end - start,
          outcome: event.outcome === 'drop' ? 'pass' : event.outcome,
        });
      } else {
        aggregate.end = end;
        aggregate.calls++;
        aggregate.busyMs += end - start;
        if (event.outcome === 'drop') aggregate.drops++;
        else if (event.outcome !== 'pass') aggregate.outcome = event.outcome;
      }
      return;
    }
    const span = this.#tracer.startSpan(
      `rxagent.processor.${event.hook}`,
      {
        startTime: epoch(event.startTime),
        attributes: {
          'rxagent.processor.id': event.processorId,
          'rxagent.processor.hook': event.hook,
          'rxagent.processor.outcome': event.outcome,
          'rxagent.processor.duration_ms': event.endTime - event.startTime,
        },
      },
      step?.context ?? this.#runContext,
    );
    if (event.outcome === 'error') span.setStatus({ code: SPAN_STATUS_ERROR, message: `${event.processorId}.${event.hook} failed` });
    span.end(epoch(event.endTime));
  }

  chunk(chunk: ChunkType): void {
    if (this.#ended || chunk.type.startsWith('data-')) return;
    const agentChunk = chunk as AgentChunk;
    switch (agentChunk.type) {
      case 'start':
        this.#run.setAttribute('rxagent.run.id', agentChunk.runId);
        return;
      case 'step-start':
        this.#openStep(agentChunk);
        return;
      case 'response-metadata': {
        const model = this.#step?.model;
        if (model === undefined) return;
        if (agentChunk.payload.id !== undefined) model.setAttribute('gen_ai.response.id', agentChunk.payload.id);
        if (agentChunk.payload.modelId !== undefined) model.setAttribute('gen_ai.response.model', agentChunk.payload.modelId);
        return;
      }
      case 'tool-call':
        this.#tools.set(agentChunk.payload.toolCallId, {
          name: agentChunk.payload.toolName,
          start: now(),
          providerExecuted: agentChunk.payload.providerExecuted === true,
        });
        return;
      case 'tool-result':
        this.#toolDone(agentChunk.payload.toolCallId, agentChunk.payload.toolName, agentChunk.payload.isError === true ? 'error' : 'result', undefined);
        return;
      case 'tool-error':
        this.#toolDone(agentChunk.payload.toolCallId, agentChunk.payload.toolName, 'error', agentChunk.payload.error);
        return;
      case 'step-finish':
        this.#closeStep(agentChunk);
        return;
      case 'finish': {
        this.#run.setAttributes({
          'rxagent.run.outcome': 'finish',
          'rxagent.run.finish_reason': agentChunk.payload.stepResult.reason,
          ...usageAttributes(agentChunk.payload.output.usage),
        });
        this.#run.setStatus({ code: SPAN_STATUS_OK });
        this.#endRun();
        return;
      }
      case 'tripwire':
        this.#run.setAttributes({
          'rxagent.run.outcome': 'tripwire',
          'rxagent.tripwire.reason': agentChunk.payload.reason,
          'rxagent.tripwire.processor_id': agentChunk.payload.processorId,
          'rxagent.tripwire.retry': agentChunk.payload.retry === true,
        });
        this.#run.addEvent('rxagent.tripwire', { 'rxagent.tripwire.reason': agentChunk.payload.reason }, now());
        this.#endRun();
        return;
      case 'error':
        this.fail(agentChunk.payload.error);
        return;
      case 'abort':
        this.#run.setAttribute('rxagent.run.outcome', 'aborted');
        this.#endRun();
        return;
      default:
        return;
    }
  }

  /** The run ended with an error notification (or an `error` chunk). */
  fail(error: unknown): void {
    if (this.#ended) return;
    this.#run.setAttribute('rxagent.run.outcome', 'error');
    this.#run.recordException(exceptionOf(error), now());
    this.#run.setStatus({ code: SPAN_STATUS_ERROR, message: errorMessage(error) });
    this.#endRun();
  }

  /** The source completed (a stream without a terminal chunk ends its spans here). */
  complete(): void {
    if (this.#ended) return;
    this.#run.setAttribute('rxagent.run.outcome', 'complete');
    this.#endRun();
  }

  /** The consumer unsubscribed before the end. */
  cancel(): void {
    if (this.#ended) return;
    this.#run.setAttribute('rxagent.run.outcome', 'cancelled');
    this.#endRun();
  }

  #openStep(chunk: AgentChunk<'step-start'>): void {
    if (this.#step !== undefined) this.#closeStep(undefined);
    const start = now();
    const span = this.#tracer.startSpan(
      'rxagent.step',
      { startTime: start, attributes: { 'rxagent.step.number': chunk.payload.stepNumber } },
      this.#runContext,
    );
    const context = this.#api.trace.setSpan(this.#runContext, span);
    const model = this.#tracer.startSpan('rxagent.model', { startTime: start, attributes: { 'gen_ai.operation.name': 'chat' } }, context);
    this.#step = { span, context, model, modelEnd: undefined, stream: new Map() };
    this.onCurrentSpan?.(span);
  }

  #endModel(step: OpenStep, at: number): void {
    if (step.model === undefined || step.modelEnd !== undefined) return;
    step.modelEnd = at;
  }

  #toolDone(toolCallId: string, toolName: string, outcome: 'result' | 'error', error: unknown): void {
    const pending = this.#tools.get(toolCallId);
    this.#tools.delete(toolCallId);
    const end = now();
    const step = this.#step;
    if (step !== undefined && pending?.providerExecuted !== true) this.#endModel(step, end);
    const start = Math.max(pending?.start ?? end, pending?.providerExecuted === true ? 0 : (step?.modelEnd ?? 0));
    const span = this.#tracer.startSpan(
      'rxagent.tool',
      {
        startTime: Math.min(start, end),
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': pending?.name ?? toolName,
          'gen_ai.tool.call.id': toolCallId,
          'rxagent.tool.outcome': outcome,
          'rxagent.tool.provider_executed': pending?.providerExecuted === true,
        },
      },
      step?.context ?? this.#runContext,
    );
    if (outcome === 'error') span.setStatus({ code: SPAN_STATUS_ERROR, message: errorMessage(error ?? 'tool error') });
    span.end(end);
  }

  #flushStream(bucket: Map<string, StreamHookAggregate>, parent: Context): void {
    for (const aggregate of bucket.values()) {
      const span = this.#tracer.startSpan(
        'rxagent.processor.processOutputStream',
        {
          startTime: aggregate.start,
          attributes: {
            'rxagent.processor.id': aggregate.processorId,
            'rxagent.processor.hook': 'processOutputStream',
            'rxagent.processor.outcome': aggregate.outcome,
            'rxagent.processor.calls': aggregate.calls,
            'rxagent.processor.drops': aggregate.drops,
            'rxagent.processor.duration_ms': aggregate.busyMs,
          },
        },
        parent,
      );
      if (aggregate.outcome === 'error') span.setStatus({ code: SPAN_STATUS_ERROR, message: `${aggregate.processorId}.processOutputStream failed` });
      span.end(aggregate.end);
    }
    bucket.clear();
  }

  #closeStep(chunk: AgentChunk<'step-finish'> | undefined): void {
    const step = this.#step;
    if (step === undefined) return;
    this.#step = undefined;
    const end = now();
    const reason = chunk?.payload.stepResult.reason;
    if (step.model !== undefined) {
      if (chunk !== undefined) {
        step.model.setAttributes({
          ...usageAttributes(chunk.payload.output.usage),
          'gen_ai.response.finish_reasons': [reason ?? 'other'],
        });
      }
      step.model.end(step.modelEnd ?? end);
    }
    this.#flushStream(step.stream, step.context);
    if (reason !== undefined) step.span.setAttribute('rxagent.step.finish_reason', reason);
    if (chunk?.payload.stepResult.tripwire !== undefined) {
      step.span.setAttributes({
        'rxagent.tripwire.reason': chunk.payload.stepResult.tripwire.reason,
        'rxagent.tripwire.processor_id': chunk.payload.stepResult.tripwire.processorId,
      });
    }
    step.span.end(end);
    this.onCurrentSpan?.(this.#run);
  }

  #endRun(): void {
    this.#closeStep(undefined);
    this.#flushStream(this.#runStream, this.#runContext);
    this.#ended = true;
    this.#run.end(now());
  }
}
