/**
 * Red team, December 2026: the model-backed guards (judges row and model-output rows of
 * docs/security.md), looking for the decisions that still had a lenient branch.
 *
 * - **Options a guard cannot place.** A misspelt `strategy` (`'blok'`, `'Block'`), `redactionMethod`,
 *   `streamMode` or `channels` entry, and a `threshold` that is no probability (`NaN`, negative,
 *   above 1 — which made a guard flag nothing), and a boolean option given as a string (`'false'`
 *   is truthy: `revealJudgeReason: 'false'` sent the judge's words to the client,
 *   `lastMessageOnly: 'false'` left earlier messages unjudged), were taken as some other behaviour. Each is an
 *   `InvalidProcessorOptionError` naming the option, at construction.
 * - **Answers with keys the guard did not ask for.** The response format the judge gets allows no
 *   other keys (`additionalProperties: false`), but the reader dropped them: `{"category_scores": [],
 *   "flagged": true}`, `{"detections": [], "contains_pii": true}`, or both of a guard's shapes in one
 *   answer (`{"category_scores": [], "categories": {"violence": 0.97}}`, `{"iso_code": "en",
 *   "language": "de"}`) passed as "nothing found". Now a violation (blocked). A PII answer
 *   `{"detections": [], "categories": [{"type": "email", "score": 0.97}]}` passed the same way; since
 *   PIIDetector reads the reference's answer (`categories`, `redacted_content`: commit 2a01609, and
 *   test/security/pii-reference-answers.property.test.ts), `categories` is a key it reads, and a
 *   category scored at or above `threshold` that no detection places is the violation here.
 * - **A language answer naming two languages** (`English and Russian`, `English, German`,
 *   `English (with Russian)`) was read as its first word: a target language. Now unknown: a
 *   violation. Tags and regions (`en-US`, `EN_gb`, `English (US)`, `French (Canada)`) still read.
 * - **An empty `iso_code`** (not `null`) passed as "no language detected"; it names nothing: a violation.
 * - **Callbacks that reject.** `onError`, `onFailOpen` and tracing `onJudge` returning a rejected
 *   promise left an unhandled rejection (which ends a Node process by default); now dropped, as
 *   `onViolation`'s always was.
 * - **`judgeDeadlineMs` above 2^31 − 1 ms**: `setTimeout` fired at once, so every judge call timed
 *   out — content through under `'fail-open'`, every run blocked under `'strict'`. Refused now.
 * - **A structured object built before the guard judged the text.** With a `StructuredOutputProcessor`
 *   before a model-backed guard, the `object` chunk and `result.object` carried the value the guard
 *   redacted in the text (or a filtered passage): `object` chunks passed unjudged. Now judged whole
 *   with the text channel; `result.object` gets the redactions, a withheld object leaves the result.
 * - **One instance, many runs.** The same guard in two agents' runs at once, as both input and
 *   output processor, and two instances of one guard class in one agent: each decides on its own
 *   (shown, not a fault found).
 *
 * Case counts: `RXAGENT_PROPERTY_RUNS / 20` (at least 30) for agent runs, `/ 5` for constructions.
 */
import fc from 'fast-check';
import { z } from 'zod';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { InvalidProcessorOptionError } from '../../src/contract/index.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { Agent } from '../../src/loop/agent.js';
import { LanguageDetector } from '../../src/processors/language-detector.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { PromptInjectionDetector } from '../../src/processors/prompt-injection-detector.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { StructuredOutputProcessor } from '../../src/processors/structured-output.js';
import { TokenLimiterProcessor } from '../../src/processors/token-limiter.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { judgedContents, judgeModel } from '../processors/support/harness.js';
import { LEAK_CHANNELS, leaks, observeRun, type LeakChannel } from './support/leak-harness.js';
import { answering, content, EMAIL, guard, guardNames, phases, runGuarded, SECRET, SYSTEM, type GuardName, type Phase } from './support/judged-guards.js';

const RUNS = Math.max(30, Math.floor(PROPERTY_RUNS / 20));
const CONSTRUCTIONS = Math.max(50, Math.floor(PROPERTY_RUNS / 5));

/** A clear "nothing found" per guard, in the shape it asks for. */
const safeAnswer: Record<GuardName, Record<string, unknown>> = {
  moderation: { category_scores: [], reason: null },
  injection: { categories: [], reason: null },
  pii: { detections: [] },
  scrubber: { detections: null, reason: null },
  language: { iso_code: 'en', confidence: 0.99 },
};

/** The top-level keys each guard reads (its shapes, the reference's optional keys included). */
const readKeys: Record<GuardName, readonly string[]> = {
  moderation: ['category_scores', 'categories', 'reason'],
  injection: ['categories', 'reason', 'rewritten_content', 'rewritten'],
  pii: ['detections', 'categories', 'redacted_content'],
  scrubber: ['detections', 'reason', 'redacted_content'],
  language: ['iso_code', 'confidence', 'translated_text', 'language', 'translation'],
};

/** Problems when `name` on `phase` with a judge answering `answer` let the content through. */
async function blockedProblems(name: GuardName, phase: Phase, answer: string): Promise<string[]> {
  const outcome = await runGuarded(guard(name, answering(answer)), phase, content[name]);
  const where = `${name}/${phase} judge ${JSON.stringify(answer)}`;
  const problems: string[] = [];
  if (outcome.error !== undefined) problems.push(`${where}: the run ended in an error`);
  if (outcome.tripwire === undefined) problems.push(`${where}: not blocked`);
  if (outcome.streamed.includes('MARK')) problems.push(`${where}: the client saw the content`);
  if (phase === 'input' && outcome.model.calls.length > 0) problems.push(`${where}: the agent's model was called`);
  return problems;
}

async function expectBlocked(name: GuardName, answer: string): Promise<void> {
  for (const phase of phases[name]) expect(await blockedProblems(name, phase, answer)).toEqual([]);
}

function expectRefused(build: () => unknown, option: string): void {
  let thrown: unknown;
  try {
    build();
  } catch (error) {
    thrown = error;
  }
  expect(InvalidProcessorOptionError.isInstance(thrown), `expected an InvalidProcessorOptionError for ${option}, got ${String(thrown)}`).toBe(true);
  expect((thrown as InvalidProcessorOptionError).option).toBe(option);
}

const judge = answering('{}');

describe('options a guard cannot place are refused at construction', () => {
  /** Each guard's enumerated options and the values they accept. */
  const enumerated: Array<{ name: string; option: string; accepted: readonly string[]; build: (value: unknown) => unknown }> = [
    { name: 'moderation', option: 'strategy', accepted: ['block', 'warn', 'filter'], build: (value) => new ModerationProcessor({ model: judge, strategy: value as never }) },
    { name: 'injection', option: 'strategy', accepted: ['block', 'warn', 'filter', 'rewrite'], build: (value) => new PromptInjectionDetector({ model: judge, strategy: value as never }) },
    { name: 'pii', option: 'strategy', accepted: ['block', 'warn', 'filter', 'redact'], build: (value) => new PIIDetector({ model: judge, strategy: value as never }) },
    { name: 'pii', option: 'redactionMethod', accepted: ['mask', 'hash', 'remove', 'placeholder'], build: (value) => new PIIDetector({ model: judge, redactionMethod: value as never }) },
    { name: 'scrubber', option: 'strategy', accepted: ['block', 'warn', 'filter', 'redact'], build: (value) => new SystemPromptScrubber({ model: judge, strategy: value as never }) },
    { name: 'scrubber', option: 'redactionMethod', accepted: ['mask', 'placeholder', 'remove'], build: (value) => new SystemPromptScrubber({ model: judge, redactionMethod: value as never }) },
    { name: 'language', option: 'strategy', accepted: ['detect', 'translate', 'block', 'warn'], build: (value) => new LanguageDetector({ model: judge, targetLanguages: ['en'], strategy: value as never }) },
    { name: 'moderation', option: 'streamMode', accepted: ['window', 'final'], build: (value) => new ModerationProcessor({ model: judge, streamMode: value as never }) },
    { name: 'pii', option: 'streamMode', accepted: ['window', 'final'], build: (value) => new PIIDetector({ model: judge, streamMode: value as never }) },
    { name: 'scrubber', option: 'streamMode', accepted: ['window', 'final'], build: (value) => new SystemPromptScrubber({ model: judge, streamMode: value as never }) },
    { name: 'moderation', option: 'channels', accepted: ['text', 'reasoning', 'tool-input', 'data', 'tool-error'], build: (value) => new ModerationProcessor({ model: judge, channels: [value as never] }) },
    { name: 'pii', option: 'channels', accepted: ['text', 'reasoning', 'tool-input', 'data', 'tool-error'], build: (value) => new PIIDetector({ model: judge, channels: ['text', value as never] }) },
    { name: 'scrubber', option: 'channels', accepted: ['text', 'reasoning', 'tool-input', 'data', 'tool-error'], build: (value) => new SystemPromptScrubber({ model: judge, channels: [value as never] }) },
    { name: 'structured-output', option: 'errorStrategy', accepted: ['strict', 'warn'], build: (value) => new StructuredOutputProcessor({ model: judge, schema: z.object({ a: z.string() }), errorStrategy: value as never }) },
    { name: 'token-limiter', option: 'strategy', accepted: ['truncate', 'abort'], build: (value) => new TokenLimiterProcessor({ limit: 100, tokenCounter: (text) => text.length, strategy: value as never }) },
    { name: 'token-limiter', option: 'countMode', accepted: ['cumulative', 'part'], build: (value) => new TokenLimiterProcessor({ limit: 100, tokenCounter: (text) => text.length, countMode: value as never }) },
  ];

  /** Misspellings of an accepted value (case, a space, a letter dropped or doubled) and arbitrary values. */
  const misspelt = (accepted: readonly string[]): fc.Arbitrary<unknown> =>
    fc
      .oneof(
        fc.constantFrom(...accepted).chain((word) =>
          fc.oneof(
            fc.constant(word.toUpperCase()),
            fc.constant(`${word.charAt(0).toUpperCase()}${word.slice(1)}`),
            fc.constant(` ${word}`),
            fc.constant(`${word} `),
            fc.nat(word.length - 1).map((at) => word.slice(0, at) + word.slice(at + 1)),
            fc.nat(word.length - 1).map((at) => word.slice(0, at) + word.charAt(at) + word.slice(at)),
          ),
        ),
        fc.string(),
        fc.constantFrom<unknown>(null, 0, 1, true, false, {}, [], NaN),
      )
      .filter((value) => !accepted.includes(value as string) && value !== undefined);

  it('every accepted value constructs', () => {
    for (const entry of enumerated) for (const value of entry.accepted) expect(() => entry.build(value), `${entry.name} ${entry.option} ${value}`).not.toThrow();
  });

  it(
    'a misspelt strategy, redactionMethod, streamMode, channel or countMode is an InvalidProcessorOptionError naming it (property)',
    async () => {
      await checkProperty(
        'red-team-2026-12-misspelt-options',
        fc.constantFrom(...enumerated).chain((entry) => fc.record({ entry: fc.constant(entry), value: misspelt(entry.accepted) })),
        async ({ entry, value }) => {
          expectRefused(() => entry.build(value), entry.option);
        },
        CONSTRUCTIONS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  const thresholded: Array<{ name: string; build: (threshold: unknown) => unknown }> = [
    { name: 'moderation', build: (threshold) => new ModerationProcessor({ model: judge, threshold: threshold as number }) },
    { name: 'injection', build: (threshold) => new PromptInjectionDetector({ model: judge, threshold: threshold as number }) },
    { name: 'pii', build: (threshold) => new PIIDetector({ model: judge, threshold: threshold as number }) },
    { name: 'scrubber', build: (threshold) => new SystemPromptScrubber({ model: judge, threshold: threshold as number }) },
    { name: 'language', build: (threshold) => new LanguageDetector({ model: judge, targetLanguages: ['en'], threshold: threshold as number }) },
  ];

  it('thresholds 0, 1 and between construct', () => {
    for (const entry of thresholded) for (const threshold of [0, 0.5, 1, Number.MIN_VALUE]) expect(() => entry.build(threshold), `${entry.name} ${threshold}`).not.toThrow();
  });

  it(
    'a threshold that is no probability (NaN, ±Infinity, negative, above 1, a string, a boolean) is an InvalidProcessorOptionError (property)',
    async () => {
      const invalid = fc.oneof(
        fc.constantFrom<unknown>(NaN, Infinity, -Infinity, -0.0001, 1.0001, '0.5', true, null, [0.5], {}),
        fc.double({ noNaN: true }).filter((value) => value < 0 || value > 1),
        fc.double({ min: 0, max: 1, noNaN: true }).map(String),
      );
      await checkProperty(
        'red-team-2026-12-thresholds',
        fc.record({ entry: fc.constantFrom(...thresholded), threshold: invalid }),
        async ({ entry, threshold }) => {
          expectRefused(() => entry.build(threshold), 'threshold');
        },
        CONSTRUCTIONS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "a boolean option given as anything but a boolean ('false', 'no', 0, 1) is an InvalidProcessorOptionError — 'false' was truthy: revealJudgeReason sent the judge's words to the client, lastMessageOnly left earlier messages unjudged (property)",
    async () => {
      const booleans: Array<{ name: string; option: string; build: (value: unknown) => unknown }> = [
        ...(['includeScores', 'revealJudgeReason', 'lastMessageOnly'] as const).map((option) => ({ name: 'moderation', option, build: (value: unknown) => new ModerationProcessor({ model: judge, [option]: value }) })),
        ...(['includeScores', 'revealJudgeReason', 'lastMessageOnly'] as const).map((option) => ({ name: 'injection', option, build: (value: unknown) => new PromptInjectionDetector({ model: judge, [option]: value }) })),
        ...(['preserveFormat', 'includeDetections', 'lastMessageOnly'] as const).map((option) => ({ name: 'pii', option, build: (value: unknown) => new PIIDetector({ model: judge, [option]: value }) })),
        ...(['preserveOriginal', 'includeDetectionDetails', 'lastMessageOnly'] as const).map((option) => ({ name: 'language', option, build: (value: unknown) => new LanguageDetector({ model: judge, targetLanguages: ['en'], [option]: value }) })),
        { name: 'scrubber', option: 'includeDetections', build: (value: unknown) => new SystemPromptScrubber({ model: judge, includeDetections: value as boolean }) },
      ];
      for (const entry of booleans) for (const value of [true, false, undefined]) expect(() => entry.build(value), `${entry.name} ${entry.option} ${String(value)}`).not.toThrow();
      await checkProperty(
        'red-team-2026-12-boolean-options',
        fc.record({ entry: fc.constantFrom(...booleans), value: fc.oneof(fc.constantFrom<unknown>('false', 'true', 'no', 'yes', '', 0, 1, null, NaN, {}, []), fc.string()) }),
        async ({ entry, value }) => {
          expectRefused(() => entry.build(value), entry.option);
        },
        CONSTRUCTIONS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('targetLanguages that is not a list of names, or names nothing, is an InvalidProcessorOptionError', () => {
    for (const targetLanguages of [undefined, 'en', [], [''], ['  '], [42], ['en', null]]) {
      expectRefused(() => new LanguageDetector({ model: judge, targetLanguages: targetLanguages as string[] }), 'targetLanguages');
    }
  });
});

describe('an answer with keys the guard did not ask for, of two shapes at once, or naming what it does not place, is a violation', () => {
  const twoShapes: Record<string, { name: GuardName; answer: Record<string, unknown> }> = {
    'moderation: category_scores empty, categories flagging': { name: 'moderation', answer: { category_scores: [], categories: { violence: 0.97 } } },
    'moderation: categories flagging first, then empty category_scores': { name: 'moderation', answer: { categories: { violence: 0.97 }, category_scores: [] } },
    'moderation: an OpenAI-style flagged: true beside empty scores': { name: 'moderation', answer: { category_scores: [], flagged: true } },
    "moderation: flagged: 'yes'": { name: 'moderation', answer: { category_scores: null, flagged: 'yes' } },
    'injection: is_injection: true beside no categories': { name: 'injection', answer: { categories: [], is_injection: true } },
    'injection: a verdict key beside empty categories': { name: 'injection', answer: { categories: [], verdict: 'injection' } },
    "pii: the reference's categories scoring an email that no detection places": { name: 'pii', answer: { detections: [], categories: [{ type: 'email', score: 0.97 }] } },
    'pii: contains_pii: true beside no detections': { name: 'pii', answer: { detections: [], contains_pii: true } },
    'scrubber: leaked: true beside no detections': { name: 'scrubber', answer: { detections: null, leaked: true } },
    'language: iso_code en and language de': { name: 'language', answer: { iso_code: 'en', confidence: 0.99, language: 'de' } },
    'language: language de first, then iso_code en': { name: 'language', answer: { language: 'de', iso_code: 'en', confidence: 0.99 } },
    'language: is_target_language false': { name: 'language', answer: { iso_code: 'en', confidence: 0.99, is_target_language: false } },
    'language: an empty iso_code (not null: it names nothing)': { name: 'language', answer: { iso_code: '', confidence: 0.99 } },
    'language: a blank iso_code': { name: 'language', answer: { iso_code: '  ', confidence: 0.99 } },
  };
  for (const [what, { name, answer }] of Object.entries(twoShapes)) {
    it(`${what}: blocks`, async () => {
      await expectBlocked(name, JSON.stringify(answer));
    });
  }

  it(
    "a clear answer plus any key the guard does not read blocks, whatever the key's value (property)",
    async () => {
      const extra = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('flagged', 'is_flagged', 'unsafe', 'verdict', 'safe', 'contains', 'result', 'Reason', 'Detections', 'score'));
      await checkProperty(
        'red-team-2026-12-extra-keys',
        fc
          .constantFrom(...guardNames)
          .chain((name) =>
            fc.record({
              name: fc.constant(name),
              phase: fc.constantFrom(...phases[name]),
              key: extra.filter((key) => !readKeys[name].includes(key) && key !== '__proto__'),
              value: fc.oneof(fc.boolean(), fc.constantFrom('yes', 'no', 'true', 'unsafe'), fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(null), fc.jsonValue({ maxDepth: 2 })),
              first: fc.boolean(),
            }),
          ),
        async ({ name, phase, key, value, first }) => {
          const safe = safeAnswer[name];
          const answer = first ? { [key]: value, ...safe } : { ...safe, [key]: value };
          const problems = await blockedProblems(name, phase, JSON.stringify(answer));
          if (problems.length > 0) throw new Error(problems.join('\n'));
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('the reference answers with their optional keys still pass clean content', async () => {
    const clean: Record<GuardName, Record<string, unknown>> = {
      moderation: { category_scores: null, reason: 'nothing harmful' },
      injection: { categories: [], reason: null, rewritten_content: null },
      pii: { detections: [] },
      scrubber: { detections: null, reason: null, redacted_content: null },
      language: { iso_code: 'en', confidence: 0.99, translated_text: null },
    };
    for (const name of guardNames) {
      for (const phase of phases[name]) {
        const text = 'A plain, friendly sentence about the weather in spring.';
        const outcome = await runGuarded(guard(name, answering(JSON.stringify(clean[name]))), phase, text);
        expect(outcome.tripwire, `${name}/${phase}`).toBeUndefined();
        expect(outcome.error, `${name}/${phase}`).toBeUndefined();
      }
    }
  });
});

describe('a language answer naming more than one language is not a target language', () => {
  const names = ['English', 'German', 'Russian', 'French', 'Spanish', 'Chinese'] as const;
  const joiners = [' and ', ', ', ' & ', ' + ', ' or ', ' with ', ' (with ', ' (mostly ', ' mixed with ', '; '];

  it(
    '"<target> and <other>", "<target>, <other>", "<target> (with <other>)"… blocks under strategy block (property)',
    async () => {
      await checkProperty(
        'red-team-2026-12-mixed-languages',
        fc.record({ other: fc.constantFrom(...names.slice(1)), joiner: fc.constantFrom(...joiners), code: fc.boolean(), lower: fc.boolean() }),
        async ({ other, joiner, code, lower }) => {
          const first = code ? 'en' : 'English';
          let written = `${first}${joiner}${other}${joiner.includes('(') ? ')' : ''}`;
          if (lower) written = written.toLowerCase();
          const problems = await blockedProblems('language', 'input', JSON.stringify({ iso_code: written, confidence: 0.99 }));
          if (problems.length > 0) throw new Error(problems.join('\n'));
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('tags, regions and case still read as the target (en-US, EN_gb, English (US), French (Canada), pt-BR)', async () => {
    const detector = new LanguageDetector({ model: judge, targetLanguages: ['en', 'fr', 'pt-BR'] });
    for (const language of ['en-US', 'EN', 'EN_gb', 'English', 'english (US)', 'English (United States)', 'fr', 'French (Canada)', 'pt', 'Portuguese (Brazil)', 'pt_Latn', 'French (FR)', 'English (IT)']) {
      expect(detector.isTargetLanguage(language), language).toBe(true);
    }
    for (const language of ['English and German', 'English, German', 'English (with German)', 'en, de', 'English/German', 'de-DE', 'German (Austria)']) {
      expect(detector.isTargetLanguage(language), language).toBe(false);
    }
  });
});

describe('one guard instance in many runs at once, and as input and output processor', () => {
  it(
    'concurrent runs of one PIIDetector (redact) each redact their own values only; the stored replies and streams do not mix (property)',
    async () => {
      const pii = new PIIDetector({
        model: mockModel({
          modelId: 'judge',
          parts: ({ options }) => {
            const user = options.prompt.find((message) => message.role === 'user');
            const text = user?.role === 'user' ? user.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
            const found = [...text.matchAll(/user\d+@example\.com/g)].map((match) => ({ type: 'email', value: match[0], confidence: 0.99 }));
            return [...textParts(JSON.stringify({ detections: found }), { chunkSize: 9 }), finishPart('stop')];
          },
        }),
        strategy: 'redact',
        redactionMethod: 'placeholder',
        streamMode: 'final',
      });
      await checkProperty(
        'red-team-2026-12-shared-instance',
        fc.array(fc.integer({ min: 0, max: 9999 }), { minLength: 2, maxLength: 5 }),
        async (users) => {
          const runs = users.map(async (user, index) => {
            const email = `user${user}@example.com`;
            const answer = `Run ${index}: contact ${email} please.`;
            const model = mockModel({ parts: [...textParts(answer, { chunkSize: 3 }), finishPart()] });
            const agent = new Agent({ id: `a${index}`, model, inputProcessors: [pii], outputProcessors: [pii] });
            const chunks = await lastValueFrom(agent.stream$(`I am ${email}, run ${index}.`).pipe(toArray()));
            const streamed = chunks.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('');
            const prompt = JSON.stringify(model.calls[0]?.prompt ?? []);
            return { index, email, streamed, prompt, tripwire: chunks.some((part) => part.type === 'tripwire') };
          });
          for (const outcome of await Promise.all(runs)) {
            if (outcome.tripwire) throw new Error(`run ${outcome.index}: blocked`);
            if (outcome.streamed !== `Run ${outcome.index}: contact [EMAIL] please.`) throw new Error(`run ${outcome.index}: streamed ${JSON.stringify(outcome.streamed)}`);
            if (outcome.prompt.includes(outcome.email)) throw new Error(`run ${outcome.index}: the model saw the e-mail`);
            if (!outcome.prompt.includes(`run ${outcome.index}.`)) throw new Error(`run ${outcome.index}: the model did not get its own input`);
          }
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe("a guard's callbacks that throw or reject never reach the run or the process", () => {
  /** Rejections nobody handled while `body` ran (and a few turns after it). */
  async function unhandledDuring(body: () => Promise<void>): Promise<unknown[]> {
    const seen: unknown[] = [];
    const listener = (reason: unknown): void => {
      seen.push(reason);
    };
    process.on('unhandledRejection', listener);
    try {
      await body();
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', listener);
    }
    return seen;
  }

  const rejecting = (what: string) => async (): Promise<void> => {
    throw new Error(`CALLBACK-REJECTED ${what}`);
  };
  const callbacks = fc.record({
    onError: fc.constantFrom('none', 'throws', 'rejects'),
    onFailOpen: fc.constantFrom('none', 'throws', 'rejects'),
    onViolation: fc.constantFrom('none', 'throws', 'rejects'),
    onJudge: fc.constantFrom('none', 'throws', 'rejects'),
  });
  const made = (kind: string, what: string) =>
    kind === 'none'
      ? undefined
      : kind === 'throws'
        ? () => {
            throw new Error(`CALLBACK-THREW ${what}`);
          }
        : rejecting(what);

  it(
    'onError, onFailOpen, onViolation and tracing onJudge that throw or return a rejected promise: the verdict stands and no rejection is left unhandled (property)',
    async () => {
      await checkProperty(
        'red-team-2026-12-rejecting-callbacks',
        fc.constantFrom(...guardNames).chain((name) =>
          fc.record({
            name: fc.constant(name),
            phase: fc.constantFrom(...phases[name]),
            judgeFails: fc.constantFrom('unreadable', 'unavailable', 'flags'),
            strategy: fc.constantFrom('strict', 'fail-open'),
            callbacks,
          }),
        ),
        async ({ name, phase, judgeFails, strategy, callbacks: chosen }) => {
          const flagging: Record<GuardName, Record<string, unknown>> = {
            moderation: { category_scores: [{ category: 'violence', score: 0.97 }] },
            injection: { categories: [{ type: 'injection', score: 0.97 }] },
            pii: { detections: [{ type: 'email', value: EMAIL, confidence: 0.97 }] },
            scrubber: { detections: [{ type: 'secret', value: SECRET, confidence: 0.97 }] },
            language: { iso_code: 'de', confidence: 0.99 },
          };
          const judgeModel =
            judgeFails === 'unreadable' ? answering('Sorry, no JSON today.') : judgeFails === 'unavailable' ? mockModel({ modelId: 'judge', error: new Error('judge unavailable') }) : answering(JSON.stringify(flagging[name]));
          const options: Record<string, unknown> = { judgeDeadlineMs: 20, errorStrategy: strategy, contentErrorStrategy: strategy };
          for (const [callback, kind] of Object.entries(chosen)) if (callback !== 'onJudge' && kind !== 'none') options[callback] = made(kind, callback);
          const processor = guard(name, judgeModel, options);
          const onJudge = made(chosen.onJudge, 'onJudge');
          let outcome: Awaited<ReturnType<typeof runGuarded>> | undefined;
          const unhandled = await unhandledDuring(async () => {
            outcome = await runGuarded(processor, phase, content[name], onJudge === undefined ? {} : { tracingContext: { onJudge } });
          });
          const where = `${name}/${phase} ${judgeFails} ${strategy} ${JSON.stringify(chosen)}`;
          if (unhandled.length > 0) throw new Error(`${where}: unhandled rejection ${String(unhandled[0])}`);
          if (outcome?.error !== undefined) throw new Error(`${where}: the run ended in an error`);
          const mustBlock = judgeFails === 'flags' || strategy === 'strict';
          if (mustBlock && outcome?.tripwire === undefined) throw new Error(`${where}: not blocked`);
          if (!mustBlock && outcome?.tripwire !== undefined) throw new Error(`${where}: blocked under fail-open`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('every channel: a verdict the guard would drop is a violation wherever the content is', () => {
  it(
    'a judge that answers "nothing found" plus a key the guard does not read (for PII, `categories`: a category no detection places) whenever the secret is judged: no consumer, store or later model call sees it (property)',
    async () => {
      const word = (min: number, max: number) => fc.stringMatching(new RegExp(`^[a-z0-9]{${min},${max}}$`));
      await checkProperty(
        'red-team-2026-12-extra-keys-channels',
        fc.constantFrom('pii', 'moderation', 'scrubber').chain((guardName) =>
          fc.record({
            guardName: fc.constant(guardName),
            secret: word(20, 28).map((rest) => `sk-${rest}`),
            chunkSize: fc.integer({ min: 1, max: 9 }),
            // moderation and the scrubber judge what streams, not tool results (docs/security.md)
            channel: fc.constantFrom<LeakChannel>(...LEAK_CHANNELS.filter((channel) => guardName === 'pii' || !channel.startsWith('tool-result'))),
            strategy: fc.constantFrom('redact', 'block'),
            key: fc.constantFrom('flagged', 'contains_pii', 'leaked', 'unsafe', 'categories'),
          }),
        ),
        async ({ secret, chunkSize, channel, guardName, strategy, key }) => {
          const judged = (prompt: string) => judgedContents(prompt).some((text) => text.includes(secret));
          const clean = guardName === 'pii' ? { detections: [] } : guardName === 'moderation' ? { category_scores: [] } : { detections: null };
          const verdictKey = guardName === 'moderation' && key === 'categories' ? 'flagged' : key;
          const model = judgeModel(({ prompt }) => JSON.stringify(judged(prompt) ? { ...clean, [verdictKey]: verdictKey === 'categories' ? [{ type: 'api-key', score: 0.99 }] : true } : clean));
          const everyChannel = ['text', 'reasoning', 'tool-input', 'data', 'tool-error'] as const;
          const guard = (): Processor =>
            guardName === 'pii'
              ? new PIIDetector({ model, strategy: strategy as 'redact' | 'block', redactionMethod: 'placeholder' })
              : guardName === 'moderation'
                ? new ModerationProcessor({ model, channels: [...everyChannel] })
                : new SystemPromptScrubber({ model, strategy: strategy as 'redact' | 'block', channels: [...everyChannel] });
          const observations = await observeRun({ channel, secret, chunkSize }, () => [guard()]);
          const seen = leaks(observations, secret);
          if (seen.length > 0) throw new Error(`${guardName}/${channel}/${strategy} (${verdictKey}): ${JSON.stringify(secret)} seen by ${seen.join(', ')}`);
        },
        Math.max(20, Math.floor(PROPERTY_RUNS / 20)),
      );
    },
    PROPERTY_TIMEOUT_MS * 2,
  );
});

describe('judgeDeadlineMs no timer can wait for', () => {
  /** A judge that answers `text` after `ms` of real time. */
  function slowJudge(text: string, ms: number): LanguageModelV4 {
    return {
      specificationVersion: 'v4',
      provider: 'slow',
      modelId: 'slow-judge',
      supportedUrls: {},
      async doGenerate(): Promise<never> {
        throw new Error('doGenerate is not used by judges');
      },
      async doStream() {
        await new Promise((resolve) => setTimeout(resolve, ms));
        const parts = [...textParts(text, { chunkSize: 7 }), finishPart('stop')];
        return { stream: new ReadableStream({ start: (controller) => { for (const part of parts) controller.enqueue(part); controller.close(); } }) } as never;
      },
    } as LanguageModelV4;
  }

  it('a deadline above 2^31 - 1 ms (setTimeout would fire at once: every call a timeout, content through under fail-open) is an InvalidProcessorOptionError', () => {
    for (const judgeDeadlineMs of [2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE]) {
      for (const build of [
        () => new ModerationProcessor({ model: judge, judgeDeadlineMs }),
        () => new PIIDetector({ model: judge, judgeDeadlineMs }),
        () => new PromptInjectionDetector({ model: judge, judgeDeadlineMs }),
        () => new SystemPromptScrubber({ model: judge, judgeDeadlineMs }),
        () => new LanguageDetector({ model: judge, targetLanguages: ['en'], judgeDeadlineMs }),
      ]) {
        expectRefused(build, 'judgeDeadlineMs');
      }
    }
  });

  it(
    'the longest deadline a timer can wait for waits for a slow judge: its verdict decides, even under fail-open',
    async () => {
      for (const name of guardNames) {
        const flagging: Record<GuardName, Record<string, unknown>> = {
          moderation: { category_scores: [{ category: 'violence', score: 0.97 }] },
          injection: { categories: [{ type: 'injection', score: 0.97 }] },
          pii: { detections: [{ type: 'email', value: EMAIL, confidence: 0.97 }] },
          scrubber: { detections: [{ type: 'secret', value: SECRET, confidence: 0.97 }] },
          language: { iso_code: 'de', confidence: 0.99 },
        };
        const phase = phases[name][0] as Phase;
        const processor = guard(name, slowJudge(JSON.stringify(flagging[name]), 30), { judgeDeadlineMs: 2 ** 31 - 1, errorStrategy: 'fail-open' });
        const outcome = await runGuarded(processor, phase, content[name]);
        expect(outcome.tripwire, `${name}/${phase}`).toBeDefined();
        expect(outcome.streamed).not.toContain('MARK');
      }
    },
    60_000,
  );
});

describe('two instances of one guard class in one agent (one id, one run)', () => {
  it(
    'two ModerationProcessors / PIIDetectors / scrubbers as output processors, each with its own judge: either one flagging blocks, on every split (property)',
    async () => {
      await checkProperty(
        'red-team-2026-12-two-instances',
        fc.record({
          name: fc.constantFrom<GuardName>('moderation', 'pii', 'scrubber'),
          flaggingFirst: fc.boolean(),
          chunkSize: fc.integer({ min: 1, max: 12 }),
          mode: fc.constantFrom('window', 'final'),
        }),
        async ({ name, flaggingFirst, chunkSize, mode }) => {
          const flagging: Record<string, Record<string, unknown>> = {
            moderation: { category_scores: [{ category: 'violence', score: 0.97 }] },
            pii: { detections: [{ type: 'email', value: EMAIL, confidence: 0.97 }] },
            scrubber: { detections: [{ type: 'secret', value: SECRET, confidence: 0.97 }] },
          };
          const flags = judgeModel(({ prompt }) => JSON.stringify(judgedContents(prompt).some((text) => text.includes('MARK')) ? flagging[name] : safeAnswer[name]));
          const clean = judgeModel(() => JSON.stringify(safeAnswer[name]));
          const [first, second] = flaggingFirst ? [flags, clean] : [clean, flags];
          const processors = [guard(name, first, { streamMode: mode }), guard(name, second, { streamMode: mode })];
          const model = mockModel({ parts: [...textParts(`Hello. ${content[name]} Bye.`, { chunkSize }), finishPart()] });
          const agent = new Agent({ id: 'a', instructions: SYSTEM, model, outputProcessors: processors });
          const chunks = await lastValueFrom(agent.stream$('Hello there, how are you?').pipe(toArray()));
          const streamed = chunks.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('');
          const where = `${name} ${mode} chunk ${chunkSize} flagging ${flaggingFirst ? 'first' : 'second'}`;
          if (chunks.some((part) => part.type === 'error')) throw new Error(`${where}: the run ended in an error: ${JSON.stringify(chunks.find((part) => part.type === 'error'))}`);
          if (!chunks.some((part) => part.type === 'tripwire')) throw new Error(`${where}: not blocked; streamed ${JSON.stringify(streamed)}`);
          if (streamed.includes('MARK')) throw new Error(`${where}: the client saw ${JSON.stringify(streamed)}`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('structured output: the object a structurer makes from text a guard has not judged yet', () => {
  it(
    'StructuredOutputProcessor before a model-backed guard (redact, filter or block): the object chunk and result.object carry no value the guard finds (property)',
    async () => {
      await checkProperty(
        'red-team-2026-12-structured-object',
        fc.record({
          name: fc.constantFrom<'pii' | 'scrubber' | 'moderation'>('pii', 'scrubber', 'moderation'),
          strategy: fc.constantFrom('redact', 'block', 'filter'),
          mode: fc.constantFrom('window', 'final'),
          chunkSize: fc.integer({ min: 1, max: 20 }),
          reformat: fc.boolean(),
        }),
        async ({ name, strategy, mode, chunkSize, reformat }) => {
          const value = name === 'pii' ? EMAIL : name === 'scrubber' ? SECRET : 'MARKviolent';
          const text = `Hello there. The contact is ${value} for now. Bye.`;
          // the structurer copies the value, or writes it in another case (not as the text has it)
          const structured = reformat ? value.toUpperCase() : value;
          const structurer = answering(JSON.stringify({ contact: structured }));
          const flagged: Record<string, unknown> =
            name === 'pii'
              ? { detections: [{ type: 'email', value: EMAIL, confidence: 0.99 }] }
              : name === 'scrubber'
                ? { detections: [{ type: 'secret', value: SECRET, confidence: 0.99 }] }
                : { category_scores: [{ category: 'violence', score: 0.99 }] };
          const clean = name === 'moderation' ? { category_scores: [] } : { detections: [] };
          const judging = judgeModel(({ prompt }) => JSON.stringify(judgedContents(prompt).some((content) => content.toLowerCase().includes(value.toLowerCase())) ? flagged : clean));
          const guardOptions = { streamMode: mode, strategy: name === 'moderation' && strategy === 'redact' ? 'filter' : strategy };
          const processors = [
            new StructuredOutputProcessor({ model: structurer, schema: z.object({ contact: z.string() }) }),
            name === 'pii' ? new PIIDetector({ model: judging, redactionMethod: 'placeholder', ...guardOptions } as never) : name === 'scrubber' ? new SystemPromptScrubber({ model: judging, ...guardOptions } as never) : new ModerationProcessor({ model: judging, ...guardOptions } as never),
          ];
          const model = mockModel({ parts: [...textParts(text, { chunkSize }), finishPart()] });
          const agent = new Agent({ id: 'a', instructions: SYSTEM, model, outputProcessors: processors });
          const chunks = await lastValueFrom(agent.stream$('Hello there, how are you?').pipe(toArray()));
          const where = `${name} ${strategy} ${mode} ${chunkSize} ${reformat ? 'reformatted' : 'copied'}`;
          if (chunks.some((part) => part.type === 'error')) throw new Error(`${where}: the run ended in an error: ${JSON.stringify(chunks.find((part) => part.type === 'error'))}`);
          const seen = JSON.stringify(chunks).toLowerCase();
          if (seen.includes(value.toLowerCase())) throw new Error(`${where}: the client saw the value: ${JSON.stringify(chunks.filter((part) => JSON.stringify(part).toLowerCase().includes(value.toLowerCase())))}`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
