/**
 * Red team, December 2026 (third pass): the guard processors against judge answers of the
 * reference's shape, hostile thrown values, and options that carry secrets.
 *
 * - **The reference's PII entries** (`{type, value, confidence, start, end, redacted_value}`) were
 *   an unreadable answer: every run of a judge written for the reference was blocked. Now read on
 *   the one strict path: positions must be whole numbers within the judged text (`start ≤ end`,
 *   both or neither); any other position is an unreadable answer (blocked by default). The
 *   replacement is the guard's `redactionMethod`, as in the reference — the judge's
 *   `redacted_value` is never written into the text.
 * - **The reference's `{ model, criteria, name? }` choices** of `ModelSelectionProcessor` were
 *   refused. Now they construct as the reference documents them (named after the model, at least
 *   two, distinct names, criteria not blank; `minProbability` abstains below it or without a
 *   confidence), checked like every other option.
 * - **Option values in error messages**: a string given to the wrong option (an API key) was
 *   printed whole in `InvalidProcessorOptionError`'s message. Now described (`a string of 41
 *   characters`); so is a pattern that does not compile.
 * - **Hostile thrown values in the judge's retry decision**: an error whose `responseHeaders`,
 *   `statusCode` or `cause` throws, or a revoked Proxy, made the retry decision throw — the run
 *   ended in a `ProcessorError` instead of the guard's decision. Now an error that cannot be read
 *   is a judge failure of kind `content` (blocked by default, never retried).
 * - **`ProcessorError.fromThrown`** threw on a revoked Proxy, a null-prototype object or a throwing
 *   `Symbol.toPrimitive`. Now total.
 */
import fc from 'fast-check';
import { lastValueFrom, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { APICallError } from '@ai-sdk/provider';
import { InvalidProcessorOptionError } from '../../src/contract/index.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { processInputStep, type StepInput } from '../../src/operators/process-input-step.js';
import { ModelSelectionProcessor } from '../../src/processors/model-selection.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { classifyFailure, StructuredCallError } from '../../src/processors/internal/guard-judge.js';
import { callWithRetry, readCallError, retryAfterMs } from '../../src/processors/internal/judge-retry.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { checkProperty, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { errorPosingProxy, revokedProxy, throwingProxy } from '../support/hostile-values.js';
import { contextWith, judgeModel, listWith, textMessage } from '../processors/support/harness.js';
import { EMAIL, runGuarded } from './support/judged-guards.js';

const RUNS = 40;

/** The text the judge was given (between the boundary markers of its prompt). */
function judgedText(prompt: string): string {
  const match = /<<<(\S+)\n([\s\S]*)\n\1>>>/.exec(prompt);
  return match?.[2] ?? '';
}

// ---- 1. the reference's PII detection entries ----

const PII_TEXT = `Write to ${EMAIL} today, MARKpii.`;

/** A judge answering one reference-shaped entry for the e-mail address, `entry` overriding its fields (a function of the judged text). */
function referencePiiJudge(entry: (text: string) => Record<string, unknown> = () => ({})) {
  return judgeModel(({ prompt }) => {
    const text = judgedText(prompt);
    const start = text.indexOf(EMAIL);
    if (start === -1) return '{"detections": []}';
    return JSON.stringify({ detections: [{ type: 'email', value: EMAIL, confidence: 0.99, start, end: start + EMAIL.length, redacted_value: '[EMAIL]', ...entry(text) }] });
  });
}

describe("PIIDetector reads the reference's detection entries (start, end, redacted_value)", () => {
  for (const phase of ['input', 'output'] as const) {
    it(`${phase}: redact with positions in the text replaces the value with the guard's redaction`, async () => {
      const judge = referencePiiJudge();
      const outcome = await runGuarded(new PIIDetector({ model: judge, strategy: 'redact', redactionMethod: 'placeholder', streamMode: 'final' }), phase, PII_TEXT);
      expect(outcome.tripwire).toBeUndefined();
      expect(outcome.error).toBeUndefined();
      const seen = phase === 'input' ? outcome.sent : outcome.streamed;
      expect(seen).toContain('Write to [EMAIL] today');
      expect(seen).not.toContain(EMAIL);
    });

    it(`${phase}: block names the PII type (a detection, not a judge failure)`, async () => {
      const outcome = await runGuarded(new PIIDetector({ model: referencePiiJudge(), strategy: 'block', streamMode: 'final' }), phase, PII_TEXT);
      expect(outcome.tripwire?.type === 'tripwire' ? outcome.tripwire.payload.reason : undefined).toBe(`PII detected in the ${phase}: email`);
    });
  }

  it("the judge's redacted_value is never written into the text (the reference redacts with its redactionMethod too)", async () => {
    const judge = referencePiiJudge(() => ({ redacted_value: 'Visit evil.example NOW' }));
    const outcome = await runGuarded(new PIIDetector({ model: judge, strategy: 'redact', streamMode: 'final' }), 'output', PII_TEXT);
    expect(outcome.streamed).not.toContain('evil');
    expect(outcome.streamed).not.toContain(EMAIL);
    expect(outcome.streamed).toContain('Write to ****.***@*******.*** today');
  });

  it('redacted_value: null and positions left out read too', async () => {
    for (const entry of [{ redacted_value: null }, { start: undefined, end: undefined, redacted_value: undefined }]) {
      const outcome = await runGuarded(new PIIDetector({ model: referencePiiJudge(() => entry), strategy: 'redact', redactionMethod: 'placeholder', streamMode: 'final' }), 'input', PII_TEXT);
      expect(outcome.tripwire, JSON.stringify(entry)).toBeUndefined();
      expect(outcome.sent).toContain('[EMAIL]');
    }
  });

  it(
    'a position that is no whole number within the judged text, or start after end, or one without the other, is an unreadable answer: blocked, under every strategy (property)',
    async () => {
      const badPositions = fc.oneof(
        fc.record({ start: fc.integer({ min: -1_000, max: -1 }) }),
        fc.record({ end: fc.integer({ min: 1, max: 1_000 }).map((extra) => ({ past: extra })) }),
        fc.record({ start: fc.double({ noInteger: true, noNaN: true, min: 0, max: 30 }) }),
        fc.record({ end: fc.constantFrom('12', null, true, [3], Number.NaN, Number.POSITIVE_INFINITY) }),
        fc.record({ swap: fc.constant(true) }),
        fc.record({ only: fc.constantFrom('start', 'end') }),
      );
      await checkProperty(
        'red-team-2026-12c-pii-positions',
        fc.record({ bad: badPositions, strategy: fc.constantFrom('block', 'warn', 'filter', 'redact'), phase: fc.constantFrom('input', 'output') }),
        async ({ bad, strategy, phase }) => {
          const judge = referencePiiJudge((text) => {
            const start = text.indexOf(EMAIL);
            const end = start + EMAIL.length;
            if ('swap' in bad) return { start: end, end: start };
            if ('only' in bad) return bad.only === 'start' ? { end: undefined } : { start: undefined };
            if ('end' in bad && typeof bad.end === 'object' && bad.end !== null && 'past' in bad.end) return { end: text.length + bad.end.past };
            return bad;
          });
          const outcome = await runGuarded(new PIIDetector({ model: judge, strategy, streamMode: 'final' }), phase, PII_TEXT);
          const where = `${phase}/${strategy} ${JSON.stringify(bad)}`;
          if (outcome.error !== undefined) throw new Error(`${where}: the run ended in an error`);
          if (outcome.tripwire === undefined) throw new Error(`${where}: not blocked; streamed ${JSON.stringify(outcome.streamed)}`);
          if (outcome.streamed.includes('MARK')) throw new Error(`${where}: the client saw the content`);
          if (phase === 'input' && outcome.model.calls.length > 0) throw new Error(`${where}: the agent's model was called`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('the response format names the reference keys, additionalProperties still false', async () => {
    const judge = referencePiiJudge();
    await runGuarded(new PIIDetector({ model: judge, streamMode: 'final' }), 'input', PII_TEXT);
    const format = judge.calls[0]?.responseFormat;
    const entry = (format?.type === 'json' ? format.schema : undefined) as { properties: { detections: { items: { properties: Record<string, unknown>; additionalProperties: unknown } } } } | undefined;
    expect(Object.keys(entry?.properties.detections.items.properties ?? {})).toEqual(['type', 'value', 'confidence', 'start', 'end', 'redacted_value']);
    expect(entry?.properties.detections.items.additionalProperties).toBe(false);
  });
});

// ---- 2. ModelSelectionProcessor: the reference's { model, criteria } choices ----

const agentModel = mockModel({ modelId: 'agent-default' });
const small = mockModel({ modelId: 'small-model' });
const large = mockModel({ modelId: 'large-model' });
const referenceChoices = [
  { model: small, criteria: 'greetings and short factual questions' },
  { model: large, criteria: 'maths, code and multi-step reasoning' },
];

async function routedModel(processor: ModelSelectionProcessor, text = 'Please prove that the square root of 2 is irrational'): Promise<string> {
  const ctx = contextWith(listWith([textMessage('u1', 'user', text)]));
  const step = await lastValueFrom(of<StepInput>({ stepNumber: 0, model: agentModel }).pipe(processInputStep([processor], ctx)));
  return step.model.modelId;
}

function expectRefused(make: () => unknown, option: string, not?: string): InvalidProcessorOptionError {
  let thrown: unknown;
  try {
    make();
  } catch (error) {
    thrown = error;
  }
  expect(InvalidProcessorOptionError.isInstance(thrown), `expected an InvalidProcessorOptionError for ${option}, got ${String(thrown)}`).toBe(true);
  expect(thrown).toMatchObject({ processorId: 'model-selection', option });
  if (not !== undefined) expect((thrown as Error).message).not.toContain(not);
  return thrown as InvalidProcessorOptionError;
}

describe("ModelSelectionProcessor takes the reference's { model, criteria, name? } choices", () => {
  it('constructs; each choice is named after its model (modelId, or the id string) unless named; the classifier picks by criteria', async () => {
    const judge = judgeModel(({ prompt }) => (prompt.includes('prove') ? '{"choice": "large-model", "confidence": 0.9}' : '{"choice": "small-model"}'));
    const processor = new ModelSelectionProcessor({ model: judge, choices: referenceChoices });
    expect(await routedModel(processor)).toBe('large-model');
    expect(await routedModel(processor, 'hello there')).toBe('small-model');
    const system = JSON.stringify(judge.calls[0]?.prompt);
    expect(system).toContain('\\"large-model\\": maths, code and multi-step reasoning');
    expect(system).toContain('least capable');
  });

  it("an explicit name, and a 'provider/model' id string as the model", async () => {
    const judge = judgeModel(() => '{"choice": "thinker"}');
    const processor = new ModelSelectionProcessor({ model: judge, choices: [{ model: 'openai/gpt-4.1-mini', criteria: 'simple' }, { model: large, criteria: 'hard', name: 'thinker' }] });
    expect(await routedModel(processor)).toBe('large-model');
    expect(JSON.stringify(judge.calls[0]?.prompt)).toContain('\\"openai/gpt-4.1-mini\\": simple');
  });

  it('minProbability: below it, or without a confidence, the agent keeps its model (the reference abstains)', async () => {
    for (const answer of ['{"choice": "large-model", "confidence": 0.4}', '{"choice": "large-model"}']) {
      const processor = new ModelSelectionProcessor({ model: judgeModel(() => answer), choices: referenceChoices, minProbability: 0.6 });
      expect(await routedModel(processor), answer).toBe('agent-default');
    }
    const confident = new ModelSelectionProcessor({ model: judgeModel(() => '{"choice": "large-model", "confidence": 0.7}'), choices: referenceChoices, minProbability: 0.6 });
    expect(await routedModel(confident)).toBe('large-model');
  });

  it('checked like every option: fewer than two, a repeated name, blank criteria, a shape of both kinds, an unknown key, a bad minProbability', () => {
    const judge = judgeModel(() => '{}');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: [referenceChoices[0]!] as never }), 'choices');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: [{ model: small, criteria: 'a' }, { model: small, criteria: 'b' }] as never }), 'choices[1].name');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: [referenceChoices[0]!, { model: large, criteria: '  ' }] as never }), 'choices[1].criteria');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: [referenceChoices[0]!, { model: large, criteria: 42 }] as never }), 'choices[1].criteria');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: [referenceChoices[0]!, { model: large, criteria: 'x', name: '' }] as never }), 'choices[1].name');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: [referenceChoices[0]!, { id: 'deep', model: large, description: 'x', criteria: 'y' }] as never }), 'choices[1]');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: [referenceChoices[0]!, { id: 'deep', model: large, description: 'x' }] as never }), 'choices[1]');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: [referenceChoices[0]!, { model: large, criteria: 'x', weight: 2 }] as never }), 'choices[1].weight');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: [{ id: 'a', model: small, description: 'x', critera: 'y' }] as never }), 'choices[0].critera');
    for (const minProbability of [Number.NaN, -0.1, 1.5, '0.5']) expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: referenceChoices, minProbability } as never), 'minProbability');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: referenceChoices, minProbability: 0.5, minConfidence: 0.5 }), 'minProbability');
    expectRefused(() => new ModelSelectionProcessor({ model: judge, choices: referenceChoices, defaultChoice: 'fast' }), 'defaultChoice');
    expect(() => new ModelSelectionProcessor({ model: judge, choices: referenceChoices, defaultChoice: 'small-model' })).not.toThrow();
  });
});

// ---- 3. option values are described, never echoed ----

describe('InvalidProcessorOptionError describes a string value, never prints it', () => {
  const key = `sk-proj-${'Q7x'.repeat(11)}`; // 41 characters, key-like
  const judge = judgeModel(() => '{}');

  it('a key given as a strategy, a boolean, a model choice id, a placeholder, a threshold: its type and length only', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => new PIIDetector({ model: judge, strategy: key as never }), 'strategy'],
      [() => new PIIDetector({ model: judge, preserveFormat: key as never }), 'preserveFormat'],
      [() => new PIIDetector({ model: judge, threshold: key as never }), 'threshold'],
      [() => new ModerationProcessor({ model: judge, errorStrategy: key as never }), 'errorStrategy'],
      [() => new ModelSelectionProcessor({ model: judge, choices: referenceChoices, defaultChoice: key }), 'defaultChoice'],
      [() => new RegexFilterProcessor({ presets: key as never }), 'presets'],
    ];
    for (const [make, option] of cases) {
      let thrown: unknown;
      try {
        make();
      } catch (error) {
        thrown = error;
      }
      expect(InvalidProcessorOptionError.isInstance(thrown), option).toBe(true);
      const message = (thrown as Error).message;
      expect(message, option).not.toContain('Q7xQ7x');
      expect(message, option).toContain('(got a string of 41 characters)');
      expect((thrown as InvalidProcessorOptionError).value, option).toBe(key);
    }
  });

  it('a pattern that does not compile: its problem, not the pattern', () => {
    const pattern = `(${key}`;
    let thrown: unknown;
    try {
      new RegexFilterProcessor({ rules: [{ name: 'k', pattern }] });
    } catch (error) {
      thrown = error;
    }
    expect(InvalidProcessorOptionError.isInstance(thrown)).toBe(true);
    expect((thrown as Error).message).not.toContain('Q7xQ7x');
    expect((thrown as Error).message).toContain('a valid regular expression');
  });

  it('numbers, booleans and a near-miss of an enum stay readable', () => {
    const threshold = (() => {
      try {
        new PIIDetector({ model: judge, threshold: 1.5 });
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(threshold).toContain('(got 1.5)');
    const strategy = (() => {
      try {
        new PIIDetector({ model: judge, strategy: 'Block' as never });
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(strategy).toContain("(got a string of 5 characters; did you mean 'block'?)");
  });
});

// ---- 4. hostile thrown values in the judge's retry decision ----

/** A real 503 `APICallError` whose `field` throws when read. */
function apiErrorThrowingOn(field: 'responseHeaders' | 'statusCode' | 'cause'): unknown {
  const error = new APICallError({ message: 'HTTP 503', url: 'https://judge.test', requestBodyValues: {}, statusCode: 503, responseHeaders: { 'retry-after': '0' }, isRetryable: true });
  Object.defineProperty(error, field, {
    get() {
      throw new Error(`hostile ${field}`);
    },
  });
  return error;
}

/** A 503 whose headers object throws when its keys are listed. */
function apiErrorWithHostileHeaders(): unknown {
  return new APICallError({ message: 'HTTP 503', url: 'https://judge.test', requestBodyValues: {}, statusCode: 503, responseHeaders: throwingProxy() as Record<string, string>, isRetryable: true });
}

const hostileThrown: Record<string, () => unknown> = {
  'a revoked Proxy': revokedProxy,
  'a Proxy whose every trap throws': throwingProxy,
  'a Proxy posing as an Error': errorPosingProxy,
  'an APICallError whose responseHeaders getter throws': () => apiErrorThrowingOn('responseHeaders'),
  'an APICallError whose statusCode getter throws': () => apiErrorThrowingOn('statusCode'),
  'an APICallError whose headers are a throwing Proxy': apiErrorWithHostileHeaders,
  'an Error whose cause getter throws': () =>
    Object.defineProperty(new Error('x'), 'cause', {
      get() {
        throw new Error('hostile cause');
      },
    }),
  'an Error caused by a revoked Proxy': () => new Error('wrapped', { cause: revokedProxy() }),
};

describe("the judge's retry decision reads a thrown value that cannot be read without throwing", () => {
  for (const [what, make] of Object.entries(hostileThrown)) {
    it(`${what}: readCallError says unreadable or none, retryAfterMs and classifyFailure answer, callWithRetry settles`, async () => {
      const thrown = make();
      expect(() => readCallError(thrown)).not.toThrow();
      expect(['unreadable', 'none']).toContain(readCallError(thrown).kind);
      expect(retryAfterMs(thrown, Date.now())).toBeUndefined();
      const failure = classifyFailure(new StructuredCallError('model', 'model call failed', { cause: thrown }));
      if (readCallError(thrown).kind === 'unreadable') expect(failure).toMatchObject({ kind: 'content', summary: "the judge's error could not be read" });
      // the attempt's own answer says "retry": the decision reads its Retry-After, and must not throw
      const outcome = await callWithRetry(async () => ({ ok: false as const, error: thrown, retryable: true }), {
        deadlineMs: 1_000,
        clock: { now: () => 0, sleep: async () => undefined, random: () => 0 },
      });
      expect(outcome.ok).toBe(false);
    });
  }

  it("an APICallError-marked error whose headers are readable is still read (503 with Retry-After: 2 → 2000 ms)", () => {
    const error = new APICallError({ message: 'HTTP 503', url: 'https://judge.test', requestBodyValues: {}, statusCode: 503, responseHeaders: { 'Retry-After': '2' }, isRetryable: true });
    expect(readCallError(new Error('wrapped', { cause: error }))).toEqual({ kind: 'api', statusCode: 503, headers: [['Retry-After', '2']] });
    expect(retryAfterMs(error, 0)).toBe(2_000);
  });

  it('through an agent run (the model seam wraps what a provider throws): blocked, never an error of the run', async () => {
    for (const [what, make] of Object.entries(hostileThrown)) {
      const judge = mockModel({ modelId: 'hostile-judge', error: () => make() });
      const outcome = await runGuarded(new ModerationProcessor({ model: judge, judgeDeadlineMs: 1_000 }), 'input', 'hello there MARKhostile');
      expect(outcome.error, what).toBeUndefined();
      expect(outcome.tripwire, what).toBeDefined();
      expect(outcome.model.calls, what).toHaveLength(0);
    }
  }, 60_000);
});

// ---- 5. ProcessorError.fromThrown is total ----

// makers, called inside the predicate: fast-check itself asks `in` of the values it generates
const hostileValues: fc.Arbitrary<() => unknown> = fc.oneof(
  fc.constantFrom(...Object.values(hostileThrown)),
  fc.constantFrom(
    () => Object.create(null) as object,
    () => ({
      [Symbol.toPrimitive]() {
        throw new Error('hostile toPrimitive');
      },
    }),
    () =>
      Object.defineProperty(new Error('x'), 'message', {
        get() {
          throw new Error('hostile message');
        },
      }),
    () =>
      Object.defineProperty(new Error('x'), 'name', {
        get() {
          throw new Error('hostile name');
        },
      }),
    () => Object.assign(new Error('x'), { message: { toString: () => { throw new Error('hostile toString'); } } }),
    () => Symbol('thrown'),
  ),
  fc.anything({ withNullPrototype: true, withBigInt: true, withMap: true, withSet: true, withTypedArray: true, withBoxedValues: true }).map((value) => () => value),
);

describe('ProcessorError.fromThrown', () => {
  it('always returns a ProcessorError with a readable message, whatever was thrown (property)', async () => {
    await checkProperty(
      'red-team-2026-12c-from-thrown',
      hostileValues,
      async (make) => {
        const thrown = make();
        const error = ProcessorError.fromThrown('p', 'processInput', thrown);
        expect(ProcessorError.isInstance(error)).toBe(true);
        expect(typeof error.message).toBe('string');
        expect(error.message.startsWith('Processor "p" failed in processInput: ')).toBe(true);
        expect(error.cause === thrown).toBe(true);
      },
      200,
    );
  });

  it('says what it could not read', () => {
    expect(ProcessorError.fromThrown('p', 'processInput', revokedProxy()).message).toBe('Processor "p" failed in processInput: a value that cannot be read');
    expect(ProcessorError.fromThrown('p', 'processInput', new Error('boom')).message).toBe('Processor "p" failed in processInput: boom');
  });
});

// ---- 6. own red team: hostile options ----

describe('options that cannot be read, or are getters, are an InvalidProcessorOptionError naming them', () => {
  const judge = judgeModel(() => '{"detections": []}');
  const getter = (value: unknown, onRead?: () => void) =>
    ({
      model: judge,
      get strategy() {
        onRead?.();
        return value;
      },
    }) as never;

  it('a Proxy, a revoked Proxy, or an option value that is one (it was a plain Error or TypeError from deep inside the constructor)', () => {
    const cases: Array<[string, () => unknown, string]> = [
      ['options: a Proxy whose traps throw', () => new PIIDetector(throwingProxy() as never), 'options'],
      ['options: a revoked Proxy', () => new PIIDetector(revokedProxy() as never), 'options'],
      ['detectionTypes: a revoked Proxy', () => new PIIDetector({ model: judge, detectionTypes: revokedProxy() as never }), 'detectionTypes'],
      ['providerOptions: a revoked Proxy', () => new ModerationProcessor({ model: judge, providerOptions: revokedProxy() as never }), 'providerOptions'],
      ['model: a revoked Proxy', () => new ModerationProcessor({ model: revokedProxy() as never }), 'model'],
      ['a choice: a Proxy whose traps throw', () => new ModelSelectionProcessor({ model: judge, choices: [throwingProxy(), throwingProxy()] as never }), 'choices[0]'],
    ];
    for (const [what, make, option] of cases) {
      let thrown: unknown;
      try {
        make();
      } catch (error) {
        thrown = error;
      }
      expect(InvalidProcessorOptionError.isInstance(thrown), `${what}: ${String(thrown)}`).toBe(true);
      expect((thrown as InvalidProcessorOptionError).option, what).toBe(option);
    }
  });

  it('a getter is refused without being read: one that throws, or answers block to the check and warn later', () => {
    let reads = 0;
    for (const options of [
      getter(undefined, () => {
        throw new Error('hostile getter');
      }),
      getter('block', () => reads++),
    ]) {
      let thrown: unknown;
      try {
        new PIIDetector(options);
      } catch (error) {
        thrown = error;
      }
      expect(InvalidProcessorOptionError.isInstance(thrown), String(thrown)).toBe(true);
      expect(thrown).toMatchObject({ processorId: 'pii-detector', option: 'strategy' });
      expect((thrown as Error).message).toContain('is a getter');
    }
    expect(reads).toBe(0);
  });

  it("a hashKey buffer wiped by its caller after construction (key.fill(0)) does not change the guard's key", () => {
    const key = new Uint8Array(32).fill(7);
    const pii = new PIIDetector({ model: judge, redactionMethod: 'hash', hashKey: key });
    const before = pii.redactValue('4711', 'pin');
    key.fill(0);
    expect(pii.redactValue('4711', 'pin')).toBe(before);
    const zeroKeyed = new PIIDetector({ model: judge, redactionMethod: 'hash', hashKey: new Uint8Array(32) });
    expect(zeroKeyed.redactValue('4711', 'pin')).not.toBe(before);
  });
});
