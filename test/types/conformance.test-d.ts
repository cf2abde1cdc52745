/** The conformance kit's types: an instance or a factory, the report as data, options checked by the compiler. */
import { expectTypeOf } from 'vitest';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ChunkType, Processor } from 'rxagent';
import {
  checkProcessor,
  expectConformance,
  type ConformanceCause,
  type ConformanceMode,
  type ConformanceReport,
  type ProcessorFactoryContext,
} from 'rxagent/testing';

class MyProcessor implements Processor {
  readonly id = 'mine';
  count = 0;
  processOutputStream({ part }: { part: ChunkType }): ChunkType {
    return part;
  }
}

expectTypeOf(checkProcessor).parameter(0).toEqualTypeOf<Processor | ((context: ProcessorFactoryContext) => Processor)>();
expectTypeOf(checkProcessor(new MyProcessor())).toEqualTypeOf<Promise<ConformanceReport>>();
expectTypeOf(expectConformance(() => new MyProcessor())).toEqualTypeOf<Promise<ConformanceReport>>();
expectTypeOf<ProcessorFactoryContext['model']>().toEqualTypeOf<LanguageModelV4>();
expectTypeOf<ConformanceReport['findings'][number]['cause']>().toEqualTypeOf<ConformanceCause>();
expectTypeOf<ConformanceMode>().toEqualTypeOf<'live' | 'retried' | 'restored' | 'taken-over'>();

// @ts-expect-error an unknown mode
void checkProcessor(new MyProcessor(), { modes: ['replayed'] });
// @ts-expect-error a tool call's args are an object of JSON values
void checkProcessor(new MyProcessor(), { conversations: [{ name: 'x', input: 'Hi', steps: [{ toolCalls: [{ toolName: 't', args: 'nope' }] }, { text: 'ok' }] }] });
