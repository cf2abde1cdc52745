/**
 * `thrownMessage` and `isReadableError` (src/errors/thrown-message.ts): the one rule every error
 * text of rxagent reads a thrown value with. Hostile values never make it throw; what it cannot read
 * is `undefined` (each caller says so in its own words). It does not bound: callers that show a
 * message cut it.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { isReadableError, thrownMessage } from '../../src/errors/thrown-message.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { unreadableHookValue } from '../../src/contract/processor-checks.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { Agent } from '../../src/loop/agent.js';
import { scriptedModel } from '../../src/testing/index.js';
import { errorPosingProxy, revokedProxy, throwingProxy } from '../support/hostile-values.js';

const throwingMessageGetter = (): Error =>
  Object.defineProperty(new Error('x'), 'message', {
    get() {
      throw new Error('hostile message getter');
    },
  });
const throwingToString = (): object => ({
  toString() {
    throw new Error('hostile toString');
  },
});
const symbolMessage = (): Error => Object.assign(new Error('x'), { message: Symbol('why') as unknown as string });

describe('thrownMessage', () => {
  it('reads an Error as its message, anything else as String gives it', () => {
    expect(thrownMessage(new TypeError('boom'))).toBe('boom');
    expect(thrownMessage('plain')).toBe('plain');
    expect(thrownMessage(42)).toBe('42');
    expect(thrownMessage(10n)).toBe('10');
    expect(thrownMessage(Symbol('s'))).toBe('Symbol(s)');
    expect(thrownMessage(null)).toBe('null');
    expect(thrownMessage(undefined)).toBe('undefined');
    expect(thrownMessage({ code: 7 })).toBe('[object Object]');
    expect(thrownMessage(Object.assign(new Error('x'), { message: 42 as unknown as string }))).toBe('42');
    expect(thrownMessage(symbolMessage())).toBe('Symbol(why)');
  });

  it('hostile values are undefined, never a throw', () => {
    for (const hostile of [throwingProxy(), revokedProxy(), errorPosingProxy(), throwingMessageGetter(), throwingToString(), Object.create(null) as object]) {
      expect(thrownMessage(hostile)).toBeUndefined();
    }
    // an Error whose message is an object whose toString throws
    expect(thrownMessage(Object.assign(new Error('x'), { message: throwingToString() as unknown as string }))).toBeUndefined();
  });

  it('show is how a value that is not an Error reads, and runs inside the guard', () => {
    const json = (value: unknown): string => JSON.stringify(value) ?? String(value);
    expect(thrownMessage({ code: 7 }, json)).toBe('{"code":7}');
    expect(thrownMessage(new Error('boom'), json)).toBe('boom');
    expect(thrownMessage({ big: 1n }, json)).toBeUndefined();
    expect(thrownMessage(revokedProxy(), json)).toBeUndefined();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(thrownMessage(cycle, json)).toBeUndefined();
  });

  it('is not bounded: a 1 MB message comes back whole (a caller that shows it cuts it)', () => {
    const huge = 'x'.repeat(1 << 20);
    expect(thrownMessage(new Error(huge))).toHaveLength(1 << 20);
    expect(thrownMessage(huge)).toHaveLength(1 << 20);
  });
});

describe('isReadableError', () => {
  it('is true only for an Error whose message is a string that reads', () => {
    expect(isReadableError(new RangeError('r'))).toBe(true);
    expect(isReadableError(new Error())).toBe(true);
    expect(isReadableError('boom')).toBe(false);
    expect(isReadableError({ message: 'not an Error' })).toBe(false);
    expect(isReadableError(symbolMessage())).toBe(false);
    for (const hostile of [throwingProxy(), revokedProxy(), errorPosingProxy(), throwingMessageGetter(), Object.create(null) as object, null, undefined, 1n]) {
      expect(isReadableError(hostile)).toBe(false);
    }
  });
});

describe('where the rule is used: an Error whose message is a Symbol', () => {
  it('unreadableHookValue names it (it threw a TypeError: a Symbol cannot be put in a template)', () => {
    const error = unreadableHookValue('guard', 'processInput', 'threw', symbolMessage());
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect(error.message).toBe('Processor "guard" failed in processInput: threw a value that could not be read or used (Symbol(why)).');
  });

  it('a hook throwing a Proxy whose trap throws such an Error: the run ends with a ProcessorError naming the processor and the hook', async () => {
    const processor = {
      id: 'hostile',
      processInput: () => {
        throw new Proxy(
          {},
          {
            get() {
              throw symbolMessage();
            },
            getPrototypeOf() {
              throw symbolMessage();
            },
          },
        );
      },
    } as unknown as Processor;
    const agent = new Agent({ id: 'agent', model: scriptedModel({ rules: [], fallback: { text: 'ok' } }), inputProcessors: [processor] });
    const chunks = await lastValueFrom(agent.stream$('hi').pipe(toArray()));
    const last = chunks.at(-1);
    expect(last?.type).toBe('error');
    const error = last?.type === 'error' ? last.payload.error : undefined;
    expect(ProcessorError.isInstance(error) && { processorId: error.processorId, hook: error.hook }).toEqual({ processorId: 'hostile', hook: 'processInput' });
  });
});
