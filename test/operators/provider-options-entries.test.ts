/**
 * A provider's entry of `providerOptions` that is no object (`{ openai: null }`,
 * `{ mock: undefined }`): what the model is sent must not depend on whether a processor hooks
 * `processInputStep`. Before, the hook's copy of the settings made such an entry `{}`, while
 * without the hook the model got it as given. The AI SDK's type (`SharedV4ProviderOptions`,
 * `Record<string, Record<string, JSONValue>>`) has no null entry: the run refuses it before the
 * model is called, with or without the hook, naming the option.
 */
import fc from 'fast-check';
import { firstValueFrom, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { isOptionError } from '../../src/contract/option-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { processInputStep, type StepInput } from '../../src/operators/process-input-step.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { testContext } from './helpers.js';

const hook: Processor = { id: 'watcher', processInputStep: () => undefined };
/** What is not a provider's options object. */
const notAnObject = fc.constantFrom<unknown>(null, undefined, 'x', 0, true, [], [{}]);
const provider = fc.constantFrom('openai', 'mock', 'anthropic', '__proto__x', '');

describe('providerOptions: an entry that is no object', () => {
  it('is refused before the model is called, with or without a processInputStep hook, naming the entry (call options and defaultOptions)', async () => {
    await fc.assert(
      fc.asyncProperty(provider, notAnObject, fc.boolean(), fc.boolean(), async (name, value, hooked, asDefault) => {
        const model = mockModel({ parts: [...textParts('ok'), finishPart('stop')] });
        const providerOptions = { other: { a: 1 }, [name]: value } as Record<string, Record<string, never>>;
        const run = async (): Promise<unknown> => {
          const agent = new Agent({ id: 'a', model, ...(hooked ? { inputProcessors: [hook] } : {}), ...(asDefault ? { defaultOptions: { providerOptions } } : {}) });
          return agent.generate('Hi', asDefault ? {} : { providerOptions });
        };
        const path = `${asDefault ? 'config.defaultOptions' : 'options'}.providerOptions.${name}`;
        await expect(run()).rejects.toSatisfy((error: unknown) => isOptionError(error) && error.message.includes(path));
        expect(model.calls).toHaveLength(0);
      }),
      { numRuns: 60 },
    );
  }, 60_000);

  it('valid entries reach the model the same with or without the hook', async () => {
    const providerOptions = { openai: { user: 'u' }, mock: {} };
    for (const hooked of [false, true]) {
      const model = mockModel({ parts: [...textParts('ok'), finishPart('stop')] });
      const agent = new Agent({ id: 'a', model, ...(hooked ? { inputProcessors: [hook] } : {}) });
      await agent.generate('Hi', { providerOptions });
      expect(model.calls[0]?.providerOptions, String(hooked)).toStrictEqual(providerOptions);
    }
  });

  it('the operator on its own: a hook that leaves providerOptions alone hands them on as they came (no entry turned into {})', async () => {
    for (const value of [null, undefined, [], [{ a: 1 }]]) {
      const model = mockModel();
      const providerOptions = { openai: value } as unknown as Record<string, Record<string, never>>;
      const step = await firstValueFrom(of<StepInput>({ stepNumber: 0, model, providerOptions }).pipe(processInputStep([hook], testContext())));
      expect(step.providerOptions).toStrictEqual(providerOptions);
    }
  });
});
