/**
 * The token limiter's hooks while the default tokenizer is still loading: each hook answers with a
 * promise of its work and is called once, by its operator — it does not call itself again once
 * the tokenizer has loaded (a subclass that overrides a hook and calls `super` runs once per call).
 * Its own file: the tokenizer is loaded once per module graph, and must not be loaded yet here.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, of, toArray } from 'rxjs';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ProcessInputStepArgs, ProcessOutputStreamArgs } from '../../src/contract/processor-types.js';
import { processInputStep } from '../../src/operators/process-input-step.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { defaultTokenizer } from '../../src/processors/internal/lazy-tokenizer.js';
import { TokenLimiterProcessor } from '../../src/processors/token-limiter.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { contextWith, listWith, streamedText, textBlock, textMessage } from './support/harness.js';

const model: LanguageModelV4 = mockModel();

/** A limiter whose hooks count their calls (an app's subclass adding its own work around the hooks). */
class CountingLimiter extends TokenLimiterProcessor {
  readonly calls = { processInputStep: 0, processOutputStream: 0 };

  override processInputStep(args: ProcessInputStepArgs) {
    this.calls.processInputStep++;
    return super.processInputStep(args);
  }

  override processOutputStream(args: ProcessOutputStreamArgs) {
    if (args.part.type === 'text-delta') this.calls.processOutputStream++;
    return super.processOutputStream(args);
  }
}

describe('TokenLimiterProcessor while the default tokenizer loads', () => {
  it('each hook is called once by its operator, and does its work once the tokenizer has loaded', async () => {
    expect(defaultTokenizer.current).toBeUndefined();
    const limiter = new CountingLimiter({ limit: 1000, outputLimit: 3 });
    const list = listWith([textMessage('u1', 'user', 'hello there')]);
    const context = contextWith(list);

    const [inputStep, output] = await Promise.all([
      lastValueFrom(of({ stepNumber: 0, model }).pipe(processInputStep([limiter], context))),
      lastValueFrom(of(...textBlock(['Hello brave new world of tokens'])).pipe(processOutputStream([limiter], contextWith(listWith([]))), toArray())),
    ]);

    expect(defaultTokenizer.current).toBeDefined();
    expect(limiter.calls).toEqual({ processInputStep: 1, processOutputStream: 1 });
    expect(inputStep.stepNumber).toBe(0);
    expect(list.get.all.db().map((message) => message.id)).toEqual(['u1']);
    expect(defaultTokenizer.current?.countTokens(streamedText(output), { disallowedSpecial: new Set() })).toBe(3);
  });
});
