/**
 * Issue 24 §10: a judge's reason is not a leak. Whatever the judge writes as its reason (it may
 * quote the blocked text), whatever values it reports (PIIDetector) or passages (SystemPromptScrubber)
 * — none of it reaches the client: not the `tripwire` chunk, not the UI message stream (`live` or
 * `accepted`: the `data-tripwire` part, the error text), not `generate()`'s result. The client gets
 * the processor id and the categories; the developer gets everything in `onViolation`, once.
 * `revealJudgeReason: true` is the opt-in that sends the reason (checked, so the property can fail).
 *
 * Case counts: `RXAGENT_PROPERTY_RUNS / 10` (at least 50; CI 100, soak 2,000).
 */
import fc from 'fast-check';
import { lastValueFrom, toArray, type Observable } from 'rxjs';
import { describe, it, vi } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor, ProcessorViolation } from '../../src/contract/processor-types.js';
import { toUIMessageStream } from '../../src/ai-sdk/to-ui-message-stream.js';
import { Agent } from '../../src/loop/agent.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { PromptInjectionDetector } from '../../src/processors/prompt-injection-detector.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { judgeModel } from '../processors/support/harness.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

const RUNS = Math.max(50, Math.floor(PROPERTY_RUNS / 10));

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const items: T[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) items.push(next.value);
  return items;
}

type GuardName = 'moderation' | 'injection' | 'pii' | 'scrubber';

/** A guard whose judge flags everything, quoting `quote` in its reason (and as the value / passage it found). */
function guard(name: GuardName, quote: string, onViolation: (violation: ProcessorViolation) => void, reveal: boolean): Processor {
  const reason = JSON.stringify(`the text says "${quote}"`);
  switch (name) {
    case 'moderation':
      return new ModerationProcessor({ model: judgeModel(() => `{"categories": {"hate": 0.99}, "reason": ${reason}}`), onViolation, revealJudgeReason: reveal });
    case 'injection':
      return new PromptInjectionDetector({ model: judgeModel(() => `{"categories": {"jailbreak": 0.99}, "reason": ${reason}}`), onViolation, revealJudgeReason: reveal });
    case 'pii':
      return new PIIDetector({
        model: judgeModel(() => JSON.stringify({ detections: [{ type: 'name', value: quote, confidence: 1 }] })),
        strategy: 'block',
        includeDetections: true,
        onViolation,
      });
    default:
      return new SystemPromptScrubber({
        model: judgeModel(() => JSON.stringify({ detections: [{ value: quote, confidence: 1 }], reason: JSON.parse(reason) as string })),
        strategy: 'block',
        includeDetections: true,
        onViolation,
      });
  }
}

/** Everything a client can receive from one run, as text. */
async function clientView(run: () => Observable<ChunkType>, generated: () => Promise<unknown>): Promise<string> {
  const chunks = await lastValueFrom(run().pipe(toArray()));
  const live = await readAll(toUIMessageStream(run()));
  const accepted = await readAll(toUIMessageStream(run(), { release: 'accepted' }));
  const result = await generated();
  return JSON.stringify([chunks.filter((part) => part.type === 'tripwire'), live, accepted, (result as { tripwire?: unknown }).tripwire]);
}

describe("a judge's reason, values and passages never reach the client (property-based)", () => {
  it(
    'any guard, input or output, any reason text: the client sees the processor id and categories, onViolation sees the reason once',
    async () => {
      const scenario = fc
        .constantFrom<GuardName>('moderation', 'injection', 'pii', 'scrubber')
        .chain((name) =>
          fc.tuple(
            fc.constant(name),
            fc.constantFrom<'input' | 'output'>(...(name === 'injection' ? (['input'] as const) : name === 'scrubber' ? (['output'] as const) : (['input', 'output'] as const))),
            fc.stringMatching(/^[a-z]{4,12}$/).map((letters) => `QUOTE${letters}`),
            fc.boolean(),
          ),
        );
      await checkProperty(
        'judge-reason-private',
        scenario,
        async ([name, phase, quote, reveal]) => {
          const onViolation = vi.fn();
          const revealable = reveal && (name === 'moderation' || name === 'injection');
          const content = `Something about ${quote} in a sentence.`;
          const agent = () =>
            new Agent({
              id: 'a',
              instructions: 'You are Otto.',
              model: mockModel({ parts: [...textParts(phase === 'output' ? content : 'Fine.', { chunkSize: 6 }), finishPart()] }),
              ...(phase === 'input' ? { inputProcessors: [guard(name, quote, onViolation, reveal)] } : { outputProcessors: [guard(name, quote, onViolation, reveal)] }),
            });
          const prompt = phase === 'input' ? content : 'Hello';
          const seen = await clientView(
            () => agent().stream$(prompt),
            () => agent().generate(prompt),
          );
          if (!seen.includes('"processorId"')) throw new Error(`${name}/${phase}: no tripwire reached the client`);
          if (revealable !== seen.includes(quote)) throw new Error(`${name}/${phase} reveal=${String(reveal)}: the client ${revealable ? 'missed' : 'saw'} ${quote}: ${seen.slice(0, 400)}`);
          // onViolation: once per run (4 runs), with the judge's words
          if (onViolation.mock.calls.length !== 4) throw new Error(`${name}/${phase}: onViolation called ${onViolation.mock.calls.length} times for 4 runs`);
          if (!onViolation.mock.calls.every(([violation]) => JSON.stringify(violation).includes(quote))) throw new Error(`${name}/${phase}: onViolation missed the reason`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
