import { describe, expect, it, vi } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { processInputStep, type StepInput } from '../../src/operators/process-input-step.js';
import type { RunContext } from '../../src/operators/run-context.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { ModelSelectionProcessor, type ModelSelectionOptions } from '../../src/processors/model-selection.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { contextWith, judgeFailures, judgeModel, listWith, textMessage } from './support/harness.js';
import { expectOptionError } from './support/option-error.js';

const agentModel = mockModel({ modelId: 'agent-default' });
const fast = mockModel({ modelId: 'fast-model' });
const deep = mockModel({ modelId: 'deep-model' });
const choices = [
  { id: 'fast', model: fast, description: 'greetings and short factual questions' },
  { id: 'deep', model: deep, description: 'maths, code and multi-step reasoning' },
];
/** Routes texts mentioning "prove" to deep, everything else to fast. */
const router = () =>
  judgeModel(({ prompt }) => (prompt.includes('prove') ? '{"choice": "deep", "confidence": 0.9, "reason": "maths"}' : '{"choice": "fast", "confidence": 0.8}'));

function setup(options: Partial<ModelSelectionOptions> & Pick<ModelSelectionOptions, 'model'>, text = 'Please prove that √2 is irrational') {
  const processor = new ModelSelectionProcessor({ choices, ...options });
  const ctx = contextWith(listWith([textMessage('u1', 'user', text)]));
  return { processor, ctx };
}

function step(processor: ModelSelectionProcessor, ctx: RunContext, stepNumber = 0): Promise<StepInput> {
  return lastValueFrom(of<StepInput>({ stepNumber, model: agentModel }).pipe(processInputStep([processor], ctx)));
}

describe('ModelSelectionProcessor', () => {
  it('has an id and validates its choices', () => {
    expect(new ModelSelectionProcessor({ model: router(), choices }).id).toBe('model-selection');
    expectOptionError(() => new ModelSelectionProcessor({ model: router(), choices: [] }), 'model-selection', 'choices');
    expectOptionError(() => new ModelSelectionProcessor({ model: router(), choices, defaultChoice: 'nope' }), 'model-selection', 'defaultChoice');
  });

  it('picks the model for the step from the classification and lists the choices in the prompt', async () => {
    const model = router();
    const { processor, ctx } = setup({ model });
    expect((await step(processor, ctx)).model.modelId).toBe('deep-model');
    expect(JSON.stringify(model.calls[0]?.prompt)).toContain('\\"deep\\": maths, code');
  });

  it('classifies once per run (scope run) and reports the decision', async () => {
    const model = router();
    const onDecision = vi.fn();
    const { processor, ctx } = setup({ model, onDecision }, 'hi there');
    expect((await step(processor, ctx, 0)).model.modelId).toBe('fast-model');
    expect((await step(processor, ctx, 1)).model.modelId).toBe('fast-model');
    expect(model.calls).toHaveLength(1);
    expect(onDecision).toHaveBeenCalledWith({ choice: 'fast', confidence: 0.8, fallback: false });
  });

  it("scope 'first-step' leaves later steps on the agent's model", async () => {
    const { processor, ctx } = setup({ model: router(), scope: 'first-step' });
    expect((await step(processor, ctx, 0)).model.modelId).toBe('deep-model');
    expect((await step(processor, ctx, 1)).model.modelId).toBe('agent-default');
  });

  it('below minConfidence the default choice is used', async () => {
    const { processor, ctx } = setup({ model: router(), minConfidence: 0.95, defaultChoice: 'fast' });
    expect((await step(processor, ctx)).model.modelId).toBe('fast-model');
  });

  it('an unknown choice is a malformed answer: warn uses the default, strict aborts', async () => {
    const unknown = () => judgeModel(() => '{"choice": "turbo"}');
    const warned = setup({ model: unknown(), defaultChoice: 'fast' });
    expect((await step(warned.processor, warned.ctx)).model.modelId).toBe('fast-model');
    const strict = setup({ model: unknown(), errorStrategy: 'strict' });
    const error = await step(strict.processor, strict.ctx).catch((caught: unknown) => caught);
    expect(TripWire.isInstance(error)).toBe(true);
  });

  describe('errorStrategy', () => {
    for (const [name, { model: makeModel }] of Object.entries(judgeFailures)) {
      it(`warn (default) on ${name}: the agent's model stays (no default given)`, async () => {
        const onError = vi.fn();
        const { processor, ctx } = setup({ model: makeModel(), onError });
        expect((await step(processor, ctx)).model.modelId).toBe('agent-default');
        expect(onError).toHaveBeenCalledTimes(1);
      });
      it(`strict on ${name}: aborts`, async () => {
        const { processor, ctx } = setup({ model: makeModel(), errorStrategy: 'strict' });
        const error = await step(processor, ctx).catch((caught: unknown) => caught);
        expect(TripWire.isInstance(error)).toBe(true);
      });
    }
  });
});
