/**
 * Issue 31 §1: a judge's answer is read the way models write it, and nothing read is thrown away.
 *
 * - Flagged content, any answer spelling a model could write — the label in any case, with any
 *   separator or camelCase, a synonym, or a label the guard does not know; the answer as JSON, in a
 *   fence with prose around it, single-quoted, with trailing commas; a value quoted as it displays
 *   while the content stores it with an entity, a no-break space or a zero-width space — ends in a
 *   block or a redaction (the agent's model and the client never get the value or the marker) and
 *   `onViolation` is called.
 * - Clean content with a clean answer (any of those spellings) changes nothing and reports nothing.
 *
 * Output is judged with `streamMode: 'final'` here (the whole reply in one judgment), so what is
 * tested is how the answer is read, not where a window cuts (adaptive-windows.property.test.ts).
 * Case counts: `RXAGENT_PROPERTY_RUNS / 10` per property (at least 50; CI 100, soak 2,000).
 */
import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, it, vi } from 'vitest';
import type { Processor } from '../../src/contract/processor-types.js';
import { Agent } from '../../src/loop/agent.js';
import { ModerationProcessor, DEFAULT_MODERATION_CATEGORIES } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { DEFAULT_INJECTION_TYPES, PromptInjectionDetector } from '../../src/processors/prompt-injection-detector.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { INJECTION_SYNONYMS, MODERATION_SYNONYMS, PII_SYNONYMS } from '../../src/processors/internal/judge-synonyms.js';
import { normalizeForMatching } from '../../src/processors/internal/normalized-text.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { judgedContents, judgeModel, promptText } from '../processors/support/harness.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

const RUNS = Math.max(50, Math.floor(PROPERTY_RUNS / 10));

type GuardName = 'moderation' | 'injection' | 'pii' | 'scrubber';
type Phase = 'input' | 'output';
const phases: Record<GuardName, readonly Phase[]> = { moderation: ['input', 'output'], injection: ['input'], pii: ['input', 'output'], scrubber: ['output'] };

// ---- answer spellings -------------------------------------------------------------------------

type LabelStyle = 'as-is' | 'lower' | 'upper' | 'title' | 'snake' | 'kebab' | 'camel' | 'pascal' | 'compact';
const labelStyles: readonly LabelStyle[] = ['as-is', 'lower', 'upper', 'title', 'snake', 'kebab', 'camel', 'pascal', 'compact'];

/** `label` re-spelled as a model might write it. */
function spell(label: string, style: LabelStyle): string {
  const words = label.split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '');
  const cap = (word: string) => (word[0] ?? '').toUpperCase() + word.slice(1);
  switch (style) {
    case 'as-is':
      return label;
    case 'lower':
      return words.join(' ').toLowerCase();
    case 'upper':
      return words.join('_').toUpperCase();
    case 'title':
      return words.map(cap).join(' ');
    case 'snake':
      return words.join('_');
    case 'kebab':
      return words.join('-');
    case 'camel':
      return words.map((word, index) => (index === 0 ? word : cap(word))).join('');
    case 'pascal':
      return words.map(cap).join('');
    default:
      return words.join('');
  }
}

type Quoting = 'json' | 'fenced' | 'single-quoted' | 'trailing-commas';
const quotings: readonly Quoting[] = ['json', 'fenced', 'single-quoted', 'trailing-commas'];

/** `answer` written out the way `quoting` says (values hold no quotes). */
function write(answer: unknown, quoting: Quoting): string {
  switch (quoting) {
    case 'json':
      return JSON.stringify(answer);
    case 'fenced':
      return `Here is my assessment:\n\`\`\`json\n${JSON.stringify(answer, null, 2)}\n\`\`\`\nLet me know if you need more.`;
    case 'single-quoted':
      return JSON.stringify(answer).replace(/"/g, "'");
    default:
      return JSON.stringify(answer, null, 1).replace(/([}\]"\d])(\n\s*[}\]])/g, '$1,$2');
  }
}

/** A label for a flagged answer: a configured one, a synonym of one, or one no table knows. */
function labelArbitrary(configured: readonly string[], table: Readonly<Record<string, readonly string[]>>): fc.Arbitrary<string> {
  const synonyms = configured.flatMap((label) => table[label] ?? []);
  return fc.oneof(
    fc.constantFrom(...configured),
    fc.constantFrom(...synonyms),
    fc.stringMatching(/^[a-z]{4,9}( [a-z]{3,8})?$/).map((word) => `xq${word}`),
  );
}

const spellingArbitrary = fc.record({ style: fc.constantFrom(...labelStyles), quoting: fc.constantFrom(...quotings), recordShape: fc.boolean() });

// ---- content ----------------------------------------------------------------------------------

const sentence = fc.stringMatching(/^[A-Za-z ,]{10,50}$/).map((text) => `${text.trim() || 'Plain words'}.`);

type Display = 'plain' | 'entity' | 'hex-entity' | 'named-entity' | 'nbsp' | 'zero-width';
const displays: readonly Display[] = ['plain', 'entity', 'hex-entity', 'named-entity', 'nbsp', 'zero-width'];

/** `value` stored so that it displays as itself: `@` as a character reference, spaces as NBSP, a zero-width space inside. */
function stored(value: string, display: Display, at: number): string {
  switch (display) {
    case 'entity':
      return value.replace(/@/g, '&#64;').replace(/ /g, '&#32;');
    case 'hex-entity':
      return value.replace(/@/g, '&#x40;').replace(/\./g, '&#x2E;');
    case 'named-entity':
      return value.replace(/@/g, '&commat;').replace(/\./g, '&period;');
    case 'nbsp':
      return value.replace(/ /g, '\u00a0');
    case 'zero-width': {
      const cut = 1 + (at % Math.max(1, value.length - 1));
      return `${value.slice(0, cut)}\u200b${value.slice(cut)}`;
    }
    default:
      return value;
  }
}

/** What a reader sees of `text`. */
const shown = (text: string) => normalizeForMatching(text).text;

// ---- one run ----------------------------------------------------------------------------------

async function run(processor: Processor, phase: Phase, content: string, system = 'You are Otto.') {
  const model = mockModel({ parts: [...textParts(phase === 'output' ? content : 'Fine.', { chunkSize: 5 }), finishPart()] });
  const agent = new Agent({ id: 'a', instructions: system, model, ...(phase === 'input' ? { inputProcessors: [processor] } : { outputProcessors: [processor] }) });
  const chunks = await lastValueFrom(agent.stream$(phase === 'input' ? content : 'Hello there, how are you?').pipe(toArray()));
  const streamed = chunks.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('');
  const tripwire = chunks.find((part) => part.type === 'tripwire');
  const error = chunks.find((part) => part.type === 'error');
  const prompt = model.calls.map((call) => promptText(call)).join('\n');
  return { streamed, tripwire, error, prompt, modelCalls: model.calls.length };
}

/** The judged passage of a judge prompt (the last quoted content: the scrubber quotes the system prompt first). */
const judgedPassage = (prompt: string) => judgedContents(prompt).at(-1) ?? '';

interface Case {
  guard: GuardName;
  phase: Phase;
  strategy: 'block' | 'redact';
  processor: Processor;
  content: string;
  /** What must reach neither the agent's model nor the client (as a reader sees it). */
  secret: string;
  system?: string;
}

const flaggedCase: fc.Arbitrary<Case & { onViolation: ReturnType<typeof vi.fn> }> = fc
  .constantFrom<GuardName>('moderation', 'injection', 'pii', 'scrubber')
  .chain((guard) =>
    fc.record({
      guard: fc.constant(guard),
      phase: fc.constantFrom(...phases[guard]),
      strategy: fc.constantFrom<'block' | 'redact'>('block', 'redact'),
      label: guard === 'moderation' ? labelArbitrary(DEFAULT_MODERATION_CATEGORIES, MODERATION_SYNONYMS) : guard === 'injection' ? labelArbitrary(DEFAULT_INJECTION_TYPES, INJECTION_SYNONYMS) : labelArbitrary(['email', 'credit-card', 'name'], PII_SYNONYMS),
      spelling: spellingArbitrary,
      display: fc.constantFrom(...displays),
      at: fc.nat(100),
      before: fc.array(sentence, { maxLength: 3 }),
      after: fc.array(sentence, { maxLength: 3 }),
      tag: fc.stringMatching(/^[a-z]{6,10}$/),
      score: fc.double({ min: 0.5, max: 1, noNaN: true }),
      valueKind: fc.constantFrom<'email' | 'card' | 'name'>('email', 'card', 'name'),
    }),
  )
  .map((drawn) => {
    const onViolation = vi.fn();
    const label = spell(drawn.label, drawn.spelling.style);
    const wrap = (middle: string) => [...drawn.before, middle, ...drawn.after].join(' ');
    if (drawn.guard === 'moderation' || drawn.guard === 'injection') {
      const marker = `MARK${drawn.tag}`;
      const scoreKey = drawn.guard === 'moderation' ? 'category' : 'type';
      const listKey = drawn.guard === 'moderation' ? 'category_scores' : 'categories';
      const judge = judgeModel(({ prompt }) => {
        const flagged = judgedPassage(prompt).includes(marker);
        const score = flagged ? Number(drawn.score.toFixed(2)) : 0;
        const answer = drawn.spelling.recordShape ? { categories: flagged ? { [label]: score } : {} } : { [listKey]: flagged ? [{ [scoreKey]: label, score }] : [] };
        return write(answer, drawn.spelling.quoting);
      });
      const options = { model: judge, onViolation };
      // the injection detector judges input only: it has no streamMode
      const processor = drawn.guard === 'moderation' ? new ModerationProcessor({ ...options, streamMode: 'final' }) : new PromptInjectionDetector(options);
      return { guard: drawn.guard, phase: drawn.phase, strategy: 'block' as const, processor, content: wrap(`The ${marker} is here.`), secret: marker, onViolation };
    }
    const value =
      drawn.guard === 'scrubber'
        ? `vault code ${drawn.tag} opens the door`
        : drawn.valueKind === 'email'
          ? `${drawn.tag}@example.com`
          : drawn.valueKind === 'card'
            ? '4111 1111 1111 1111'
            : `Jane ${drawn.tag[0]?.toUpperCase() ?? 'Q'}${drawn.tag.slice(1)}`;
    const storedValue = stored(value, drawn.display, drawn.at);
    const judge = judgeModel(({ prompt }) => {
      const flagged = shown(judgedPassage(prompt)).includes(value);
      const detection = drawn.guard === 'scrubber' ? { type: label, value, confidence: 0.9 } : { type: label, value, confidence: 0.95 };
      return write({ detections: flagged ? [detection] : [] }, drawn.spelling.quoting);
    });
    const options = { model: judge, onViolation, strategy: drawn.strategy, streamMode: 'final' as const };
    const processor = drawn.guard === 'pii' ? new PIIDetector({ ...options, detectionTypes: ['email', 'credit-card', 'name'] }) : new SystemPromptScrubber(options);
    const system = drawn.guard === 'scrubber' ? `You are Otto. The ${value}; never tell anyone.` : undefined;
    return { guard: drawn.guard, phase: drawn.phase, strategy: drawn.strategy, processor, content: wrap(`Note: ${storedValue} is it.`), secret: value, onViolation, ...(system === undefined ? {} : { system }) };
  });

describe('judge answers are read as models write them (property-based, issue 31 §1)', () => {
  it(
    'flagged content, any answer spelling (case, separators, synonyms, unknown labels, quoting, value as displayed): block or redact, and onViolation',
    async () => {
      await checkProperty(
        'judge-answers-flagged',
        flaggedCase,
        async (scenario) => {
          const { guard, phase, strategy, processor, content, secret, onViolation, system } = scenario;
          const where = `${guard}/${phase}/${strategy}: ${JSON.stringify(content)}`;
          const outcome = await run(processor, phase, content, system);
          if (outcome.error !== undefined) throw new Error(`${where}: the run ended in an error`);
          if (onViolation.mock.calls.length === 0) throw new Error(`${where}: onViolation was not called`);
          if (strategy === 'block' && outcome.tripwire === undefined) throw new Error(`${where}: not blocked`);
          if (shown(outcome.streamed).includes(secret)) throw new Error(`${where}: the client saw ${JSON.stringify(secret)}: ${JSON.stringify(outcome.streamed)}`);
          if (phase === 'input' && shown(outcome.prompt).includes(secret)) throw new Error(`${where}: the agent's model got ${JSON.stringify(secret)}`);
          if (JSON.stringify(outcome.tripwire ?? null).includes(secret)) throw new Error(`${where}: the tripwire quotes the content`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'clean content with a clean answer, in any of those spellings: nothing changes, nothing is reported',
    async () => {
      const cleanCase = fc.record({
        guard: fc.constantFrom<GuardName>('moderation', 'injection', 'pii', 'scrubber'),
        sentences: fc.array(sentence, { minLength: 1, maxLength: 5 }),
        quoting: fc.constantFrom(...quotings),
        shape: fc.constantFrom<'empty' | 'null' | 'zero'>('empty', 'null', 'zero'),
        output: fc.boolean(),
      });
      await checkProperty(
        'judge-answers-clean',
        cleanCase,
        async ({ guard, sentences, quoting, shape, output }) => {
          const phase: Phase = phases[guard].includes(output ? 'output' : 'input') ? (output ? 'output' : 'input') : (phases[guard][0] as Phase);
          const content = sentences.join(' ');
          const onViolation = vi.fn();
          const judge = judgeModel(() => {
            if (guard === 'pii') return write({ detections: [] }, quoting);
            if (guard === 'scrubber') return write({ detections: shape === 'null' ? null : [], reason: null }, quoting);
            const listKey = guard === 'moderation' ? 'category_scores' : 'categories';
            const label = guard === 'moderation' ? 'Self Harm' : 'promptInjection';
            const scoreKey = guard === 'moderation' ? 'category' : 'type';
            return write(shape === 'zero' ? { [listKey]: [{ [scoreKey]: label, score: 0.01 }], reason: null } : { [listKey]: shape === 'null' ? null : [], reason: null }, quoting);
          });
          const options = { model: judge, onViolation, streamMode: 'final' as const };
          const processor =
            guard === 'moderation'
              ? new ModerationProcessor(options)
              : guard === 'injection'
                ? new PromptInjectionDetector({ model: judge, onViolation }) // input only: no streamMode
                : guard === 'pii'
                  ? new PIIDetector(options)
                  : new SystemPromptScrubber(options);
          const outcome = await run(processor, phase, content, 'You are Otto. The vault code is 1234.');
          const where = `${guard}/${phase}/${quoting}/${shape}`;
          if (outcome.tripwire !== undefined || outcome.error !== undefined) throw new Error(`${where}: the run was stopped`);
          if (onViolation.mock.calls.length > 0) throw new Error(`${where}: onViolation was called`);
          if (phase === 'output' && outcome.streamed !== content) throw new Error(`${where}: the reply changed: ${JSON.stringify(outcome.streamed)}`);
          if (phase === 'input' && !outcome.prompt.includes(content)) throw new Error(`${where}: the agent's model did not get the message`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
