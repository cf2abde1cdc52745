/**
 * `rxagent/ai-sdk`'s telemetry options are declared structurally (no `@opentelemetry/api` in its
 * .d.ts, smoke/consumer-types.mjs checks that against dist); OpenTelemetry's own objects fit them.
 */
import { context, trace, type Attributes } from '@opentelemetry/api';
import { expectTypeOf } from 'vitest';
import type { RunTelemetryOptions, TelemetryAttributes } from '../../src/ai-sdk/index.js';

const tracer = trace.getTracer('support-bot');
const options: RunTelemetryOptions = { tracer, parentContext: context.active(), attributes: { 'app.tenant': 'acme', 'app.ids': [1, 2] } };
expectTypeOf(options.tracer).not.toBeAny();
expectTypeOf<Attributes>().toExtend<TelemetryAttributes>();
expectTypeOf<TelemetryAttributes>().toExtend<Attributes>();
// @ts-expect-error -- not a tracer
const wrong: RunTelemetryOptions = { tracer: { name: 'x' } };
void wrong;
