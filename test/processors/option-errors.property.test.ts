/**
 * Every option of every built-in processor is read on one strict path (property-based): for each
 * option, generated wrong values — the wrong type, a misspelt enum value, NaN, a negative, a huge
 * number, an empty list, a single string where a list belongs — make the constructor throw an
 * `InvalidProcessorOptionError` naming the processor and that option; generated valid options
 * construct. A wrong value is never read as some other behaviour (a default, "check nothing").
 * A value that cannot be read (test/support/hostile-values.ts, a Proxy whose reads throw, a
 * throwing getter), put at a generated position inside valid options — an option, an entry of a
 * list, a field of a rule — makes the constructor succeed or throw an
 * `InvalidProcessorOptionError` naming that position or one above it, never anything else.
 */
import fc from 'fast-check';
import { asyncScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidProcessorOptionError } from '../../src/contract/errors/invalid-processor-option-error.js';
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
import { errorPosingProxy, revokedProxy, throwingProxy } from '../support/hostile-values.js';
import { judgeModel } from './support/harness.js';
import { expectOptionError } from './support/option-error.js';

const RUNS = 30;
const MAX_TIMER_MS = 2 ** 31 - 1;
type Options = Record<string, unknown>;

// ---- wrong values, by what the option accepts ----

/** Values of other types than any option here accepts as such (each option adds its own near misses). */
const nullish = fc.constant(null);
const someObject = fc.oneof(fc.constant({}), fc.object({ maxDepth: 1 }), fc.constant(new Date(0)));
const someArray = fc.array(fc.oneof(fc.integer(), fc.boolean()), { maxLength: 3 });
const someNumber = fc.oneof(fc.integer(), fc.double(), fc.constant(Number.NaN));
const someString = fc.string({ maxLength: 12 });

const notBoolean = fc.oneof(fc.constantFrom('true', 'false', 'yes', 'no', '', 0, 1), someString, someNumber, nullish, someObject, someArray);
const notString = fc.oneof(someNumber, fc.boolean(), nullish, someObject, someArray, fc.constant(/re/));
const notFunction = fc.oneof(someString, someNumber, fc.boolean(), nullish, someObject, someArray);

/** A misspelling of one of `accepted` (case, a space, a letter more or less, `_` for `-`), or another string, or no string. */
function misspelt(accepted: readonly string[]): fc.Arbitrary<unknown> {
  const near = fc
    .constantFrom(...accepted)
    .chain((value) =>
      fc.constantFrom(
        value.toUpperCase(),
        value.charAt(0).toUpperCase() + value.slice(1),
        ` ${value}`,
        `${value} `,
        value.slice(0, -1),
        `${value}s`,
        value.replace('-', '_'),
        value.replace('-', ''),
        value.replace(/[aeiou]/, ''),
      ),
    )
    .filter((value) => !accepted.includes(value));
  return fc.oneof(near, someString.filter((value) => !accepted.includes(value)), fc.constantFrom('toString', 'constructor', '__proto__'), notString);
}

interface Bounds {
  /** Least accepted (inclusive). */
  least?: number;
  /** Accepted values are greater than this. */
  above?: number;
  /** Most accepted (inclusive); without it `Infinity` is accepted. */
  most?: number;
  /** Only whole numbers. */
  whole?: boolean;
}

/** NaN, values under the lower bound (negatives, -Infinity), over the upper one (huge, Infinity), fractions of whole counts, numeric strings. */
function badNumber({ least, above, most, whole = false }: Bounds): fc.Arbitrary<unknown> {
  const arbitraries: Array<fc.Arbitrary<unknown>> = [
    fc.constant(Number.NaN),
    fc.integer({ min: 0, max: 1000 }).map(String),
    fc.constantFrom('', '1e3', 'Infinity'),
    fc.boolean(),
    nullish,
    someObject,
    someArray,
  ];
  // `< least` as numbers compare: fast-check's doubles below +0 include -0, which is 0
  if (least !== undefined) arbitraries.push(fc.double({ max: least, maxExcluded: true, noNaN: true }).filter((value) => value < least));
  if (above !== undefined) arbitraries.push(fc.double({ max: above, noNaN: true }));
  if (most !== undefined) arbitraries.push(fc.double({ min: most, minExcluded: true, noNaN: true }), fc.constant(Number.POSITIVE_INFINITY));
  if (whole) {
    const floor = least ?? above ?? 0;
    arbitraries.push(fc.double({ min: floor, max: floor + 10_000, noNaN: true }).filter((value) => !Number.isInteger(value)));
    if (most === undefined) arbitraries.push(fc.constantFrom(2 ** 53, 1e300, Number.POSITIVE_INFINITY));
  }
  return fc.oneof(...arbitraries);
}

const badProbability = fc.oneof(
  fc.constant(Number.NaN),
  fc.double({ max: 0, maxExcluded: true, noNaN: true }).filter((value) => value < 0),
  fc.double({ min: 1, minExcluded: true, noNaN: true }),
  fc.constantFrom('0.5', '1', true, null),
  someObject,
);

/** Wrong values of a list of free labels (categories, detection types): a single string, an empty list, blank or non-string entries. */
const badLabels = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constant([]),
  fc.array(fc.constantFrom('', ' ', '\t\n'), { minLength: 1, maxLength: 3 }).map((blanks) => ['violence', ...blanks]),
  fc.array(fc.oneof(fc.integer(), nullish, fc.boolean(), someObject), { minLength: 1, maxLength: 3 }).map((entries) => ['hate', ...entries]),
  nullish,
  someObject,
  someNumber,
);

/** Wrong values of a list of known names (channels): a single name, an empty list, a misspelt or non-string entry. */
function badNameList(accepted: readonly string[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(...accepted),
    fc.constant([]),
    misspelt(accepted).map((entry) => [accepted[0], entry]),
    nullish,
    someObject,
    someNumber,
  );
}

// ---- the processors ----

/** One option: where the wrong value goes, the option name the error must carry, the wrong values. */
interface OptionCase {
  option: string;
  wrong: fc.Arbitrary<unknown>;
  /** Options carrying `value` (default: `{ [option]: value }`). */
  put?: (value: unknown) => Options;
}

interface ProcessorCase {
  processorId: string;
  make: (options: Options) => unknown;
  /** Options every construction starts from (the required ones). */
  base: Options;
  options: OptionCase[];
  /** Generated valid options (on top of `base`): they construct. */
  valid: fc.Arbitrary<Options>;
}

const model = judgeModel(() => '{}');
const guardChannels = ['text', 'reasoning', 'tool-input', 'data', 'tool-error'] as const;
const regexChannels = ['text', 'reasoning', 'tool-input', 'tool-result', 'tool-error', 'data', 'object', 'file'] as const;
const subset = <T>(values: readonly T[]) => fc.subarray([...values], { minLength: 1 });
const labels = fc.array(fc.string({ minLength: 1, maxLength: 10 }).filter((label) => label.trim() !== ''), { minLength: 1, maxLength: 4 });
const noop = () => undefined;

/** Options every model-backed processor shares. */
function modelBacked(withViolations: boolean): OptionCase[] {
  return [
    { option: 'instructions', wrong: notString },
    { option: 'providerOptions', wrong: fc.oneof(someString, someNumber, fc.boolean(), nullish, someArray) },
    { option: 'structuredOutputOptions', wrong: fc.oneof(someString, someNumber, fc.boolean(), nullish) },
    { option: 'structuredOutputOptions.jsonPromptInjection', wrong: notBoolean, put: (value) => ({ structuredOutputOptions: { jsonPromptInjection: value } }) },
    { option: 'onError', wrong: notFunction },
    ...(withViolations ? [{ option: 'onViolation', wrong: notFunction }] : []),
  ];
}

/** Options of the guards' judge. */
const judgeOptions: OptionCase[] = [
  ...modelBacked(true),
  { option: 'errorStrategy', wrong: misspelt(['strict', 'fail-open', 'warn']) },
  { option: 'contentErrorStrategy', wrong: misspelt(['strict', 'fail-open', 'warn']) },
  { option: 'onFailOpen', wrong: notFunction },
  { option: 'maxJudgeInputChars', wrong: badNumber({ least: 1, most: Number.MAX_SAFE_INTEGER }) },
  { option: 'maxJudgeCalls', wrong: badNumber({ least: 1, most: Number.MAX_SAFE_INTEGER }) },
  { option: 'maxConcurrentJudgeCalls', wrong: badNumber({ least: 1, most: Number.MAX_SAFE_INTEGER }) },
  { option: 'judgeDeadlineMs', wrong: badNumber({ least: 1, most: MAX_TIMER_MS }) },
];

const validJudge = {
  errorStrategy: fc.constantFrom('strict', 'fail-open', 'warn'),
  contentErrorStrategy: fc.constantFrom('strict', 'fail-open'),
  onFailOpen: fc.constant(noop),
  onError: fc.constant(noop),
  onViolation: fc.constant(noop),
  instructions: fc.string(),
  structuredOutputOptions: fc.record({ jsonPromptInjection: fc.boolean() }, { requiredKeys: [] }),
  maxJudgeInputChars: fc.integer({ min: 1, max: 100_000 }),
  maxJudgeCalls: fc.integer({ min: 1, max: 1000 }),
  maxConcurrentJudgeCalls: fc.integer({ min: 1, max: 16 }),
  judgeDeadlineMs: fc.integer({ min: 1, max: MAX_TIMER_MS }),
};

/** Options of the guards that gate their stream. */
const streamOptions: OptionCase[] = [
  { option: 'streamMode', wrong: misspelt(['window', 'final']) },
  { option: 'windowSchedule', wrong: fc.oneof(fc.constant([]), badNumber({ least: 1, most: Number.MAX_SAFE_INTEGER }).map((size) => [50, size]), fc.constant(50), someString, nullish, someObject) },
  { option: 'windowSize', wrong: badNumber({ least: 1, most: Number.MAX_SAFE_INTEGER }) },
  { option: 'channels', wrong: badNameList(guardChannels) },
];

const validStream = {
  streamMode: fc.constantFrom('window', 'final'),
  windowSchedule: fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 5 }),
  windowSize: fc.integer({ min: 1, max: 5000 }),
  channels: subset(guardChannels),
};

const choices = [
  { id: 'fast', model: judgeModel(() => '{}'), description: 'short questions' },
  { id: 'deep', model: 'openai/o3', description: 'reasoning' },
];
const person = z.object({ name: z.string() });
const tool = { description: 'a tool', execute: noop };

const processors: ProcessorCase[] = [
  {
    processorId: 'moderation',
    make: (options) => new ModerationProcessor(options as never),
    base: { model },
    options: [
      ...judgeOptions,
      ...streamOptions,
      { option: 'categories', wrong: badLabels },
      { option: 'threshold', wrong: badProbability },
      { option: 'strategy', wrong: misspelt(['block', 'warn', 'filter']) },
      { option: 'includeScores', wrong: notBoolean },
      { option: 'lastMessageOnly', wrong: notBoolean },
      { option: 'revealJudgeReason', wrong: notBoolean },
      { option: 'chunkWindow', wrong: badNumber({ least: 0, whole: true }) },
    ],
    valid: fc.record(
      { ...validJudge, ...validStream, categories: labels, threshold: fc.double({ min: 0, max: 1, noNaN: true }), strategy: fc.constantFrom('block', 'warn', 'filter'), includeScores: fc.boolean(), lastMessageOnly: fc.boolean(), revealJudgeReason: fc.boolean(), chunkWindow: fc.nat(50) },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'pii-detector',
    make: (options) => new PIIDetector(options as never),
    base: { model },
    options: [
      ...judgeOptions,
      ...streamOptions,
      { option: 'detectionTypes', wrong: badLabels },
      { option: 'threshold', wrong: badProbability },
      { option: 'strategy', wrong: misspelt(['block', 'warn', 'filter', 'redact']) },
      { option: 'redactionMethod', wrong: misspelt(['mask', 'hash', 'remove', 'placeholder']) },
      { option: 'hashKey', wrong: fc.oneof(fc.constant(''), fc.constant(new Uint8Array(0)), someNumber, fc.boolean(), nullish, someObject, someArray) },
      { option: 'preserveFormat', wrong: notBoolean },
      { option: 'includeDetections', wrong: notBoolean },
      { option: 'lastMessageOnly', wrong: notBoolean },
    ],
    valid: fc.record(
      {
        ...validJudge,
        ...validStream,
        detectionTypes: labels,
        threshold: fc.double({ min: 0, max: 1, noNaN: true }),
        strategy: fc.constantFrom('block', 'warn', 'filter', 'redact'),
        redactionMethod: fc.constantFrom('mask', 'hash', 'remove', 'placeholder'),
        hashKey: fc.oneof(fc.string({ minLength: 1 }), fc.uint8Array({ minLength: 1, maxLength: 32 })),
        preserveFormat: fc.boolean(),
        includeDetections: fc.boolean(),
        lastMessageOnly: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'prompt-injection-detector',
    make: (options) => new PromptInjectionDetector(options as never),
    base: { model },
    options: [
      ...judgeOptions,
      { option: 'detectionTypes', wrong: badLabels },
      { option: 'threshold', wrong: badProbability },
      { option: 'strategy', wrong: misspelt(['block', 'warn', 'filter', 'rewrite']) },
      { option: 'includeScores', wrong: notBoolean },
      { option: 'lastMessageOnly', wrong: notBoolean },
      { option: 'revealJudgeReason', wrong: notBoolean },
      { option: 'onDetection', wrong: notFunction },
    ],
    valid: fc.record(
      { ...validJudge, detectionTypes: labels, threshold: fc.double({ min: 0, max: 1, noNaN: true }), strategy: fc.constantFrom('block', 'warn', 'filter', 'rewrite'), includeScores: fc.boolean(), lastMessageOnly: fc.boolean(), revealJudgeReason: fc.boolean(), onDetection: fc.constant(noop) },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'system-prompt-scrubber',
    make: (options) => new SystemPromptScrubber(options as never),
    base: { model },
    options: [
      ...judgeOptions,
      ...streamOptions,
      { option: 'strategy', wrong: misspelt(['block', 'warn', 'filter', 'redact']) },
      { option: 'redactionMethod', wrong: misspelt(['mask', 'placeholder', 'remove']) },
      { option: 'placeholderText', wrong: notString },
      { option: 'includeDetections', wrong: notBoolean },
      { option: 'threshold', wrong: badProbability },
      { option: 'customPatterns', wrong: fc.oneof(fc.constant('INTERNAL-\\d+'), fc.constant(/x/), nullish, someNumber, someObject) },
      { option: 'customPatterns[1]', wrong: fc.oneof(fc.constantFrom('(', '[a-', '*x', '(?<n>a)(?<n>b)'), someNumber, fc.boolean(), nullish, someObject), put: (value) => ({ customPatterns: [/ok/, value] }) },
    ],
    valid: fc.record(
      {
        ...validJudge,
        ...validStream,
        strategy: fc.constantFrom('block', 'warn', 'filter', 'redact'),
        redactionMethod: fc.constantFrom('mask', 'placeholder', 'remove'),
        placeholderText: fc.string(),
        includeDetections: fc.boolean(),
        threshold: fc.double({ min: 0, max: 1, noNaN: true }),
        customPatterns: fc.array(fc.constantFrom(/INTERNAL-\d+/, 'PROMO-\\d+', /x/giu), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'language-detector',
    make: (options) => new LanguageDetector(options as never),
    base: { model, targetLanguages: ['en'] },
    options: [
      ...judgeOptions,
      { option: 'targetLanguages', wrong: badLabels },
      { option: 'threshold', wrong: badProbability },
      { option: 'strategy', wrong: misspelt(['detect', 'translate', 'block', 'warn']) },
      { option: 'preserveOriginal', wrong: notBoolean },
      { option: 'includeDetectionDetails', wrong: notBoolean },
      { option: 'lastMessageOnly', wrong: notBoolean },
      { option: 'minTextLength', wrong: badNumber({ least: 0, whole: true }) },
      { option: 'translationQuality', wrong: misspelt(['speed', 'quality', 'balanced']) },
    ],
    valid: fc.record(
      {
        ...validJudge,
        targetLanguages: fc.subarray(['en', 'de', 'French', 'pt-BR'], { minLength: 1 }),
        threshold: fc.double({ min: 0, max: 1, noNaN: true }),
        strategy: fc.constantFrom('detect', 'translate', 'block', 'warn'),
        preserveOriginal: fc.boolean(),
        includeDetectionDetails: fc.boolean(),
        lastMessageOnly: fc.boolean(),
        minTextLength: fc.nat(1000),
        translationQuality: fc.constantFrom('speed', 'quality', 'balanced'),
      },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'model-selection',
    make: (options) => new ModelSelectionProcessor(options as never),
    base: { model, choices },
    options: [
      ...modelBacked(false),
      { option: 'errorStrategy', wrong: misspelt(['warn', 'strict']) },
      { option: 'choices', wrong: fc.oneof(fc.constant([]), someString, nullish, someObject, someNumber) },
      { option: 'choices[1]', wrong: fc.oneof(someString, someNumber, nullish, fc.boolean()), put: (value) => ({ choices: [choices[0], value] }) },
      { option: 'choices[1].id', wrong: fc.oneof(fc.constantFrom('', ' ', 'fast'), someNumber, nullish, fc.boolean()), put: (value) => ({ choices: [choices[0], { ...choices[1], id: value }] }) },
      { option: 'choices[1].model', wrong: fc.oneof(fc.constant(''), someNumber, nullish, fc.boolean()), put: (value) => ({ choices: [choices[0], { ...choices[1], model: value }] }) },
      { option: 'choices[1].description', wrong: notString, put: (value) => ({ choices: [choices[0], { ...choices[1], description: value }] }) },
      { option: 'defaultChoice', wrong: misspelt(['fast', 'deep']) },
      { option: 'minConfidence', wrong: badProbability },
      { option: 'scope', wrong: misspelt(['run', 'first-step']) },
      { option: 'onDecision', wrong: notFunction },
    ],
    valid: fc.record(
      { errorStrategy: fc.constantFrom('warn', 'strict'), defaultChoice: fc.constantFrom('fast', 'deep'), minConfidence: fc.double({ min: 0, max: 1, noNaN: true }), scope: fc.constantFrom('run', 'first-step'), onDecision: fc.constant(noop), onError: fc.constant(noop), instructions: fc.string() },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'structured-output',
    make: (options) => new StructuredOutputProcessor(options as never),
    base: { model, schema: person },
    options: [
      ...modelBacked(false),
      { option: 'schema', wrong: fc.oneof(someString, someNumber, nullish, fc.constant({}), fc.boolean()) },
      { option: 'errorStrategy', wrong: misspelt(['strict', 'warn', 'fallback']) },
      { option: 'fallbackValue', wrong: fc.oneof(someString, someNumber, nullish, fc.constant({ name: 3 }), fc.constant({})), put: (value) => ({ errorStrategy: 'fallback', fallbackValue: value }) },
      { option: 'fallbackValue', wrong: fc.constant('left out'), put: () => ({ errorStrategy: 'fallback' }) },
    ],
    valid: fc.oneof(
      fc.record({ errorStrategy: fc.constantFrom('strict', 'warn'), instructions: fc.string(), onError: fc.constant(noop) }, { requiredKeys: [] }),
      fc.record({ errorStrategy: fc.constant('fallback'), fallbackValue: fc.oneof(fc.constant(undefined), fc.record({ name: fc.string() })) }),
    ),
  },
  {
    processorId: 'token-limiter',
    make: (options) => new TokenLimiterProcessor(options as never),
    base: { limit: 100, tokenCounter: (text: string) => text.length },
    options: [
      { option: 'limit', wrong: fc.oneof(badNumber({ above: 0 }), fc.constant(undefined)) },
      { option: 'outputLimit', wrong: badNumber({ above: 0 }) },
      { option: 'strategy', wrong: misspelt(['truncate', 'abort']) },
      { option: 'countMode', wrong: misspelt(['cumulative', 'part']) },
      { option: 'tokenCounter', wrong: notFunction },
      { option: 'onViolation', wrong: notFunction },
    ],
    valid: fc.record(
      { limit: fc.double({ min: 1e-6, noNaN: true }), outputLimit: fc.oneof(fc.integer({ min: 1 }), fc.constant(Number.POSITIVE_INFINITY)), strategy: fc.constantFrom('truncate', 'abort'), countMode: fc.constantFrom('cumulative', 'part'), onViolation: fc.constant(noop) },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'regex-filter',
    make: (options) => new RegexFilterProcessor(options as never),
    base: { presets: ['pii'] },
    options: [
      { option: 'strategy', wrong: misspelt(['block', 'redact', 'warn']) },
      { option: 'presets', wrong: misspelt(['pii', 'secrets', 'urls']).filter((value) => !(Array.isArray(value) && value.length === 0)) },
      { option: 'presets', wrong: misspelt(['pii', 'secrets', 'urls']).filter((value) => typeof value === 'string').map((value) => ['pii', value]) },
      { option: 'rules', wrong: fc.oneof(fc.string({ minLength: 1 }), someNumber, fc.boolean(), nullish, someObject), put: (value) => ({ rules: value }) },
      { option: 'rules', wrong: fc.constant([]), put: (value) => ({ presets: undefined, rules: value }) },
      { option: 'rules', wrong: fc.constant(undefined), put: () => ({ presets: [] }) },
      { option: 'rules[0]', wrong: fc.oneof(someString, someNumber, nullish, fc.boolean()), put: (value) => ({ rules: [value] }) },
      { option: 'rules[0].name', wrong: fc.oneof(fc.constantFrom('', '  '), someNumber, nullish, fc.boolean(), someObject, fc.constant(undefined)), put: (value) => ({ rules: [{ name: value, pattern: /x/ }] }) },
      { option: 'rules[0].pattern', wrong: fc.oneof(fc.constantFrom('(', '[a-', '*x', 'a{2,1}'), someNumber, nullish, fc.boolean(), someObject, fc.constant(undefined)), put: (value) => ({ rules: [{ name: 'r', pattern: value }] }) },
      { option: 'rules[0].flags', wrong: fc.oneof(fc.constantFrom('x', 'q', 'ii', 'uv', 'I'), someNumber, nullish, fc.boolean(), someObject), put: (value) => ({ rules: [{ name: 'r', pattern: 'x', flags: value }] }) },
      { option: 'rules[0].flags', wrong: fc.constantFrom('i', 'g', ''), put: (value) => ({ rules: [{ name: 'r', pattern: /x/, flags: value }] }) },
      { option: 'rules[0].replacement', wrong: notString, put: (value) => ({ rules: [{ name: 'r', pattern: /x/, replacement: value }] }) },
      { option: 'rules[0].validate', wrong: notFunction, put: (value) => ({ rules: [{ name: 'r', pattern: /x/, validate: value }] }) },
      { option: 'rules[0].maxMatchLength', wrong: badNumber({ least: 1, whole: true }), put: (value) => ({ rules: [{ name: 'r', pattern: /x/, maxMatchLength: value }] }) },
      { option: 'rules[0].strategy', wrong: misspelt(['block', 'redact', 'warn']), put: (value) => ({ rules: [{ name: 'r', pattern: /x/, strategy: value }] }) },
      { option: 'phase', wrong: misspelt(['input', 'output', 'all']) },
      { option: 'includeRedactedValues', wrong: notBoolean },
      { option: 'normalize', wrong: notBoolean },
      { option: 'streamCarryoverSize', wrong: badNumber({ least: 1, whole: true }) },
      { option: 'channels', wrong: badNameList(regexChannels) },
      { option: 'onViolation', wrong: notFunction },
    ],
    valid: fc.record(
      {
        strategy: fc.constantFrom('block', 'redact', 'warn'),
        presets: fc.oneof(fc.constantFrom('pii', 'secrets', 'urls'), subset(['pii', 'secrets', 'urls'] as const)),
        rules: fc.array(
          fc.record(
            { name: fc.constantFrom('a', 'rule-2'), pattern: fc.constantFrom(/x\d/, 'y+'), replacement: fc.string(), maxMatchLength: fc.integer({ min: 1, max: 500 }), strategy: fc.constantFrom('block', 'redact', 'warn'), validate: fc.constant(() => true) },
            { requiredKeys: ['name', 'pattern'] },
          ),
          { maxLength: 3 },
        ),
        phase: fc.constantFrom('input', 'output', 'all'),
        includeRedactedValues: fc.boolean(),
        normalize: fc.boolean(),
        streamCarryoverSize: fc.integer({ min: 1, max: 4096 }),
        channels: subset(regexChannels),
        onViolation: fc.constant(noop),
      },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'batch-parts',
    make: (options) => new BatchPartsProcessor(options as never),
    base: {},
    options: [
      { option: 'batchSize', wrong: badNumber({ least: 1, whole: true }) },
      { option: 'maxWaitTime', wrong: badNumber({ least: 0 }) },
      { option: 'emitOnNonText', wrong: notBoolean },
      { option: 'scheduler', wrong: fc.oneof(fc.constant({}), fc.constant({ now: 5 }), someString, someNumber, nullish) },
    ],
    valid: fc.record({ batchSize: fc.integer({ min: 1, max: 1000 }), maxWaitTime: fc.oneof(fc.nat(), fc.constant(Number.POSITIVE_INFINITY)), emitOnNonText: fc.boolean(), scheduler: fc.constant(asyncScheduler) }, { requiredKeys: [] }),
  },
  {
    processorId: 'tool-call-filter',
    make: (options) => new ToolCallFilter(options as never),
    base: {},
    options: [
      { option: 'exclude', wrong: fc.oneof(fc.string({ minLength: 1 }), someNumber, nullish, someObject, fc.array(fc.oneof(fc.integer(), nullish), { minLength: 1, maxLength: 3 })) },
      { option: 'preserveCurrentTurn', wrong: notBoolean },
      { option: 'preserveModelOutput', wrong: notBoolean },
      { option: 'filterAfterToolSteps', wrong: badNumber({ least: 0 }) },
    ],
    valid: fc.record({ exclude: fc.array(fc.string(), { maxLength: 3 }), preserveCurrentTurn: fc.boolean(), preserveModelOutput: fc.boolean(), filterAfterToolSteps: fc.nat(20) }, { requiredKeys: [] }),
  },
  {
    processorId: 'tool-search',
    make: (options) => new ToolSearchProcessor(options as never),
    base: { tools: { weather: tool } },
    options: [
      { option: 'tools', wrong: fc.oneof(someString, someNumber, nullish, fc.boolean(), fc.constant(undefined), fc.constant([tool])) },
      { option: 'tools.weather', wrong: fc.oneof(someString, someNumber, nullish, fc.boolean()), put: (value) => ({ tools: { weather: value } }) },
      { option: 'tools.search_tools', wrong: fc.constant(tool), put: (value) => ({ tools: { weather: tool, search_tools: value } }) },
      { option: 'maxResults', wrong: badNumber({ least: 1, whole: true }) },
    ],
    valid: fc.record({ tools: fc.dictionary(fc.constantFrom('a', 'lookup', 'send_mail'), fc.constant(tool)), maxResults: fc.integer({ min: 1, max: 50 }) }, { requiredKeys: [] }),
  },
  {
    processorId: 'unicode-normalizer',
    make: (options) => new UnicodeNormalizer(options as never),
    base: {},
    options: ['stripControlChars', 'preserveEmojis', 'collapseWhitespace', 'trim'].map((option) => ({ option, wrong: notBoolean })),
    valid: fc.record({ stripControlChars: fc.boolean(), preserveEmojis: fc.boolean(), collapseWhitespace: fc.boolean(), trim: fc.boolean() }, { requiredKeys: [] }),
  },
  {
    processorId: 'stream-error-retry-processor',
    make: (options) => new StreamErrorRetryProcessor(options as never),
    base: {},
    options: [
      { option: 'maxRetries', wrong: badNumber({ least: 0, most: Number.MAX_VALUE }) },
      { option: 'delayMs', wrong: badNumber({ least: 0, most: MAX_TIMER_MS }) },
      { option: 'maxRetryAfterMs', wrong: badNumber({ least: 0, most: MAX_TIMER_MS }) },
      { option: 'matchers', wrong: fc.oneof(fc.constant(() => true), someString, someNumber, nullish, someObject) },
      { option: 'matchers[0]', wrong: fc.oneof(someString, someNumber, nullish, fc.constant({}), fc.constant({ match: 'x' })), put: (value) => ({ matchers: [value] }) },
      { option: 'matchers[0].maxRetries', wrong: badNumber({ least: 0, most: Number.MAX_VALUE }), put: (value) => ({ matchers: [{ match: () => true, maxRetries: value }] }) },
      { option: 'matchers[0].delayMs', wrong: badNumber({ least: 0, most: MAX_TIMER_MS }), put: (value) => ({ matchers: [{ match: () => true, delayMs: value }] }) },
      { option: 'matchers[0].onRetry', wrong: notFunction, put: (value) => ({ matchers: [{ match: () => true, onRetry: value }] }) },
      { option: 'retryUnknownErrors', wrong: notBoolean },
      { option: 'scheduler', wrong: fc.oneof(fc.constant({}), fc.constant({ now: () => 0 }), someString, someNumber, nullish) },
      { option: 'onRetry', wrong: notFunction },
    ],
    valid: fc.record(
      {
        maxRetries: fc.nat(10),
        delayMs: fc.oneof(fc.integer({ min: 0, max: MAX_TIMER_MS }), fc.constant(() => 5)),
        maxRetryAfterMs: fc.integer({ min: 0, max: MAX_TIMER_MS }),
        matchers: fc.array(fc.oneof(fc.constant(() => true), fc.record({ match: fc.constant(() => false), maxRetries: fc.nat(5), delayMs: fc.nat(1000), onRetry: fc.constant(noop) }, { requiredKeys: ['match'] })), { maxLength: 3 }),
        retryUnknownErrors: fc.boolean(),
        scheduler: fc.constant(asyncScheduler),
        onRetry: fc.constant(noop),
      },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'response-cache',
    make: (options) => new ResponseCache(options as never),
    base: {},
    options: [
      { option: 'store', wrong: fc.oneof(fc.constant({}), fc.constant({ get: () => undefined }), someString, someNumber, nullish) },
      { option: 'ttlMs', wrong: badNumber({ above: 0 }) },
      { option: 'storeTimeoutMs', wrong: badNumber({ above: 0, most: MAX_TIMER_MS }) },
      { option: 'key', wrong: notFunction },
      { option: 'requestContextKeys', wrong: fc.oneof(fc.string({ minLength: 1 }), someNumber, nullish, someObject, fc.constant([1])) },
      { option: 'onError', wrong: notFunction },
    ],
    valid: fc.record(
      { store: fc.constant(new InMemoryResponseCacheStore()), ttlMs: fc.oneof(fc.integer({ min: 1 }), fc.constant(Number.POSITIVE_INFINITY)), storeTimeoutMs: fc.integer({ min: 1, max: MAX_TIMER_MS }), key: fc.constant(() => 'k'), requestContextKeys: fc.array(fc.string(), { maxLength: 3 }), onError: fc.constant(noop) },
      { requiredKeys: [] },
    ),
  },
  {
    processorId: 'response-cache',
    make: (options) => new InMemoryResponseCacheStore(options as never),
    base: {},
    options: [
      { option: 'maxEntries', wrong: badNumber({ least: 1, whole: true }) },
      { option: 'now', wrong: notFunction },
    ],
    valid: fc.record({ maxEntries: fc.integer({ min: 1, max: 10_000 }), now: fc.constant(() => 0) }, { requiredKeys: [] }),
  },
];

describe('every option of every built-in processor is checked at construction (property-based)', () => {
  for (const processor of processors) {
    const label = `${processor.processorId}${processor.make.toString().includes('InMemoryResponseCacheStore') ? ' (InMemoryResponseCacheStore)' : ''}`;
    describe(label, () => {
      for (const { option, wrong, put } of processor.options) {
        it(`a wrong ${option} is an InvalidProcessorOptionError naming ${processor.processorId} and ${option}`, () => {
          fc.assert(
            fc.property(wrong, (value) => {
              expectOptionError(() => processor.make({ ...processor.base, ...(put === undefined ? { [option]: value } : put(value)) }), processor.processorId, option);
            }),
            { numRuns: RUNS },
          );
        });
      }

      it('valid options construct', () => {
        fc.assert(
          fc.property(processor.valid, (options) => {
            expect(() => processor.make({ ...processor.base, ...options })).not.toThrow();
          }),
          { numRuns: RUNS },
        );
      });
    });
  }

  it('the prefill error handler takes no options', () => {
    expect(new PrefillErrorHandler().id).toBe('prefill-error-handler');
  });

  it('the error is no TypeError: it is an RxAgentError with the processor, the option and the value', () => {
    const error = expectOptionError(() => new TokenLimiterProcessor({ limit: Number.NaN }), 'token-limiter', 'limit');
    expect(error).toBeInstanceOf(InvalidProcessorOptionError);
    expect(error).not.toBeInstanceOf(TypeError);
    expect(Number.isNaN(error.value)).toBe(true);
  });
});

// ---- values that cannot be read, anywhere inside the options ----

type Path = ReadonlyArray<string | number>;

/** Arrays and objects of `Object.prototype` (or none): the option data the tests build, looked into for positions. */
function isPlainData(value: unknown): value is Record<string | number, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return Array.isArray(value) || prototype === Object.prototype || prototype === null;
}

/** Every position in `options`: each value (at any depth of its arrays and plain objects), one past each array's end, and a new key of each object. */
function positionsOf(options: Options): Path[] {
  const found: Path[] = [];
  const walk = (value: unknown, path: Path, depth: number): void => {
    if (!isPlainData(value) || depth > 4) return;
    const keys = Array.isArray(value) ? value.map((_, index) => index) : Object.keys(value);
    for (const key of keys) {
      found.push([...path, key]);
      walk(value[key], [...path, key], depth + 1);
    }
    found.push([...path, Array.isArray(value) ? value.length : 'extra']);
  };
  walk(options, [], 0);
  return found;
}

/** `options` with copies of the arrays and plain objects along `path`, and `place` called on the copy holding its last key. */
function placedAt(options: Options, path: Path, place: (holder: Record<string | number, unknown>, key: string | number) => void): Options {
  const copy = (value: unknown) => (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  const root = copy(options);
  let holder = root;
  for (const key of path.slice(0, -1)) {
    holder[key] = copy(holder[key]);
    holder = holder[key] as Record<string | number, unknown>;
  }
  place(holder, path[path.length - 1]!);
  return root as Options;
}

const hostileKinds = ['a Proxy whose traps throw', 'a revoked Proxy', 'a Proxy posing as an Error', 'a plain-looking Proxy whose reads throw', 'a throwing getter'] as const;

function putHostile(kind: (typeof hostileKinds)[number], holder: Record<string | number, unknown>, key: string | number): void {
  const throwing = () => {
    throw new Error('hostile read');
  };
  switch (kind) {
    case 'a Proxy whose traps throw':
      holder[key] = throwingProxy();
      return;
    case 'a revoked Proxy':
      holder[key] = revokedProxy();
      return;
    case 'a Proxy posing as an Error':
      holder[key] = errorPosingProxy();
      return;
    case 'a plain-looking Proxy whose reads throw':
      holder[key] = new Proxy(Array.isArray(holder) ? ['x'] : { name: 'x' }, { get: throwing });
      return;
    default:
      Object.defineProperty(holder, key, { get: throwing, enumerable: true, configurable: true });
  }
}

const pathName = (path: Path) => path.map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${key}`)).join('');

describe('a value that cannot be read, anywhere inside valid options, is an InvalidProcessorOptionError naming where (property-based)', () => {
  for (const processor of processors) {
    const label = `${processor.processorId}${processor.make.toString().includes('InMemoryResponseCacheStore') ? ' (InMemoryResponseCacheStore)' : ''}`;
    it(`${label}: constructs, or refuses naming the position or one above it — never another error`, () => {
      const placed = processor.valid.chain((valid) => {
        const options = { ...processor.base, ...valid };
        return fc.record({ options: fc.constant(options), path: fc.constantFrom(...positionsOf(options)), kind: fc.constantFrom(...hostileKinds) });
      });
      fc.assert(
        fc.property(placed, ({ options, path, kind }) => {
          const where = pathName(path);
          let thrown: unknown;
          try {
            processor.make(placedAt(options, path, (holder, key) => putHostile(kind, holder, key)));
            return;
          } catch (error) {
            thrown = error;
          }
          if (!InvalidProcessorOptionError.isInstance(thrown)) throw new Error(`${kind} at ${where}: threw ${thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : typeof thrown}`);
          const { option } = thrown;
          const top = String(path[0]);
          const named = option === top || option.startsWith(`${top}.`) || option.startsWith(`${top}[`);
          if (!named || !where.startsWith(option)) throw new Error(`${kind} at ${where}: the error names ${option}`);
        }),
        { numRuns: 200 },
      );
    });
  }

  it('names the entry: a Proxy or revoked Proxy in rules, matchers, choices, channels, detectionTypes; a throwing getter on a rule (each was a plain Error or TypeError from deep inside the constructor)', () => {
    const throwing = () => {
      throw new Error('hostile read');
    };
    const ruleWithGetter = Object.defineProperty({ name: 'r' }, 'pattern', { get: throwing, enumerable: true });
    const cases: Array<[string, () => unknown, string, string]> = [
      ['rules[1]: a revoked Proxy', () => new RegexFilterProcessor({ rules: [{ name: 'a', pattern: /a/ }, revokedProxy()] as never }), 'regex-filter', 'rules[1]'],
      ['rules[0].pattern: a throwing getter', () => new RegexFilterProcessor({ rules: [ruleWithGetter] as never }), 'regex-filter', 'rules[0].pattern'],
      ['matchers[1]: a Proxy whose traps throw', () => new StreamErrorRetryProcessor({ matchers: [() => true, throwingProxy()] as never }), 'stream-error-retry-processor', 'matchers[1]'],
      ['choices[1]: a Proxy posing as an Error', () => new ModelSelectionProcessor({ model, choices: [choices[0]!, errorPosingProxy()] as never }), 'model-selection', 'choices[1]'],
      ['channels[0]: a revoked Proxy', () => new ModerationProcessor({ model, channels: [revokedProxy()] as never }), 'moderation', 'channels[0]'],
      ['detectionTypes[1]: a Proxy whose traps throw', () => new PIIDetector({ model, detectionTypes: ['email', throwingProxy()] as never }), 'pii-detector', 'detectionTypes[1]'],
      ['detectionTypes: an array Proxy whose reads throw', () => new PIIDetector({ model, detectionTypes: new Proxy(['email'], { get: throwing }) as never }), 'pii-detector', 'detectionTypes'],
    ];
    for (const [what, make, processorId, option] of cases) {
      let thrown: unknown;
      try {
        make();
      } catch (error) {
        thrown = error;
      }
      expect(InvalidProcessorOptionError.isInstance(thrown), `${what}: ${String(thrown)}`).toBe(true);
      expect(thrown, what).toMatchObject({ processorId, option });
    }
  });
});
