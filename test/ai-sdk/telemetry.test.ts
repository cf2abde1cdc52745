import { afterEach, describe, expect, it } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { lastValueFrom, takeWhile, toArray } from 'rxjs';
import { z } from 'zod';
import { createRunTelemetry, traceRun, withTelemetry } from '../../src/ai-sdk/index.js';
import { Agent } from '../../src/loop/agent.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('rxagent-test');

afterEach(() => exporter.reset());

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan): string => span.spanContext().spanId;

function byName(spans: ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

const inputGuard: Processor = {
  id: 'input-guard',
  processInput: ({ messages, abort }) => {
    if (JSON.stringify(messages).includes('forbidden')) abort('forbidden topic');
    return messages;
  },
};

const upperCaser: Processor = {
  id: 'upper',
  processOutputStream: ({ part }) => {
    if (part.type === 'text-delta' && part.payload.text.trim() === '') return null;
    return part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part;
  },
  processOutputStep: () => undefined,
};

function toolAgent(): { agent: Agent } {
  const model = mockModel({
    parts: ({ callIndex }) =>
      callIndex === 0
        ? [{ type: 'response-metadata', id: 'resp-1', modelId: 'mock-1' }, ...toolCallParts('lookupOrder', { orderId: '123' }), finishPart('tool-calls', { inputTokens: 10, outputTokens: 5 })]
        : [...textParts('Shipped today.'), finishPart('stop', { inputTokens: 20, outputTokens: 3 })],
  });
  const agent = new Agent({
    id: 'support',
    model,
    tools: {
      lookupOrder: {
        inputSchema: z.object({ orderId: z.string() }),
        execute: async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }),
      },
    },
    inputProcessors: [inputGuard],
    outputProcessors: [upperCaser],
  });
  return { agent };
}

describe('OpenTelemetry spans', () => {
  it('records run, step, model, tool and processor-hook spans for a run with two processors and a tool', async () => {
    const { agent } = toolAgent();
    const telemetry = createRunTelemetry({ tracer, attributes: { 'app.tenant': 'acme' } });
    const chunks = await lastValueFrom(agent.stream$('Where is order 123?', { tracingContext: telemetry.tracingContext }).pipe(telemetry.operator, toArray()));
    expect(chunks.at(-1)?.type).toBe('finish');
    const spans = exporter.getFinishedSpans();

    const [run] = byName(spans, 'rxagent.run');
    expect(run).toBeDefined();
    const runSpan = run as ReadableSpan;
    expect(runSpan.attributes).toMatchObject({
      'app.tenant': 'acme',
      'rxagent.run.id': chunks[0]?.runId,
      'rxagent.run.outcome': 'finish',
      'rxagent.run.finish_reason': 'stop',
      'gen_ai.usage.input_tokens': 30,
      'gen_ai.usage.output_tokens': 8,
    });
    expect(parentOf(runSpan)).toBeUndefined();

    const steps = byName(spans, 'rxagent.step');
    expect(steps.map((step) => step.attributes['rxagent.step.number'])).toEqual([0, 1]);
    expect(steps.map((step) => step.attributes['rxagent.step.finish_reason'])).toEqual(['tool-calls', 'stop']);
    expect(steps.every((step) => parentOf(step) === idOf(runSpan))).toBe(true);

    const models = byName(spans, 'rxagent.model');
    expect(models).toHaveLength(2);
    expect(models.map((model) => parentOf(model))).toEqual(steps.map(idOf));
    expect(models[0]?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.response.id': 'resp-1',
      'gen_ai.response.model': 'mock-1',
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.response.finish_reasons': ['tool-calls'],
    });

    const tools = byName(spans, 'rxagent.tool');
    expect(tools).toHaveLength(1);
    expect(tools[0]?.attributes).toMatchObject({ 'gen_ai.tool.name': 'lookupOrder', 'gen_ai.tool.call.id': 'call-lookupOrder', 'rxagent.tool.outcome': 'result' });
    expect(parentOf(tools[0] as ReadableSpan)).toBe(idOf(steps[0] as ReadableSpan));

    const processorSpans = spans.filter((span) => span.name.startsWith('rxagent.processor.'));
    const described = processorSpans.map((span) => `${span.attributes['rxagent.processor.id']}.${span.attributes['rxagent.processor.hook']}:${span.attributes['rxagent.processor.outcome']}`);
    expect(described.filter((entry) => entry.startsWith('input-guard'))).toEqual(['input-guard.processInput:pass']);
    expect(described.filter((entry) => entry === 'upper.processOutputStep:pass')).toHaveLength(2);
    // processInput ran before any step: a child of the run.
    const processInput = processorSpans.find((span) => span.attributes['rxagent.processor.hook'] === 'processInput') as ReadableSpan;
    expect(parentOf(processInput)).toBe(idOf(runSpan));
    // processOutputStream: one aggregated span per processor and step, with call and drop counts.
    const streamSpans = processorSpans.filter((span) => span.attributes['rxagent.processor.hook'] === 'processOutputStream');
    const secondStepStream = streamSpans.find((span) => parentOf(span) === idOf(steps[1] as ReadableSpan));
    expect(secondStepStream?.attributes).toMatchObject({ 'rxagent.processor.id': 'upper', 'rxagent.processor.outcome': 'pass' });
    expect(Number(secondStepStream?.attributes['rxagent.processor.calls'])).toBeGreaterThanOrEqual(5);
    expect(processorSpans.every((span) => typeof span.attributes['rxagent.processor.duration_ms'] === 'number')).toBe(true);
    // The model span of step 0 ended no later than its tool span.
    const toolStart = (tools[0] as ReadableSpan).startTime;
    const modelEnd = (models[0] as ReadableSpan).endTime;
    expect(modelEnd[0] * 1e9 + modelEnd[1]).toBeLessThanOrEqual(toolStart[0] * 1e9 + toolStart[1]);
  });

  it('marks an aborting hook and the tripwired run', async () => {
    const { agent } = toolAgent();
    const chunks = await lastValueFrom(traceRun((tracingContext) => agent.stream$('Tell me something forbidden', { tracingContext }), { tracer }).pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('tripwire');
    const spans = exporter.getFinishedSpans();
    const run = byName(spans, 'rxagent.run')[0] as ReadableSpan;
    expect(run.attributes).toMatchObject({ 'rxagent.run.outcome': 'tripwire', 'rxagent.tripwire.reason': 'forbidden topic', 'rxagent.tripwire.processor_id': 'input-guard' });
    expect(run.events.map((event) => event.name)).toEqual(['rxagent.tripwire']);
    const hook = spans.find((span) => span.name === 'rxagent.processor.processInput') as ReadableSpan;
    expect(hook.attributes['rxagent.processor.outcome']).toBe('abort');
    expect(byName(spans, 'rxagent.step')).toHaveLength(0);
  });

  it('ends the spans as cancelled when the consumer unsubscribes', async () => {
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('one two three'), finishPart('stop')] }) });
    const telemetry = createRunTelemetry({ tracer });
    // the consumer leaves at the first delta (takeWhile unsubscribes even when the run emits synchronously)
    await lastValueFrom(
      agent.stream$('hi', { tracingContext: telemetry.tracingContext }).pipe(
        telemetry.operator,
        takeWhile((chunk) => chunk.type !== 'text-delta', true),
        toArray(),
      ),
    );
    const run = byName(exporter.getFinishedSpans(), 'rxagent.run')[0] as ReadableSpan;
    expect(run.attributes['rxagent.run.outcome']).toBe('cancelled');
    expect(byName(exporter.getFinishedSpans(), 'rxagent.step')).toHaveLength(1);
    expect(telemetry.tracingContext.onHook).toBeUndefined();
  });

  it('withTelemetry traces a plain chunk stream (no processor spans)', async () => {
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('hi'), finishPart('stop')] }), outputProcessors: [upperCaser] });
    await lastValueFrom(agent.stream$('hi').pipe(withTelemetry({ tracer }), toArray()));
    const names = exporter.getFinishedSpans().map((span) => span.name);
    expect(names.sort()).toEqual(['rxagent.model', 'rxagent.run', 'rxagent.step']);
  });

  it('costs nothing without a registered tracer provider: onHook stays unset, chunks unchanged', async () => {
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('same text'), finishPart('stop')] }), outputProcessors: [upperCaser], generateId: () => 'fixed-id', now: () => new Date(0) });
    const telemetry = createRunTelemetry();
    const seenOnHook: unknown[] = [];
    const traced = await lastValueFrom(
      agent.stream$('hi', { tracingContext: telemetry.tracingContext, runId: 'r' }).pipe(telemetry.operator, toArray()),
    );
    seenOnHook.push(telemetry.tracingContext.onHook);
    const plain = await lastValueFrom(agent.stream$('hi', { runId: 'r' }).pipe(toArray()));
    expect(seenOnHook).toEqual([undefined]);
    expect(traced).toEqual(plain);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });
});
