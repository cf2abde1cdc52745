/**
 * Issue 24 §9 and §11: nothing in the content switches a judge off, and judging has a cost bound.
 *
 * - Any failure the judged content can cause (an answer in prose, JSON of another shape, a
 *   request rejected as too long or refused, an answer cut by the content filter), in any guard,
 *   on input or output, ends the run in a tripwire before the content reaches the model or the
 *   client; infrastructure failures follow `errorStrategy` (fail closed by default since issue 31;
 *   `'fail-open'` lets the content through, `onError` and `onFailOpen` told).
 * - Content of any length up to 5× the judge's input budget is judged in pieces that fit the
 *   budget: a judge that rejects longer prompts never overflows, and a marker anywhere is found.
 * - Any posted history (up to 2,000 messages) costs judge calls in proportion to its characters,
 *   never one per message, and never more than `maxJudgeCalls`; past the bound the run is blocked.
 *
 * Case counts: `RXAGENT_PROPERTY_RUNS / 10` per property (at least 50; CI 100, soak 2,000).
 */
import fc from 'fast-check';
import { lastValueFrom, of, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { APICallError, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { createProviderStreamError } from '@ai-sdk/provider-utils';
import type { Processor } from '../../src/contract/processor-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { Agent } from '../../src/loop/agent.js';
import { processInput } from '../../src/operators/process-input.js';
import { LanguageDetector } from '../../src/processors/language-detector.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { PromptInjectionDetector } from '../../src/processors/prompt-injection-detector.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { contextWith, judgedContents, judgeModel, listWith, promptText, textMessage } from '../processors/support/harness.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

const RUNS = Math.max(50, Math.floor(PROPERTY_RUNS / 10));
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

type GuardName = 'moderation' | 'pii' | 'injection' | 'scrubber' | 'language';
const guardPhases: Record<GuardName, ReadonlyArray<'input' | 'output'>> = {
  moderation: ['input', 'output'],
  pii: ['input', 'output'],
  injection: ['input'],
  scrubber: ['output'],
  language: ['input'],
};

function guard(name: GuardName, model: MockModel, options: Record<string, unknown> = {}): Processor {
  const shared = { model, ...options };
  switch (name) {
    case 'moderation':
      return new ModerationProcessor(shared);
    case 'pii':
      return new PIIDetector({ ...shared, strategy: 'block' });
    case 'injection':
      return new PromptInjectionDetector(shared);
    case 'scrubber':
      return new SystemPromptScrubber({ ...shared, strategy: 'block' });
    default:
      return new LanguageDetector({ ...shared, targetLanguages: ['en'], strategy: 'block' });
  }
}

/** Ways the judged content can make a judge fail. */
const contentFailures: Record<string, () => MockModel> = {
  'an answer in prose': () => judgeModel(() => 'Sure! This text looks perfectly fine to me, nothing to report.'),
  'JSON of another shape': () => judgeModel(() => '{"verdict": "safe", "note": "the user asked me to say so"}'),
  'an answer cut short': () =>
    mockModel({ parts: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: '{"categor' }, { type: 'text-end', id: 't' }, { type: 'finish', finishReason: { unified: 'length', raw: 'length' }, usage }] }),
  'a content-filter stop': () =>
    mockModel({ parts: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: '{}' }, { type: 'text-end', id: 't' }, { type: 'finish', finishReason: { unified: 'content-filter', raw: 'content_filter' }, usage }] }),
  'HTTP 400, context length exceeded': () =>
    mockModel({ error: new APICallError({ message: "This model's maximum context length is 8192 tokens", url: 'https://judge', requestBodyValues: {}, statusCode: 400 }) }),
  'HTTP 413': () => mockModel({ error: new APICallError({ message: 'Payload Too Large', url: 'https://judge', requestBodyValues: {}, statusCode: 413 }) }),
  // not recognised as an outage: the content may have caused it (it was read as infrastructure)
  "a provider's bug (a TypeError)": () => mockModel({ error: new TypeError("Cannot read properties of undefined (reading 'choices')") }),
};
/** Failures of the judge's infrastructure (the content cannot cause them). */
const infrastructureFailures: Record<string, () => MockModel> = {
  // undici's failure as a provider's fetch throws it (the code is on the cause), and as the AI SDK wraps it
  'a network error': () => mockModel({ error: new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }) }),
  'a network error, as the AI SDK throws it': () =>
    mockModel({ error: new APICallError({ message: 'Cannot connect to API: read ECONNRESET', url: 'https://judge', requestBodyValues: {}, cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), isRetryable: true }) }),
  'HTTP 503': () => mockModel({ error: new APICallError({ message: 'Service Unavailable', url: 'https://judge', requestBodyValues: {}, statusCode: 503, isRetryable: true }) }),
  'HTTP 429': () => mockModel({ error: new APICallError({ message: 'Too Many Requests', url: 'https://judge', requestBodyValues: {}, statusCode: 429, isRetryable: true }) }),
  // as a provider emits a 503 mid-stream (the AI SDK's marked stream error)
  'an error part': () => mockModel({ parts: [{ type: 'error', error: createProviderStreamError({ message: 'Service Unavailable', statusCode: 503, data: {} }) }] as LanguageModelV4StreamPart[] }),
};

/** One agent run with `processor` on `phase`; what the agent's model and the client saw. */
async function run(processor: Processor, phase: 'input' | 'output', content: string) {
  const model = mockModel({ parts: [...textParts(phase === 'output' ? content : 'Fine.', { chunkSize: 5 }), finishPart()] });
  const agent = new Agent({ id: 'a', instructions: 'You are Otto.', model, ...(phase === 'input' ? { inputProcessors: [processor] } : { outputProcessors: [processor] }) });
  const chunks = await lastValueFrom(agent.stream$(phase === 'input' ? content : 'Hello there, how are you?').pipe(toArray()));
  const streamed = chunks.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('');
  const tripwire = chunks.find((part) => part.type === 'tripwire');
  return { model, streamed, tripwire, chunks };
}

const sentence = fc.stringMatching(/^[A-Za-z ,]{10,60}$/).map((text) => `${text.trim() || 'Plain words'}.`);
const contentArbitrary = fc.tuple(fc.array(sentence, { minLength: 1, maxLength: 6 }), fc.stringMatching(/^[a-z]{6,10}$/)).map(([sentences, tag]) => ({
  marker: `MARK${tag}`,
  text: [...sentences.slice(0, 1), `The MARK${tag} is here.`, ...sentences.slice(1)].join(' '),
}));

describe('a judge failure the content can cause never lets the content through (property-based)', () => {
  it(
    'any guard, input or output, any content-caused failure: a tripwire, the content reaches neither the model nor the client',
    async () => {
      const scenario = fc
        .constantFrom<GuardName>('moderation', 'pii', 'injection', 'scrubber', 'language')
        .chain((name) => fc.tuple(fc.constant(name), fc.constantFrom(...guardPhases[name]), fc.constantFrom(...Object.keys(contentFailures)), contentArbitrary));
      await checkProperty(
        'judge-failures-content',
        scenario,
        async ([name, phase, failure, { marker, text }]) => {
          const onError = vi.fn();
          const { model, streamed, tripwire } = await run(guard(name, (contentFailures[failure] as () => MockModel)(), { onError }), phase, text);
          if (tripwire === undefined) throw new Error(`${name}/${phase}/${failure}: no tripwire`);
          if (phase === 'input' && model.calls.length > 0) throw new Error(`${name}/${failure}: the agent's model was called`);
          if (streamed.includes(marker)) throw new Error(`${name}/${failure}: the client saw the content`);
          if (JSON.stringify(tripwire).includes(marker)) throw new Error(`${name}/${failure}: the tripwire quotes the content`);
          if (onError.mock.calls.length === 0) throw new Error(`${name}/${failure}: onError not told`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "infrastructure failures follow errorStrategy: strict (default) blocks; 'fail-open' lets the content through and tells onError and onFailOpen",
    async () => {
      const scenario = fc
        .constantFrom<GuardName>('moderation', 'pii', 'injection', 'scrubber', 'language')
        .chain((name) => fc.tuple(fc.constant(name), fc.constantFrom(...guardPhases[name]), fc.constantFrom(...Object.keys(infrastructureFailures)), contentArbitrary, fc.boolean()));
      await checkProperty(
        'judge-failures-infrastructure',
        scenario,
        async ([name, phase, failure, { text }, strict]) => {
          const onError = vi.fn();
          const onFailOpen = vi.fn();
          // the failures are permanent: a short deadline keeps the retries from taking 10 s per case
          const options = { onError, onFailOpen, judgeDeadlineMs: 20, ...(strict ? {} : { errorStrategy: 'fail-open' }) };
          const { tripwire, streamed, model } = await run(guard(name, (infrastructureFailures[failure] as () => MockModel)(), options), phase, text);
          if (strict !== (tripwire !== undefined)) throw new Error(`${name}/${phase}/${failure}: strict=${String(strict)} but tripwire=${JSON.stringify(tripwire)}`);
          if (!strict && phase === 'output' && streamed !== text) throw new Error(`${name}/${failure}: warn lost text`);
          if (!strict && phase === 'input' && model.calls.length !== 1) throw new Error(`${name}/${failure}: warn did not reach the model`);
          if (onError.mock.calls.length === 0) throw new Error(`${name}/${failure}: onError not told`);
          if (!strict && onFailOpen.mock.calls.length === 0) throw new Error(`${name}/${failure}: onFailOpen not told`);
          if (strict && onFailOpen.mock.calls.length > 0) throw new Error(`${name}/${failure}: onFailOpen told though it blocked`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'content up to 5× the input budget is judged in pieces within it; a judge with that context never overflows and finds a marker anywhere',
    async () => {
      const budget = 1_000;
      const scenario = fc.record({
        length: fc.integer({ min: 1, max: 5 * budget }),
        at: fc.double({ min: 0, max: 1, noNaN: true }),
        spaces: fc.boolean(),
        name: fc.constantFrom<GuardName>('moderation', 'pii', 'injection'),
      });
      await checkProperty(
        'judge-failures-budget',
        scenario,
        async ({ length, at, spaces, name }) => {
          const marker = 'MARKxyzzy';
          const filler = (spaces ? 'word ' : 'w').repeat(length).slice(0, length);
          const cut = Math.floor(at * filler.length);
          const text = `${filler.slice(0, cut)}${spaces ? ' ' : ''}${marker}${spaces ? ' ' : ''}${filler.slice(cut)}`;
          let overflowed = false;
          const judge = judgeModel(({ prompt }) => {
            const contents = judgedContents(prompt);
            if (contents.some((content) => content.length > budget)) overflowed = true;
            const flagged = contents.some((content) => content.includes(marker));
            if (name === 'pii') return JSON.stringify({ detections: flagged ? [{ type: 'api-key', value: marker, confidence: 1 }] : [] });
            return name === 'moderation' ? `{"categories": {"violence": ${flagged ? 0.99 : 0}}}` : `{"categories": {"injection": ${flagged ? 0.99 : 0}}}`;
          });
          const list = listWith([textMessage('u1', 'user', text)]);
          const processor = guard(name, judge, { maxJudgeInputChars: budget, ...(name === 'pii' ? { detectionTypes: ['api-key'] } : {}) });
          const result = await lastValueFrom(of(list).pipe(processInput([processor], contextWith(list)))).catch((error: unknown) => error);
          if (overflowed) throw new Error(`a judge call carried more than ${budget} characters`);
          if (!TripWire.isInstance(result)) throw new Error(`marker at ${cut} of ${text.length} not found (${judge.calls.length} calls)`);
          const pieces = Math.ceil(text.length / budget);
          if (judge.calls.length > 2 * pieces + 1) throw new Error(`${judge.calls.length} calls for ${text.length} characters`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('judge calls are bounded per run (property-based)', () => {
  it(
    'a posted history of up to 2,000 messages costs about one call per maxJudgeInputChars, within maxJudgeCalls; past the bound the run is blocked',
    async () => {
      const scenario = fc.record({
        count: fc.integer({ min: 1, max: 2_000 }),
        length: fc.integer({ min: 1, max: 400 }),
        name: fc.constantFrom<GuardName>('moderation', 'pii', 'injection'),
        maxJudgeCalls: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
      });
      await checkProperty(
        'judge-calls-bounded',
        scenario,
        async ({ count, length, name, maxJudgeCalls }) => {
          const judge = judgeModel(() => (name === 'pii' ? '{"detections": []}' : '{"categories": {}}'));
          const messages = Array.from({ length: count }, (_, index) => textMessage(`u${index}`, 'user', `${index} ${'x'.repeat(length)}`));
          const list = listWith(messages);
          const processor = guard(name, judge, maxJudgeCalls === undefined ? {} : { maxJudgeCalls });
          const result = await lastValueFrom(of(list).pipe(processInput([processor], contextWith(list)))).catch((error: unknown) => error);
          const characters = messages.reduce((sum, message) => sum + (message.content.parts[0] as { text: string }).text.length + 2, 0);
          // batches are packed greedily: each holds more than 8,000 characters minus one message, at most 8,000
          const lower = Math.ceil(characters / 8_000);
          const upper = Math.ceil(characters / (8_000 - (length + 12)));
          const bound = maxJudgeCalls ?? 100;
          const blocked = TripWire.isInstance(result);
          if (judge.calls.length > bound) throw new Error(`${judge.calls.length} calls past the bound ${bound}`);
          if (judge.calls.length > upper) throw new Error(`${judge.calls.length} calls for ${count} messages of ${characters} characters`);
          if (lower > bound && !blocked) throw new Error(`needed at least ${lower} calls, bound ${bound}, not blocked`);
          if (blocked && upper <= bound) throw new Error(`blocked though at most ${upper} calls were needed (bound ${bound})`);
          if (blocked && !/maxJudgeCalls/.test((result as TripWire).reason)) throw new Error(`blocked for another reason: ${(result as TripWire).reason}`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('2,000 posted messages through an Agent: a handful of judge calls, not 1,000', async () => {
    const judge = judgeModel(() => '{"categories": {}}');
    const model = mockModel({ parts: [...textParts('ok'), finishPart()] });
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ModerationProcessor({ model: judge })] });
    const history = Array.from({ length: 2_000 }, (_, index) =>
      index % 2 === 0 ? { role: 'user' as const, content: `Turn ${index}: a short line of chat.` } : { role: 'assistant' as const, content: `Turn ${index}: a short reply.` },
    );
    const result = await agent.generate(history);
    expect(result.text).toBe('ok');
    expect(judge.calls.length).toBeLessThanOrEqual(6);
  });
});
