/** Type tests of the hook-contract additions: processorIndex, sendSignal, llmRequestStage, RequestContext surface. */
import { describe, expectTypeOf, it } from 'vitest';
import type {
  ProcessAPIErrorArgs,
  ProcessInputStepArgs,
  ProcessOutputStreamArgs,
  ProcessorContext,
  ProcessorSignal,
  ProcessorSignalInput,
  RequestContext,
  SendSignalFunction,
  TripWire,
} from '../../src/contract/index.js';
import type { toTripWire } from '../../src/contract/index.js';

describe('hook contract types', () => {
  it('every hook gets processorIndex and sendSignal', () => {
    expectTypeOf<ProcessorContext['processorIndex']>().toEqualTypeOf<number>();
    expectTypeOf<ProcessorContext['sendSignal']>().toEqualTypeOf<SendSignalFunction>();
    expectTypeOf<ProcessAPIErrorArgs['sendSignal']>().parameter(0).toEqualTypeOf<ProcessorSignalInput>();
    expectTypeOf<ReturnType<ProcessAPIErrorArgs['sendSignal']>>().toEqualTypeOf<Promise<ProcessorSignal>>();
    expectTypeOf<ProcessOutputStreamArgs['processorIndex']>().toEqualTypeOf<number>();
  });

  it('processInputStep gets llmRequestStage', () => {
    expectTypeOf<ProcessInputStepArgs['llmRequestStage']>().toEqualTypeOf<true | undefined>();
  });

  it('toTripWire narrows to rxagent TripWire or undefined', () => {
    expectTypeOf<ReturnType<typeof toTripWire>>().toEqualTypeOf<TripWire | undefined>();
  });

  it('RequestContext has the reference surface, typed', () => {
    type Context = RequestContext<{ tier: 'free' | 'pro' }>;
    expectTypeOf<Context['getRaw']>().returns.toEqualTypeOf<unknown>();
    expectTypeOf<Context['size']>().returns.toEqualTypeOf<number>();
    expectTypeOf<Context['serializeForSpan']>().returns.toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<Context['all']>().toMatchTypeOf<{ tier?: 'free' | 'pro' }>();
  });
});
