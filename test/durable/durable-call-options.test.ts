/** What a durable call may carry: JSON options (stored as given), nothing a process cannot hand to another. */
import { describe, expect, it } from 'vitest';
import { RequestContext } from 'rxagent';
import { NotDurableError, type DurableCallOptions } from 'rxagent/durable';
import { storedCallOf, threadOf } from '../../src/durable/durable-call-options.js';

const refused = (input: unknown, options: unknown): NotDurableError => {
  try {
    storedCallOf(input as never, options as DurableCallOptions);
  } catch (error) {
    if (NotDurableError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('accepted');
};

describe('storedCallOf', () => {
  it('keeps JSON options as given (providerOptions included), leaves runId out, makes the input JSON', () => {
    const options: DurableCallOptions = {
      runId: 'r1',
      messageId: 'm1',
      instructions: 'Be brief.',
      memory: { thread: { id: 't1', title: 'Orders' }, resource: 'u1' },
      maxSteps: 3,
      maxProcessorRetries: 1,
      toolChoice: 'auto',
      activeTools: ['lookup'],
      modelSettings: { temperature: 0.2 },
      providerOptions: { openai: { reasoningEffort: 'low' } },
      requestContext: { tenant: 'acme', flags: [1, 2] },
    };
    const at = new Date('2026-01-01T00:00:00Z');
    const stored = storedCallOf([{ role: 'user', content: 'hi', createdAt: at } as never], options);
    expect(stored.options).toEqual({ ...options, runId: undefined });
    expect('runId' in stored.options).toBe(false);
    expect(stored.input).toEqual([{ role: 'user', content: 'hi', createdAt: at.toISOString() }]);
    expect(threadOf(stored.options)).toEqual({ threadId: 't1', resourceId: 'u1' });
    expect(threadOf({ memory: { thread: 't2', resource: 'u2' } })).toEqual({ threadId: 't2', resourceId: 'u2' });
  });

  it.each([
    ['abortSignal', { abortSignal: new AbortController().signal }, 'options.abortSignal', /worker\.cancel/],
    ['prepareStep', { prepareStep: () => undefined }, 'options.prepareStep', /configuration/],
    ['stopWhen', { stopWhen: () => true }, 'options.stopWhen', /configuration/],
    ['outputProcessors', { outputProcessors: [] }, 'options.outputProcessors', /configured processors/],
    ['structuredOutput', { structuredOutput: { schema: {} } }, 'options.structuredOutput', /schema/],
    ['a Date in the request context', { requestContext: { when: new Date() } }, 'options.requestContext.when', /Date is not JSON/],
    ['a RequestContext', { requestContext: new RequestContext([['a', 1]]) }, 'options.requestContext', /plain JSON record/],
    ['a function in model settings', { modelSettings: { fetch: () => undefined } }, 'options.modelSettings.fetch', /function is not JSON/],
    ['NaN in provider options', { providerOptions: { x: { y: Number.NaN } } }, 'options.providerOptions.x.y', /NaN/],
  ])('refuses %s (NotDurableError naming it)', (_name, options, what, message) => {
    const error = refused('hi', options);
    expect(error.what).toBe(what);
    expect(error.message).toMatch(message);
  });

  it('refuses an input the codec cannot write (a BigInt, a cycle)', () => {
    const cyclic: Record<string, unknown> = { role: 'user', content: 'x' };
    cyclic['self'] = cyclic;
    expect(refused({ role: 'user', content: 'x', n: 1n }, {}).what).toBe('input');
    expect(refused(cyclic, {}).message).toMatch(/cycle/);
  });

  it('an unknown option is a TypeError with the closest known one; non-object options too', () => {
    expect(() => storedCallOf('hi', { maxStep: 2 } as never)).toThrow(/unknown option "maxStep" \(did you mean "maxSteps"\?\)/);
    expect(() => storedCallOf('hi', 'fast' as never)).toThrow(TypeError);
    expect(() => storedCallOf('hi', { messageId: '' })).toThrow(/messageId/);
  });
});
