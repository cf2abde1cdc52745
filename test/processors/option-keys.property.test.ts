/**
 * Every built-in processor refuses an option NAME it does not know (property-based): generated
 * misspellings of each of its option names — one edit away (a letter left out, added, changed, two
 * swapped) or in another case — make the constructor throw an `InvalidProcessorOptionError` naming
 * the processor and the misspelt key, suggesting the name it resembles; never a construction that
 * silently runs with the default (`new PIIDetector({ model, stratgy: 'block' })` redacted instead
 * of blocking). Every documented name, and every name the reference's processor of the same name
 * accepts, constructs — so do the reference docs' own examples. A reference option rxagent does
 * not implement is warned about once. The reference's names are checked against the installed
 * reference's type declarations (bench/peer).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { asyncScheduler } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { InvalidProcessorOptionError } from '../../src/contract/errors/invalid-processor-option-error.js';
import { editDistance } from '../../src/contract/closest-key.js';
import { BatchPartsProcessor } from '../../src/processors/batch-parts.js';
import { LanguageDetector } from '../../src/processors/language-detector.js';
import { ModelSelectionProcessor } from '../../src/processors/model-selection.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { PrefillErrorHandler } from '../../src/processors/prefill-error-handler.js';
import { PromptInjectionDetector } from '../../src/processors/prompt-injection-detector.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { InMemoryResponseCacheStore, ResponseCache } from '../../src/processors/response-cache.js';
import { StreamErrorRetryProcessor } from '../../src/processors/stream-error-retry.js';
import { StructuredOutputProcessor } from '../../src/processors/structured-output.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { TokenLimiterProcessor } from '../../src/processors/token-limiter.js';
import { ToolCallFilter } from '../../src/processors/tool-call-filter.js';
import { ToolSearchProcessor } from '../../src/processors/tool-search.js';
import { UnicodeNormalizer } from '../../src/processors/unicode-normalizer.js';
import { judgeModel } from './support/harness.js';
import { thrownBy } from './support/option-error.js';

const RUNS = 40;
type Options = Record<string, unknown>;

const model = judgeModel(() => '{}');
const noop = () => undefined;
const tool = { description: 'a tool', execute: noop };
const person = z.object({ name: z.string() });
const choices = [
  { id: 'fast', model: judgeModel(() => '{}'), description: 'short questions' },
  { id: 'deep', model: judgeModel(() => '{}'), description: 'reasoning' },
];
/** A stand-in for the reference's `MastraServerCache` (rxagent does not read it). */
const referenceServerCache = { get: async () => undefined, set: async () => undefined };

// ---- the names, with a valid value each ----

/** rxagent's options every model-backed processor has. */
const modelBacked: Options = {
  model,
  registry: { languageModel: () => model },
  instructions: 'Judge the text.',
  providerOptions: { openai: { store: false } },
  structuredOutputOptions: { jsonPromptInjection: true },
  onError: noop,
};

/** rxagent's options of the guards' judge (on top of the model-backed ones). */
const guardJudge: Options = {
  ...modelBacked,
  onViolation: noop,
  errorStrategy: 'strict',
  contentErrorStrategy: 'strict',
  onFailOpen: noop,
  maxJudgeInputChars: 4000,
  maxJudgeCalls: 50,
  maxConcurrentJudgeCalls: 2,
  judgeDeadlineMs: 10_000,
};

/** rxagent's options of the guards that gate their stream. */
const guardStream: Options = { streamMode: 'final', windowSchedule: [24, 96], windowSize: 200, channels: ['text', 'reasoning'] };

/** The reference's options its model-backed guards share (`LastMessageOnlyOption` and the model's). */
const referenceGuard: Options = { model, errorStrategy: 'warn', instructions: 'Judge the text.', lastMessageOnly: true, providerOptions: { openai: { store: false } } };

interface KeyCase {
  processorId: string;
  /** The reference's class of the same name (its declarations name its options). */
  referenceClass: string;
  make: (options: Options) => unknown;
  /** Options every construction starts from (the required ones). */
  base: Options;
  /** Every option rxagent documents for it, with a valid value. */
  documented: Options;
  /** Every option the reference's processor of the same name accepts, with a value its docs would give. */
  reference: Options;
}

const cases: KeyCase[] = [
  {
    processorId: 'moderation',
    referenceClass: 'ModerationProcessor',
    make: (options) => new ModerationProcessor(options as never),
    base: { model },
    documented: { ...guardJudge, ...guardStream, categories: ['hate'], threshold: 0.7, strategy: 'filter', includeScores: true, lastMessageOnly: true, revealJudgeReason: false, chunkWindow: 1 },
    reference: { ...referenceGuard, structuredOutputOptions: { jsonPromptInjection: true }, categories: ['hate', 'violence'], threshold: 0.7, strategy: 'block', includeScores: true, chunkWindow: 0 },
  },
  {
    processorId: 'pii-detector',
    referenceClass: 'PIIDetector',
    make: (options) => new PIIDetector(options as never),
    base: { model },
    documented: {
      ...guardJudge,
      ...guardStream,
      detectionTypes: ['email'],
      threshold: 0.6,
      strategy: 'block',
      redactionMethod: 'hash',
      hashKey: 'a-long-enough-hmac-key',
      preserveFormat: false,
      includeDetections: true,
      lastMessageOnly: true,
    },
    reference: {
      ...referenceGuard,
      structuredOutputOptions: { jsonPromptInjection: false },
      detectionTypes: ['email', 'phone'],
      threshold: 0.6,
      strategy: 'redact',
      redactionMethod: 'placeholder',
      includeDetections: true,
      preserveFormat: true,
      bufferSize: 200,
      onDetection: noop,
    },
  },
  {
    processorId: 'prompt-injection-detector',
    referenceClass: 'PromptInjectionDetector',
    make: (options) => new PromptInjectionDetector(options as never),
    base: { model },
    documented: { ...guardJudge, detectionTypes: ['injection'], threshold: 0.8, strategy: 'rewrite', includeScores: true, lastMessageOnly: true, revealJudgeReason: false, onDetection: noop },
    reference: { ...referenceGuard, structuredOutputOptions: { jsonPromptInjection: true }, detectionTypes: ['injection', 'jailbreak'], threshold: 0.8, strategy: 'block', includeScores: true, onDetection: noop },
  },
  {
    processorId: 'language-detector',
    referenceClass: 'LanguageDetector',
    make: (options) => new LanguageDetector(options as never),
    base: { model, targetLanguages: ['en'] },
    documented: { ...guardJudge, targetLanguages: ['en', 'de'], threshold: 0.8, strategy: 'translate', preserveOriginal: false, minTextLength: 5, includeDetectionDetails: false, lastMessageOnly: true, translationQuality: 'speed' },
    reference: { ...referenceGuard, targetLanguages: ['English', 'en'], threshold: 0.8, strategy: 'detect', preserveOriginal: true, minTextLength: 10, includeDetectionDetails: true, translationQuality: 'quality' },
  },
  {
    processorId: 'system-prompt-scrubber',
    referenceClass: 'SystemPromptScrubber',
    make: (options) => new SystemPromptScrubber(options as never),
    base: { model },
    documented: { ...guardJudge, ...guardStream, strategy: 'block', customPatterns: [/INTERNAL-\d+/, 'PROMO-\\d+'], redactionMethod: 'mask', placeholderText: '[hidden]', includeDetections: true, threshold: 0.6 },
    reference: {
      model,
      errorStrategy: 'warn',
      instructions: 'Find leaks.',
      lastMessageOnly: true,
      structuredOutputOptions: { jsonPromptInjection: true },
      strategy: 'redact',
      customPatterns: ['system prompt'],
      includeDetections: true,
      redactionMethod: 'placeholder',
      placeholderText: '[REDACTED]',
    },
  },
  {
    processorId: 'model-selection',
    referenceClass: 'ModelSelectionProcessor',
    make: (options) => new ModelSelectionProcessor(options as never),
    base: { model, choices },
    documented: { ...modelBacked, errorStrategy: 'strict', choices, defaultChoice: 'fast', minConfidence: 0.5, scope: 'first-step', onDecision: noop },
    // the classifier form cannot construct without choices (rxagent picks from choices): its names are accepted beside them
    reference: { model, choices, instructions: 'Route.', minProbability: 0.5, scope: 'run', onDecision: noop, providerOptions: {}, id: 'router', classifier: 'triage', select: noop },
  },
  {
    processorId: 'structured-output',
    referenceClass: 'StructuredOutputProcessor',
    make: (options) => new StructuredOutputProcessor(options as never),
    base: { model, schema: person },
    documented: { ...modelBacked, schema: person, errorStrategy: 'warn', fallbackValue: { name: 'Ada' } },
    reference: { model, schema: person, instructions: 'Extract.', errorStrategy: 'fallback', fallbackValue: { name: 'Ada' }, jsonPromptInjection: 'auto', useAgent: true, providerOptions: {}, logger: console },
  },
  {
    processorId: 'token-limiter',
    referenceClass: 'TokenLimiterProcessor',
    make: (options) => new TokenLimiterProcessor(options as never),
    base: { limit: 100, tokenCounter: (text: string) => text.length },
    documented: { limit: 100, outputLimit: 50, strategy: 'abort', countMode: 'part', tokenCounter: (text: string) => text.length, onViolation: noop },
    // the reference's tokenCounter is an object ({ countMessage }): rxagent's is a function of the text
    reference: { limit: 100, encoding: 'o200k_base', strategy: 'truncate', countMode: 'cumulative', trimMode: 'best-fit', atMaxRemoveTokens: 10, tokenCounter: (text: string) => text.length, onMemoryTrim: async () => undefined },
  },
  {
    processorId: 'regex-filter',
    referenceClass: 'RegexFilterProcessor',
    make: (options) => new RegexFilterProcessor(options as never),
    base: { presets: ['pii'] },
    documented: {
      rules: [{ name: 'id', pattern: 'ID-\\d+', flags: 'i', replacement: '[ID]', validate: () => true, maxMatchLength: 20, strategy: 'block' }],
      presets: ['secrets'],
      strategy: 'redact',
      phase: 'output',
      includeRedactedValues: true,
      streamCarryoverSize: 64,
      channels: ['text'],
      normalize: false,
      onViolation: noop,
    },
    reference: { rules: [{ name: 'internal-id', pattern: /INTERNAL-\d{6}/g, replacement: '[INTERNAL_ID]' }], presets: ['pii', 'urls'], strategy: 'warn', phase: 'all', includeRedactedValues: false, streamCarryoverSize: 256 },
  },
  {
    processorId: 'batch-parts',
    referenceClass: 'BatchPartsProcessor',
    make: (options) => new BatchPartsProcessor(options as never),
    base: {},
    documented: { batchSize: 3, maxWaitTime: 100, emitOnNonText: false, scheduler: asyncScheduler },
    reference: { batchSize: 5, maxWaitTime: 100, emitOnNonText: true },
  },
  {
    processorId: 'tool-call-filter',
    referenceClass: 'ToolCallFilter',
    make: (options) => new ToolCallFilter(options as never),
    base: {},
    documented: { exclude: ['search'], preserveCurrentTurn: false, filterAfterToolSteps: 2, preserveModelOutput: true },
    reference: { exclude: ['searchDatabase'], filterAfterToolSteps: 2, preserveModelOutput: true },
  },
  {
    processorId: 'tool-search',
    referenceClass: 'ToolSearchProcessor',
    make: (options) => new ToolSearchProcessor(options as never),
    base: { tools: { weather: tool } },
    documented: { tools: { weather: tool }, maxResults: 3 },
    reference: { tools: { weather: tool }, includeResolvedTools: true, injectCatalog: false, search: { topK: 5, minScore: 0.1 }, storage: 'context', ttl: 60_000, filter: () => true },
  },
  {
    processorId: 'unicode-normalizer',
    referenceClass: 'UnicodeNormalizer',
    make: (options) => new UnicodeNormalizer(options as never),
    base: {},
    documented: { stripControlChars: true, preserveEmojis: false, collapseWhitespace: false, trim: false },
    reference: { stripControlChars: true, preserveEmojis: true, collapseWhitespace: true, trim: true },
  },
  {
    processorId: 'stream-error-retry-processor',
    referenceClass: 'StreamErrorRetryProcessor',
    make: (options) => new StreamErrorRetryProcessor(options as never),
    base: {},
    documented: { maxRetries: 2, delayMs: 100, maxRetryAfterMs: 5000, matchers: [() => false], retryUnknownErrors: true, scheduler: asyncScheduler, onRetry: noop },
    reference: { maxRetries: 2, matchers: [{ match: () => false, maxRetries: 1, delayMs: 10, onRetry: noop }], retryUnknownErrors: true, delayMs: () => 3000, maxRetryAfterMs: 30_000 },
  },
  {
    processorId: 'response-cache',
    referenceClass: 'ResponseCache',
    make: (options) => new ResponseCache(options as never),
    base: {},
    documented: { store: new InMemoryResponseCacheStore(), ttlMs: 60_000, key: () => 'k', requestContextKeys: ['tenant'], storeTimeoutMs: 500, onError: noop },
    // the reference's `key` may be a string too: rxagent's is a function
    reference: { cache: referenceServerCache, key: () => 'k', ttl: 600, scope: 'user-1', bust: false, agentId: 'search-agent' },
  },
  {
    processorId: 'prefill-error-handler',
    referenceClass: 'PrefillErrorHandler',
    make: (options) => new PrefillErrorHandler(options as never),
    base: {},
    documented: {},
    reference: {},
  },
];

/** Every name `processor` accepts. */
const knownNames = (processor: KeyCase) => [...new Set([...Object.keys(processor.documented), ...Object.keys(processor.reference)])];

/** A valid value for `name`. */
const valueOf = (processor: KeyCase, name: string) => (name in processor.documented ? processor.documented[name] : processor.reference[name]);

// ---- misspellings ----

const letters = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_'];

/** One edit of `name` (a letter left out, added, changed, two neighbours swapped) or a change of case. */
function misspellingOf(name: string): fc.Arbitrary<string> {
  const at = fc.nat({ max: name.length - 1 });
  const letter = fc.constantFrom(...letters);
  return fc.oneof(
    at.map((index) => name.slice(0, index) + name.slice(index + 1)),
    fc.tuple(fc.nat({ max: name.length }), letter).map(([index, added]) => name.slice(0, index) + added + name.slice(index)),
    fc.tuple(at, letter).map(([index, other]) => name.slice(0, index) + other + name.slice(index + 1)),
    at.filter((index) => index < name.length - 1).map((index) => name.slice(0, index) + name[index + 1] + name[index] + name.slice(index + 2)),
    fc.constantFrom(name.toUpperCase(), name.toLowerCase(), name.charAt(0).toUpperCase() + name.slice(1)),
    at.map((index) => {
      const character = name[index]!;
      const flipped = character === character.toUpperCase() ? character.toLowerCase() : character.toUpperCase();
      return name.slice(0, index) + flipped + name.slice(index + 1);
    }),
  );
}

/** The error `make` threw for the unknown key `key` of `processorId`; checks what it names. */
function expectKeyError(make: () => unknown, processorId: string, key: string): InvalidProcessorOptionError {
  const error = thrownBy(make);
  expect(InvalidProcessorOptionError.isInstance(error), String(error)).toBe(true);
  expect(error).toMatchObject({ name: 'InvalidProcessorOptionError', processorId, option: key });
  expect((error as Error).message).toContain(`${processorId}: option ${key} `);
  return error as InvalidProcessorOptionError;
}

let warnings: string[] = [];
beforeEach(() => {
  warnings = [];
  vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(' ')));
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('a misspelt option name is refused, naming the processor and the key, suggesting the name (property-based)', () => {
  for (const processor of cases) {
    const known = knownNames(processor);
    if (known.length === 0) continue;
    it(`${processor.processorId}: one edit or a case change away from any of its ${known.length} names`, () => {
      const misspelt = fc
        .constantFrom(...known)
        .chain((name) => misspellingOf(name).map((key) => ({ name, key })))
        .filter(({ key }) => key !== '' && !known.includes(key));
      fc.assert(
        fc.property(misspelt, ({ name, key }) => {
          const error = expectKeyError(() => processor.make({ ...processor.base, [key]: valueOf(processor, name) }), processor.processorId, key);
          // the suggestion is the name misspelt, or another name at least as close to the key
          const closest = Math.min(...known.map((candidate) => editDistance(key, candidate)));
          const nearest = known.filter((candidate) => editDistance(key, candidate) === closest);
          const suggested = /did you mean (\S+)\?/.exec(error.message)?.[1];
          expect(suggested, error.message).toBeDefined();
          expect(nearest, error.message).toContain(suggested);
          expect(closest).toBeLessThanOrEqual(editDistance(key, name));
          if (nearest.length === 1 && nearest[0] === name) expect(suggested).toBe(name);
        }),
        { numRuns: RUNS },
      );
    });
  }

  it("the issue's cases: stratgy, treshold, chanels are refused, never run with the default", () => {
    expect(expectKeyError(() => new PIIDetector({ model, stratgy: 'block' } as never), 'pii-detector', 'stratgy').message).toBe(
      'pii-detector: option stratgy is not one of its options (did you mean strategy?)',
    );
    expect(expectKeyError(() => new ModerationProcessor({ model, treshold: 0.1 } as never), 'moderation', 'treshold').message).toContain('did you mean threshold?');
    expect(expectKeyError(() => new RegexFilterProcessor({ presets: ['pii'], chanels: ['input'] } as never), 'regex-filter', 'chanels').message).toContain('did you mean channels?');
  });

  it('a key like no option lists the names instead of guessing', () => {
    const error = expectKeyError(() => new BatchPartsProcessor({ colour: 'red' } as never), 'batch-parts', 'colour');
    expect(error.message).toBe('batch-parts: option colour is not one of its options (its options are batchSize, maxWaitTime, emitOnNonText, scheduler)');
  });

  it('the message leaves the value out (a misspelt hashKey must not put the key in a log); the error keeps it', () => {
    const secret = 'hmac-key-material-7c1e';
    const error = expectKeyError(() => new PIIDetector({ model, hashkey: secret } as never), 'pii-detector', 'hashkey');
    expect(error.message).toContain('did you mean hashKey?');
    expect(error.message).not.toContain(secret);
    expect(error.value).toBe(secret);
  });

  it('inside nested options too: a rule, a matcher, structuredOutputOptions', () => {
    const rule = { name: 'r', pattern: /x/, stratgy: 'block' };
    expect(expectKeyError(() => new RegexFilterProcessor({ rules: [rule] } as never), 'regex-filter', 'rules[0].stratgy').message).toContain('did you mean strategy?');
    const matcher = { match: () => true, maxRetrys: 0 };
    expect(expectKeyError(() => new StreamErrorRetryProcessor({ matchers: [() => false, matcher] } as never), 'stream-error-retry-processor', 'matchers[1].maxRetrys').message).toContain('did you mean maxRetries?');
    for (const make of [
      (options: Options) => new ModerationProcessor({ model, ...options }),
      (options: Options) => new StructuredOutputProcessor({ model, schema: person, ...options }),
      (options: Options) => new ModelSelectionProcessor({ model, choices, ...options } as never),
    ]) {
      const error = thrownBy(() => make({ structuredOutputOptions: { jsonPromptInjecton: true } }));
      expect(error).toMatchObject({ option: 'structuredOutputOptions.jsonPromptInjecton' });
      expect((error as Error).message).toContain('did you mean jsonPromptInjection?');
    }
  });

  it('an option of another processor is refused (onViolation is no option of StructuredOutputProcessor or ModelSelectionProcessor)', () => {
    expectKeyError(() => new StructuredOutputProcessor({ model, schema: person, onViolation: noop } as never), 'structured-output', 'onViolation');
    expectKeyError(() => new ModelSelectionProcessor({ model, choices, onViolation: noop } as never), 'model-selection', 'onViolation');
    expectKeyError(() => new UnicodeNormalizer({ strategy: 'block' } as never), 'unicode-normalizer', 'strategy');
    expect(expectKeyError(() => new PrefillErrorHandler({ retries: 1 } as never), 'prefill-error-handler', 'retries').message).toContain('it takes none');
  });
});

describe('every documented and every reference option name is accepted', () => {
  for (const processor of cases) {
    it(`${processor.processorId}: each name alone, and the reference's all together`, () => {
      for (const name of knownNames(processor)) {
        expect(() => processor.make({ ...processor.base, [name]: valueOf(processor, name) }), name).not.toThrow();
      }
      expect(() => processor.make({ ...processor.base, ...processor.documented })).not.toThrow();
      expect(() => processor.make({ ...processor.base, ...processor.reference })).not.toThrow();
    });
  }
});

describe('options objects: what counts as a key', () => {
  it('a class instance whose options are own fields constructs; an object without a prototype too', () => {
    class PiiOptions {
      model = model;
      strategy = 'block' as const;
    }
    expect(() => new PIIDetector(new PiiOptions())).not.toThrow();
    expect(() => new PIIDetector(Object.assign(Object.create(null) as object, { model, strategy: 'block' }) as never)).not.toThrow();
  });

  it('an option its prototype adds (a getter, a method) is refused: some readers would see it and a spread would not', () => {
    class WithGetter {
      model = model;
      get streamMode() {
        return 'final';
      }
    }
    expect(expectKeyError(() => new PIIDetector(new WithGetter() as never), 'pii-detector', 'streamMode').message).toContain("inherited from the options' prototype");
    class WithMethod {
      model = model;
      onViolation() {
        return undefined;
      }
    }
    expectKeyError(() => new ModerationProcessor(new WithMethod() as never), 'moderation', 'onViolation');
    class WithTypo {
      model = model;
      get stratgy() {
        return 'block';
      }
    }
    expect(expectKeyError(() => new PIIDetector(new WithTypo() as never), 'pii-detector', 'stratgy').message).toContain('did you mean strategy?');
    expectKeyError(() => new PIIDetector(Object.create({ strategy: 'block' }, { model: { value: model, enumerable: true } }) as never), 'pii-detector', 'strategy');
  });

  it('a symbol key is refused (the options object holds option names only); so is a non-enumerable option', () => {
    const tag = Symbol('tag');
    expect(expectKeyError(() => new PIIDetector({ model, [tag]: true } as never), 'pii-detector', 'Symbol(tag)').message).toContain('symbol key');
    const hidden = Object.defineProperty({ model }, 'strategy', { value: 'block', enumerable: false });
    expect(expectKeyError(() => new PIIDetector(hidden as never), 'pii-detector', 'strategy').message).toContain('not enumerable');
  });

  it('options that are no object are refused naming options (null, a string, an array)', () => {
    for (const options of [null, 'block', ['model']]) {
      const error = thrownBy(() => new UnicodeNormalizer(options as never));
      expect(error).toMatchObject({ name: 'InvalidProcessorOptionError', processorId: 'unicode-normalizer', option: 'options' });
    }
  });

  it('TokenLimiterProcessor takes the limit alone, as the reference does (new TokenLimiter(4000))', () => {
    expect(() => new TokenLimiterProcessor(4000)).not.toThrow();
    expect(thrownBy(() => new TokenLimiterProcessor(Number.NaN))).toMatchObject({ option: 'limit' });
    expect(thrownBy(() => new TokenLimiterProcessor(-1))).toMatchObject({ option: 'limit' });
  });
});

describe("the reference docs' examples construct (a judge model given as an object: a model id needs a registry here)", () => {
  const internalId = /INTERNAL-\d{6}/g;
  const examples: Array<[string, () => unknown]> = [
    ['BatchPartsProcessor', () => new BatchPartsProcessor({ batchSize: 5, maxWaitTime: 100, emitOnNonText: true })],
    ['BatchPartsProcessor (before a guard)', () => new BatchPartsProcessor({ batchSize: 10 })],
    ['LanguageDetector', () => new LanguageDetector({ model, targetLanguages: ['English', 'en'], threshold: 0.8, strategy: 'translate', lastMessageOnly: true })],
    [
      'LanguageDetector (agent)',
      () =>
        new LanguageDetector({
          model,
          targetLanguages: ['English', 'en'],
          threshold: 0.8,
          strategy: 'translate',
          preserveOriginal: true,
          instructions: 'Detect language and translate non-English content to English while preserving original intent',
          minTextLength: 10,
          includeDetectionDetails: true,
        }),
    ],
    ['ModerationProcessor', () => new ModerationProcessor({ model, threshold: 0.7, strategy: 'block', categories: ['hate', 'harassment', 'violence'], lastMessageOnly: true })],
    [
      'ModerationProcessor (agent)',
      () => new ModerationProcessor({ model, categories: ['hate', 'harassment', 'violence'], threshold: 0.7, strategy: 'block', instructions: 'Detect and flag inappropriate content in user messages', includeScores: true }),
    ],
    ['ModerationProcessor (output)', () => new ModerationProcessor({ model, strategy: 'filter', chunkWindow: 1 })],
    ['PIIDetector', () => new PIIDetector({ model, threshold: 0.6, strategy: 'redact', detectionTypes: ['email', 'phone', 'credit-card', 'ssn'], lastMessageOnly: true })],
    [
      'PIIDetector (agent)',
      () =>
        new PIIDetector({
          model,
          detectionTypes: ['email', 'phone', 'credit-card', 'ssn'],
          threshold: 0.6,
          strategy: 'redact',
          redactionMethod: 'mask',
          instructions: 'Detect and redact personally identifiable information while preserving message intent',
          includeDetections: true,
          preserveFormat: true,
        }),
    ],
    ['PIIDetector (output)', () => new PIIDetector({ model, strategy: 'redact' })],
    ['PromptInjectionDetector', () => new PromptInjectionDetector({ model, threshold: 0.8, strategy: 'rewrite', detectionTypes: ['injection', 'jailbreak', 'system-override'], lastMessageOnly: true })],
    [
      'PromptInjectionDetector (agent)',
      () =>
        new PromptInjectionDetector({
          model,
          detectionTypes: ['injection', 'jailbreak', 'system-override'],
          threshold: 0.8,
          strategy: 'rewrite',
          instructions: 'Detect and neutralize prompt injection attempts while preserving legitimate user intent',
          includeScores: true,
        }),
    ],
    ['SystemPromptScrubber', () => new SystemPromptScrubber({ model, strategy: 'redact', redactionMethod: 'mask', includeDetections: true, lastMessageOnly: true })],
    [
      'SystemPromptScrubber (output)',
      () => new SystemPromptScrubber({ model, strategy: 'redact', customPatterns: ['system prompt', 'internal instructions'], includeDetections: true, redactionMethod: 'placeholder', placeholderText: '[REDACTED]' }),
    ],
    ['UnicodeNormalizer', () => new UnicodeNormalizer({ stripControlChars: true, collapseWhitespace: true })],
    ['UnicodeNormalizer (agent)', () => new UnicodeNormalizer({ stripControlChars: true, preserveEmojis: true, collapseWhitespace: true, trim: true })],
    ['UnicodeNormalizer ()', () => new UnicodeNormalizer()],
    ['RegexFilterProcessor (pii, input)', () => new RegexFilterProcessor({ presets: ['pii'], strategy: 'block', phase: 'input' })],
    ['RegexFilterProcessor (secrets, output)', () => new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact', phase: 'output' })],
    ['RegexFilterProcessor (rule)', () => new RegexFilterProcessor({ rules: [{ name: 'internal-id', pattern: internalId, replacement: '[INTERNAL_ID]' }], strategy: 'redact' })],
    [
      'RegexFilterProcessor (carryover)',
      () => new RegexFilterProcessor({ rules: [{ name: 'armored-key', pattern: /-----BEGIN KEY-----[A-Z]+-----END KEY-----/g, replacement: '[KEY]' }], strategy: 'redact', streamCarryoverSize: 256 }),
    ],
    ['RegexFilterProcessor (agent)', () => new RegexFilterProcessor({ presets: ['pii', 'secrets'], strategy: 'block' })],
    ['RegexFilterProcessor (redact)', () => new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' })],
    ['TokenLimiterProcessor', () => new TokenLimiterProcessor({ limit: 1000, strategy: 'truncate', countMode: 'cumulative' })],
    ['TokenLimiterProcessor (memory)', () => new TokenLimiterProcessor({ limit: 4000 })],
    ['TokenLimiter(4000)', () => new TokenLimiterProcessor(4000)],
    ['TokenLimiter(127000)', () => new TokenLimiterProcessor(127_000)],
    ['ToolCallFilter ()', () => new ToolCallFilter()],
    ['ToolCallFilter (exclude)', () => new ToolCallFilter({ exclude: ['searchDatabase', 'sendEmail'] })],
    ['ToolCallFilter (after tool steps)', () => new ToolCallFilter({ filterAfterToolSteps: 2 })],
    ['ToolCallFilter (model output)', () => new ToolCallFilter({ preserveModelOutput: true })],
    ['ToolCallFilter (both)', () => new ToolCallFilter({ exclude: ['searchDatabase'], preserveModelOutput: true })],
    ['ToolSearchProcessor (search)', () => new ToolSearchProcessor({ tools: { createIssue: tool, sendEmail: tool }, search: { topK: 5, minScore: 0.1 } })],
    ['ToolSearchProcessor (filter)', () => new ToolSearchProcessor({ tools: { premium_report: tool }, filter: ({ toolName }: { toolName: string }) => !toolName.startsWith('premium_') })],
    ['ToolSearchProcessor (resolved)', () => new ToolSearchProcessor({ tools: { weather: tool }, includeResolvedTools: true })],
    ['ToolSearchProcessor (auto-load)', () => new ToolSearchProcessor({ tools: { weather: tool }, search: { topK: 3, autoLoad: true } })],
    ['ToolSearchProcessor (storage)', () => new ToolSearchProcessor({ tools: { weather: tool }, storage: 'context' })],
    ['StreamErrorRetryProcessor ()', () => new StreamErrorRetryProcessor()],
    ['StreamErrorRetryProcessor (unknown errors)', () => new StreamErrorRetryProcessor({ retryUnknownErrors: true, maxRetries: 2, delayMs: 3000 })],
    ['StreamErrorRetryProcessor (matchers)', () => new StreamErrorRetryProcessor({ maxRetries: 2, delayMs: ({ retryCount }) => Math.min(1000 * 2 ** retryCount, 30000), matchers: [() => false] })],
    ['ResponseCache', () => new ResponseCache({ cache: referenceServerCache, ttl: 600 })],
    ['PrefillErrorHandler', () => new PrefillErrorHandler()],
    [
      'StructuredOutputProcessor (mastra-behaviour.md §9)',
      () => new StructuredOutputProcessor({ schema: person, model, instructions: 'Extract.', errorStrategy: 'warn', jsonPromptInjection: true, useAgent: false, providerOptions: {}, logger: console }),
    ],
  ];
  for (const [name, make] of examples) {
    it(name, () => {
      expect(make).not.toThrow();
    });
  }
});

describe('a reference option rxagent does not implement: accepted, warned once per process and processor', () => {
  it('names the processor, the option and what to use instead; a second processor made the same way warns no more', async () => {
    vi.resetModules(); // a fresh warn-once record
    const { ResponseCache: FreshResponseCache } = await import('../../src/processors/response-cache.js');
    new FreshResponseCache({ cache: referenceServerCache, ttl: 600 });
    new FreshResponseCache({ cache: referenceServerCache, ttl: 600 });
    expect(warnings).toEqual([
      '[rxagent] response-cache: option cache is the reference\'s and has no effect here — give store (a ResponseCacheStore); without it responses are kept in memory.',
      "[rxagent] response-cache: option ttl is the reference's and has no effect here — use ttlMs (milliseconds; default 300000).",
    ]);
  });

  it('every processor: each reference-only option warns (once), an implemented one never', async () => {
    vi.resetModules();
    const fresh = {
      'pii-detector': (await import('../../src/processors/pii-detector.js')).PIIDetector,
      'tool-search': (await import('../../src/processors/tool-search.js')).ToolSearchProcessor,
      'token-limiter': (await import('../../src/processors/token-limiter.js')).TokenLimiterProcessor,
      moderation: (await import('../../src/processors/moderation.js')).ModerationProcessor,
    };
    new fresh['pii-detector']({ model, bufferSize: 100, onDetection: noop, strategy: 'block' });
    new fresh['tool-search']({ tools: { weather: tool }, filter: () => true, maxResults: 2 });
    new fresh['token-limiter']({ limit: 10, tokenCounter: (text: string) => text.length, trimMode: 'best-fit' });
    new fresh.moderation({ model, chunkWindow: 1, threshold: 0.5 });
    expect(warnings.map((line) => /^\[rxagent\] (\S+): option (\S+) /.exec(line)?.slice(1).join(' '))).toEqual([
      'pii-detector bufferSize',
      'pii-detector onDetection',
      'tool-search filter',
      'token-limiter trimMode',
      'moderation chunkWindow',
    ]);
    expect(warnings.find((line) => line.includes('tool-search'))).toContain('pass only the tools the model may load');
  });
});

// ---- the reference's names, read from its declarations ----

const peerProcessors = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'peer', 'node_modules', '@mastra', 'core', 'dist', 'processors');

/** Where each reference class is declared (under dist/processors). */
const declarations: Record<string, string> = {
  UnicodeNormalizer: 'processors/unicode-normalizer.d.ts',
  ModerationProcessor: 'processors/moderation.d.ts',
  PIIDetector: 'processors/pii-detector.d.ts',
  PromptInjectionDetector: 'processors/prompt-injection-detector.d.ts',
  LanguageDetector: 'processors/language-detector.d.ts',
  SystemPromptScrubber: 'processors/system-prompt-scrubber.d.ts',
  RegexFilterProcessor: 'processors/regex-filter.d.ts',
  BatchPartsProcessor: 'processors/batch-parts.d.ts',
  TokenLimiterProcessor: 'processors/token-limiter.d.ts',
  ToolCallFilter: 'processors/tool-call-filter.d.ts',
  ToolSearchProcessor: 'processors/tool-search.d.ts',
  StructuredOutputProcessor: 'processors/structured-output.d.ts',
  ModelSelectionProcessor: 'processors/model-selection.d.ts',
  ResponseCache: 'processors/response-cache.d.ts',
  StreamErrorRetryProcessor: 'stream-error-retry-processor.d.ts',
  PrefillErrorHandler: 'prefill-error-handler.d.ts',
};

describe("the reference's option names, as its installed declarations give them (bench/peer)", () => {
  it(
    "each case lists exactly the options of the reference's constructor (every overload, every member of a union)",
    async () => {
      // npm test installs the reference (scripts/ensure-peer.mjs), as the compat tests need it
      expect(existsSync(join(peerProcessors, 'index.d.ts')), 'the reference @mastra/core is not installed in bench/peer (npm test installs it)').toBe(true);
      const { default: ts } = await import('typescript');
      const roots = Object.values(declarations).map((file) => join(peerProcessors, file));
      const program = ts.createProgram(roots, { noEmit: true, skipLibCheck: true, types: [], module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022 });
      const checker = program.getTypeChecker();
      for (const processor of cases) {
        const source = program.getSourceFile(join(peerProcessors, declarations[processor.referenceClass]!))!;
        const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).find((symbol) => symbol.name === processor.referenceClass)!;
        const names = new Set<string>();
        for (const signature of checker.getTypeOfSymbolAtLocation(exported, source).getConstructSignatures()) {
          const parameter = signature.getParameters()[0];
          if (parameter === undefined) continue;
          const type = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(parameter, source));
          // `number | TokenLimiterOptions`: the number's methods are no options
          for (const part of type.isUnion() ? type.types : [type]) if ((part.flags & ts.TypeFlags.Object) !== 0 || part.isIntersection()) for (const property of checker.getPropertiesOfType(part)) names.add(property.name);
        }
        expect([...names].sort(), processor.referenceClass).toEqual(Object.keys(processor.reference).sort());
      }
    },
    120_000,
  );
});
