import { describe, expect, it, vi } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { z } from 'zod';
import { processOutputResult } from '../../src/operators/process-output-result.js';
import { createRunContext } from '../../src/operators/run-context.js';
import type { OutputResult } from '../../src/contract/processor-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { StructuredOutputProcessor, type StructuredOutputProcessorOptions } from '../../src/processors/structured-output.js';
import { chunk, testUsage } from '../../src/testing/chunk-builders.js';
import { judgeFailures, judgeModel, runOutputStream } from './support/harness.js';
import { expectOptionError } from './support/option-error.js';

const weather = z.object({ city: z.string(), tempC: z.number() });
type Weather = z.infer<typeof weather>;
/** Structures "It is N degrees in CITY" texts. */
const structurer = () =>
  judgeModel(({ prompt }) => {
    const match = /It is (-?\d+) degrees in (\w+)/.exec(prompt);
    return match === null ? '{}' : '```json\n' + JSON.stringify({ city: match[2], tempC: Number(match[1]) }) + '\n```';
  });

const answer = (text: string) => [chunk.stepStart(), chunk.textStart(), chunk.textDelta(text), chunk.textEnd(), chunk.stepFinish(), chunk.finish()];
const result = (text: string): OutputResult => ({ text, usage: testUsage(), finishReason: 'stop', steps: [] });
const create = (options: Partial<StructuredOutputProcessorOptions<Weather>> = {}) =>
  new StructuredOutputProcessor<Weather>({ model: structurer(), schema: weather, ...options });

describe('StructuredOutputProcessor', () => {
  it('has the reference id; fallback needs a value', () => {
    expect(create().id).toBe('structured-output');
    expectOptionError(() => create({ errorStrategy: 'fallback' }), 'structured-output', 'fallbackValue');
  });

  it('emits an object chunk right before finish and stores the object in state', async () => {
    const processor = create();
    const ctx = createRunContext();
    const output = await runOutputStream([processor], answer('It is 21 degrees in Paris.'), ctx);
    expect(output.map((part) => part.type)).toEqual(['step-start', 'text-start', 'text-delta', 'text-end', 'step-finish', 'object', 'finish']);
    expect(output.find((part) => part.type === 'object')).toEqual(expect.objectContaining({ payload: { object: { city: 'Paris', tempC: 21 } } }));
    expect(ctx.stateFor('structured-output').object).toEqual({ city: 'Paris', tempC: 21 });
  });

  it('processOutputResult sets result.object, and the stream reuses it (one call per run)', async () => {
    const model = structurer();
    const processor = new StructuredOutputProcessor<Weather>({ model, schema: weather });
    const ctx = createRunContext();
    const final = await lastValueFrom(of(result('It is 9 degrees in Oslo.')).pipe(processOutputResult([processor], ctx)));
    expect(final.object).toEqual({ city: 'Oslo', tempC: 9 });
    const output = await runOutputStream([processor], [chunk.finish()], ctx);
    expect(output.map((part) => part.type)).toEqual(['object', 'finish']);
    expect(model.calls).toHaveLength(1);
  });

  it('leaves out the text of rejected attempts', async () => {
    const model = structurer();
    const processor = new StructuredOutputProcessor<Weather>({ model, schema: weather });
    await runOutputStream(
      [processor],
      [
        chunk.textDelta('It is 99 degrees in Nowhere.'),
        chunk.stepFinish({ reason: 'retry' }),
        chunk.textDelta('It is 5 degrees in Bergen.'),
        chunk.stepFinish(),
        chunk.finish(),
      ],
    );
    expect(JSON.stringify(model.calls[0]?.prompt)).not.toContain('Nowhere');
    expect(JSON.stringify(model.calls[0]?.prompt)).toContain('Bergen');
  });

  it('puts the JSON schema in the instructions', async () => {
    const model = structurer();
    await runOutputStream([new StructuredOutputProcessor<Weather>({ model, schema: weather })], answer('It is 1 degrees in Rome.'));
    expect(JSON.stringify(model.calls[0]?.prompt)).toContain('tempC');
  });

  describe('errorStrategy', () => {
    for (const [name, { model: makeModel }] of Object.entries(judgeFailures)) {
      it(`warn on ${name}: no object, the run goes on, onError told`, async () => {
        const onError = vi.fn();
        const output = await runOutputStream([create({ model: makeModel(), onError, errorStrategy: 'warn' })], answer('It is 3 degrees in Lima.'));
        expect(output.map((part) => part.type)).not.toContain('object');
        expect(output.at(-1)?.type).toBe('finish');
        expect(onError).toHaveBeenCalledTimes(1);
      });
      it(`strict (the default) on ${name}: aborts`, async () => {
        const error = await runOutputStream([create({ model: makeModel() })], answer('It is 3 degrees in Lima.')).catch((caught: unknown) => caught);
        expect(TripWire.isInstance(error)).toBe(true);
        expect((error as TripWire).processorId).toBe('structured-output');
      });
      it(`fallback on ${name}: uses fallbackValue`, async () => {
        const fallbackValue = { city: 'unknown', tempC: 0 };
        const final = await lastValueFrom(
          of(result('It is 3 degrees in Lima.')).pipe(processOutputResult([create({ model: makeModel(), errorStrategy: 'fallback', fallbackValue })], createRunContext())),
        );
        expect(final.object).toEqual(fallbackValue);
      });
    }
  });
});
