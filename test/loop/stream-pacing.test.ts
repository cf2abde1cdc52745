/**
 * Pacing in the loop's own consumers: `stream$(input, { demand })` reads the provider only while
 * the consumer's gate is open; `stream()`'s web streams hold the run while their reader is behind;
 * nothing is paced when nobody asks. Also run on RxJS 8 (vitest project `rxjs8`).
 */
import { describe, expect, it } from 'vitest';
import { Observable, lastValueFrom, map, toArray } from 'rxjs';
import { Agent, DemandGate } from '../../src/index.js';
import { countingModel, settle } from './support/counting-model.js';
import { waitFor } from '../support/wait-for.js';

const TOTAL = 2_000;
const ALL_PULLS = TOTAL + 4; // text-start, the deltas, text-end, finish, the close

it('runs on the RxJS of its vitest project (RxJS 8 has no Observable#lift)', () => {
  const major = process.env['RXAGENT_TEST_RXJS'];
  expect(['7', '8']).toContain(major);
  expect('lift' in Observable.prototype).toBe(major === '7');
});

describe('DemandGate.isInstance', () => {
  it('accepts a gate of any copy of rxagent (ESM and CJS builds share the brand), refuses look-alikes', () => {
    expect(DemandGate.isInstance(new DemandGate())).toBe(true);
    // what the other build's gate carries: its own class, the same Symbol.for brand
    const brand: symbol = Symbol.for('rxagent.DemandGate');
    class OtherCopy {
      constructor() {
        Object.defineProperty(this, brand, { value: true });
      }
    }
    expect(new OtherCopy() instanceof DemandGate).toBe(false);
    expect(DemandGate.isInstance(new OtherCopy())).toBe(true);
    for (const value of [undefined, null, 1, 'gate', { open: true }, { [Symbol('rxagent.DemandGate')]: true }]) expect(DemandGate.isInstance(value)).toBe(false);
  });
});

describe('stream$() with a demand gate', () => {
  it('reads no further while the gate is held, then the whole run once it is released', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const demand = new DemandGate();
    const reader = {};
    demand.hold(reader);
    const done = lastValueFrom(agent.stream$('Hi', { demand }).pipe(toArray()));
    await settle();
    const whileHeld = pulls();
    expect(whileHeld).toBeLessThan(5);
    await settle();
    expect(pulls()).toBe(whileHeld);
    demand.release(reader);
    const chunks = await done;
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(TOTAL);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(pulls()).toBe(ALL_PULLS);
  });

  it('the gate paces the run through operators applied after it', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const demand = new DemandGate();
    const types: string[] = [];
    let held = false;
    const subscription = agent
      .stream$('Hi', { demand })
      .pipe(map((chunk) => chunk.type))
      .subscribe((type) => {
        types.push(type);
        // a consumer that stops after 100 values: it holds the gate from then on
        if (types.length === 100 && !held) {
          held = true;
          demand.hold(types);
        }
      });
    await settle();
    expect(pulls()).toBeLessThan(110);
    demand.release(types);
    await waitFor(() => subscription.closed, 'the end of the run');
    expect(types.at(-1)).toBe('finish');
    expect(pulls()).toBe(ALL_PULLS);
  });

  it('nothing is paced when nobody asks: a plain subscription reads the whole reply', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const chunks = await lastValueFrom(agent.stream$('Hi').pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(pulls()).toBe(ALL_PULLS);
  });

  it('a demand that is not a DemandGate ends the run with a TypeError naming the option', async () => {
    const { model } = countingModel(1);
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const chunks = await lastValueFrom(agent.stream$('Hi', { demand: {} as DemandGate }).pipe(toArray()));
    const last = chunks.at(-1);
    expect(last?.type).toBe('error');
    const error = last?.type === 'error' ? last.payload.error : undefined;
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toContain('options.demand must be a DemandGate');
  });
});

describe('stream() paces the run by its readers', () => {
  it('a reader that stops reading fullStream stops the provider reads; reading on delivers the whole run', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const output = await agent.stream('Hi');
    const reader = output.fullStream.getReader();
    expect((await reader.read()).value?.type).toBe('start');
    await settle();
    const whileWaiting = pulls();
    expect(whileWaiting).toBeGreaterThan(0);
    expect(whileWaiting).toBeLessThan(20);
    await settle();
    expect(pulls()).toBe(whileWaiting);
    let deltas = 0;
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      if (next.value.type === 'text-delta') deltas++;
    }
    expect(deltas).toBe(TOTAL);
    expect(pulls()).toBe(ALL_PULLS);
    expect(await output.text).toBe('x'.repeat(TOTAL));
  });

  it('streams nobody reads never hold the run: awaiting the text alone reads the whole reply', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const output = await agent.stream('Hi');
    expect(await output.text).toBe('x'.repeat(TOTAL));
    expect(pulls()).toBe(ALL_PULLS);
  });
});
