import { describe, expect, it } from 'vitest';
import { StepAccumulator } from '../../src/loop/data/step-accumulator.js';
import { chunk } from '../../src/testing/chunk-builders.js';

const words = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}${index} `);

describe('StepAccumulator text', () => {
  it('keeps the step text and one text part over many deltas', () => {
    const accumulator = new StepAccumulator();
    const deltas = words('w', 70);
    for (const text of deltas) accumulator.observe(chunk.textDelta(text));
    expect(accumulator.text).toBe(deltas.join(''));
    accumulator.observe(chunk.textDelta('tail'));
    expect(accumulator.text).toBe(`${deltas.join('')}tail`);
    expect(accumulator.parts).toEqual([{ type: 'text', text: `${deltas.join('')}tail` }]);
    const message = accumulator.buildMessage('m1', new Date(0));
    expect(message?.content.parts).toEqual([{ type: 'step-start' }, { type: 'text', text: `${deltas.join('')}tail` }]);
  });

  it('keeps interleaved text parts apart and the step text in chunk order', () => {
    const accumulator = new StepAccumulator();
    const a = words('a', 40);
    const b = words('b', 40);
    for (const text of a.slice(0, 20)) accumulator.observe(chunk.textDelta(text, 'A'));
    expect(accumulator.parts).toEqual([{ type: 'text', text: a.slice(0, 20).join('') }]);
    for (let index = 0; index < 40; index++) {
      if (index >= 20) accumulator.observe(chunk.textDelta(a[index] as string, 'A'));
      accumulator.observe(chunk.textDelta(b[index] as string, 'B'));
    }
    // chunk order: a0..a19, then b0..b19 interleaved with a20..a39, then b20..b39
    const order: string[] = [...a.slice(0, 20)];
    for (let index = 0; index < 40; index++) {
      if (index >= 20) order.push(a[index] as string);
      order.push(b[index] as string);
    }
    expect(accumulator.text).toBe(order.join(''));
    expect(accumulator.parts).toEqual([
      { type: 'text', text: a.join('') },
      { type: 'text', text: b.join('') },
    ]);
  });

  it('writes deltas that come after the message was built into its parts', () => {
    const accumulator = new StepAccumulator();
    accumulator.observe(chunk.textDelta('one '));
    const message = accumulator.buildMessage('m1', new Date(0));
    accumulator.observe(chunk.textDelta('two'));
    accumulator.observe(chunk.textDelta('three', 'other'));
    accumulator.observe(chunk.textDelta('!'));
    expect(accumulator.text).toBe('one twothree!');
    expect(message?.content.parts[1]).toEqual({ type: 'text', text: 'one two!' });
    expect(accumulator.parts).toEqual([
      { type: 'text', text: 'one two!' },
      { type: 'text', text: 'three' },
    ]);
  });
});
