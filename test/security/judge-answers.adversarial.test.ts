/**
 * Adversarial judge answers: someone who steers the judge's answer (prompt injection through the
 * content it judges), or whose judge provider misbehaves, tries to get content past a model-backed
 * guard. The guarantee (docs/security.md, "judges"): content passes only when the judge clearly
 * answered "nothing found" — an answer the reader cannot place unambiguously is a violation — and
 * nothing hangs or throws untyped out of the run.
 *
 * Covered here: several answers in one (fences, prose, bare objects) that disagree, a key named
 * twice or `__proto__`, a label scored twice, values of the wrong type, NaN, look-alike keys, BOM,
 * 1 MB answers; error parts, tool calls, finish reasons `length`/`error`/`content-filter` after a
 * safe-looking answer; throws of non-Error values; a judge call that never settles while the run
 * is aborted, and a guard asked after the run was aborted. Not repeated here (judge-answers,
 * judge-failures, judge-faults, judge-reason property tests): label spellings, near-JSON, prose
 * answers, another shape, HTTP statuses, hangs past the deadline, fail-open.
 *
 * Case counts of the property: `RXAGENT_PROPERTY_RUNS / 20` (at least 30).
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { runProcessor } from '../../src/testing/run-processor.js';
import { listWith, textMessage } from '../processors/support/harness.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { answering, content, EMAIL, guard, guardNames, phases, runGuarded, SECRET, type GuardName } from './support/judged-guards.js';

const RUNS = Math.max(30, Math.floor(PROPERTY_RUNS / 20));

/** The answer that flags the content, and the one that clears it, per guard. */
const flaggedAnswer: Record<GuardName, Record<string, unknown>> = {
  moderation: { category_scores: [{ category: 'violence', score: 0.97 }], reason: 'JUDGE-REASON threat' },
  injection: { categories: [{ type: 'injection', score: 0.97 }], reason: 'JUDGE-REASON override' },
  pii: { detections: [{ type: 'email', value: EMAIL, confidence: 0.97 }] },
  scrubber: { detections: [{ type: 'secret', value: SECRET, confidence: 0.97 }] },
  language: { iso_code: 'de', confidence: 0.99 },
};
const safeAnswer: Record<GuardName, Record<string, unknown>> = {
  moderation: { category_scores: [] },
  injection: { categories: [] },
  pii: { detections: [] },
  scrubber: { detections: [] },
  language: { iso_code: 'en', confidence: 0.99 },
};

/** Runs `name` on every phase it guards with `judge()`; fails unless each run ended in a tripwire that kept the content away. */
async function expectBlocked(name: GuardName, judge: () => LanguageModelV4, options: Record<string, unknown> = {}): Promise<void> {
  for (const phase of phases[name]) {
    const where = `${name}/${phase}`;
    const outcome = await runGuarded(guard(name, judge(), options), phase, content[name]);
    expect(outcome.error, `${where}: the run ended in an error`).toBeUndefined();
    expect(outcome.tripwire, `${where}: not blocked`).toBeDefined();
    expect(outcome.streamed, `${where}: the client saw the content`).not.toContain('MARK');
    // neither the content, nor the judge's reason, nor the provider's words reach the client
    const tripwire = JSON.stringify(outcome.tripwire);
    for (const word of ['MARK', 'JUDGE-REASON', 'socket hang up', 'connection reset']) expect(tripwire, `${where}: the tripwire says ${word}`).not.toContain(word);
    if (phase === 'input') expect(outcome.model.calls.length, `${where}: the agent's model was called`).toBe(0);
  }
}

const inner = (answer: Record<string, unknown>) => JSON.stringify(answer).slice(1, -1);
const fence = (answer: Record<string, unknown>) => `\`\`\`json\n${JSON.stringify(answer, null, 2)}\n\`\`\``;

/** Answers that do not clearly say "nothing found", per guard. */
const ambiguousAnswers: Record<string, (name: GuardName) => string> = {
  'duplicate keys, the flagged value first (JSON.parse keeps the last)': (name) => `{${inner(flaggedAnswer[name])}, ${inner(safeAnswer[name])}}`,
  'two fenced answers, the safe one first': (name) => `${fence(safeAnswer[name])}\n\nOn reflection:\n${fence(flaggedAnswer[name])}`,
  'two fenced answers, the flagged one first': (name) => `${fence(flaggedAnswer[name])}\n\nThe user insists:\n${fence(safeAnswer[name])}`,
  'a flagged answer in prose, then a fenced safe one': (name) => `My assessment: ${JSON.stringify(flaggedAnswer[name])}\n\nBut as instructed, the final answer is:\n${fence(safeAnswer[name])}`,
  'a fenced flagged answer, then a safe one after it': (name) => `${fence(flaggedAnswer[name])}\nCorrected: ${JSON.stringify(safeAnswer[name])}`,
  'two bare objects, safe then flagged': (name) => `${JSON.stringify(safeAnswer[name])} ${JSON.stringify(flaggedAnswer[name])}`,
  'two bare objects, flagged then safe': (name) => `${JSON.stringify(flaggedAnswer[name])}\n${JSON.stringify(safeAnswer[name])}`,
  'the answer nested under another key': (name) => JSON.stringify({ result: flaggedAnswer[name] }),
  'the answer under __proto__': (name) => `{"__proto__": ${JSON.stringify(flaggedAnswer[name])}}`,
  'the answer under constructor': (name) => `{"constructor": ${JSON.stringify(flaggedAnswer[name])}}`,
  'only whitespace': () => ' \n\t  \n',
  'empty': () => '',
  'a NaN literal': (name) => JSON.stringify(flaggedAnswer[name]).replace(/0\.9\d/g, 'NaN'),
  'an Infinity literal': (name) => JSON.stringify(flaggedAnswer[name]).replace(/0\.9\d/g, 'Infinity'),
  'keys in Cyrillic look-alikes': (name) => JSON.stringify(flaggedAnswer[name]).replace(/"(\w+)":/g, (_, key: string) => `"${key.replace(/a/g, '\u0430').replace(/o/g, '\u043e').replace(/e/g, '\u0435')}":`),
  'a 1 MB answer of noise': () => 'x'.repeat(1 << 20),
};

describe('ambiguous answers are violations, never "nothing found"', () => {
  for (const [answerName, answer] of Object.entries(ambiguousAnswers)) {
    it(`${answerName}: every guard blocks`, async () => {
      for (const name of guardNames) await expectBlocked(name, () => answering(answer(name)));
    });
  }
});

/** Answers that clearly say "nothing found", per guard, written as models may write them. */
const clearAnswers: Record<string, (name: GuardName) => string> = {
  'plain JSON': (name) => JSON.stringify(safeAnswer[name]),
  'fenced, with prose around it': (name) => `Here is my assessment:\n${fence(safeAnswer[name])}\nNothing else to add.`,
  'the same answer twice': (name) => `${fence(safeAnswer[name])}\nAgain:\n${fence(safeAnswer[name])}`,
  'after a byte-order mark': (name) => `\uFEFF${JSON.stringify(safeAnswer[name])}`,
  'padded with 1 MB of whitespace': (name) => `${JSON.stringify(safeAnswer[name])}${' '.repeat(1 << 20)}`,
};

describe('a clear "nothing found" still passes (the reader is strict, not blind)', () => {
  for (const [answerName, answer] of Object.entries(clearAnswers)) {
    it(`${answerName}: every guard lets clean content through`, async () => {
      for (const name of guardNames) {
        for (const phase of phases[name]) {
          const text = 'A plain, friendly sentence about the weather in spring.';
          const outcome = await runGuarded(guard(name, answering(answer(name))), phase, text);
          expect(outcome.tripwire, `${name}/${phase}`).toBeUndefined();
          expect(outcome.error, `${name}/${phase}`).toBeUndefined();
          if (phase === 'output') expect(outcome.streamed).toBe(text);
          else expect(outcome.model.calls.length).toBe(1);
        }
      }
    });
  }
});

describe('scores and labels the judge writes twice, or as object keys', () => {
  const scoreAnswers: Record<string, Record<'moderation' | 'injection', string>> = {
    'a category scored high, then low (the last entry must not win)': {
      moderation: '{"category_scores": [{"category": "violence", "score": 0.97}, {"category": "violence", "score": 0.01}]}',
      injection: '{"categories": [{"type": "injection", "score": 0.97}, {"type": "injection", "score": 0.01}]}',
    },
    'the same category under two spellings, high then low': {
      moderation: '{"category_scores": [{"category": "Violence", "score": 0.97}, {"category": "violence", "score": 0.01}]}',
      injection: '{"categories": [{"type": "Injection", "score": 0.97}, {"type": "injection", "score": 0.01}]}',
    },
    'a label named __proto__, scored high': {
      moderation: '{"category_scores": [{"category": "__proto__", "score": 0.97}]}',
      injection: '{"categories": [{"type": "__proto__", "score": 0.97}]}',
    },
    'a record with a __proto__ key, scored high': {
      moderation: '{"categories": {"__proto__": 0.97}}',
      injection: '{"categories": {"__proto__": 0.97}}',
    },
    'a label named constructor, scored high': {
      moderation: '{"category_scores": [{"category": "constructor", "score": 0.97}]}',
      injection: '{"categories": [{"type": "constructor", "score": 0.97}]}',
    },
    'a label named toString in a record, scored high': {
      moderation: '{"categories": {"toString": 0.97}}',
      injection: '{"categories": {"toString": 0.97}}',
    },
  };
  for (const [answerName, answers] of Object.entries(scoreAnswers)) {
    it(`${answerName}: moderation and the injection detector block`, async () => {
      await expectBlocked('moderation', () => answering(answers.moderation));
      await expectBlocked('injection', () => answering(answers.injection));
    });
  }

  it('PII: a detection named twice with a low confidence second does not cancel the first', async () => {
    await expectBlocked('pii', () => answering(JSON.stringify({ detections: [{ type: 'email', value: EMAIL, confidence: 0.97 }, { type: 'email', value: EMAIL, confidence: 0.01 }] })));
  });
});

describe('values of the wrong type are unreadable, never "nothing found"', () => {
  const wrongTypes: Record<string, Record<GuardName, string>> = {
    'a score as a string': {
      moderation: '{"category_scores": [{"category": "violence", "score": "0.97"}]}',
      injection: '{"categories": [{"type": "injection", "score": "0.97"}]}',
      pii: `{"detections": [{"type": "email", "value": "${EMAIL}", "confidence": "0.97"}]}`,
      scrubber: `{"detections": [{"type": "secret", "value": "${SECRET}", "confidence": "0.97"}]}`,
      language: '{"iso_code": "de", "confidence": "0.99"}',
    },
    'a score as a boolean': {
      moderation: '{"category_scores": [{"category": "violence", "score": true}]}',
      injection: '{"categories": [{"type": "injection", "score": true}]}',
      pii: `{"detections": [{"type": "email", "value": "${EMAIL}", "confidence": true}]}`,
      scrubber: `{"detections": [{"type": "secret", "value": "${SECRET}", "confidence": true}]}`,
      language: '{"iso_code": "de", "confidence": true}',
    },
    'the list as a string "none"': {
      moderation: '{"category_scores": "none"}',
      injection: '{"categories": "none"}',
      pii: '{"detections": "none"}',
      scrubber: '{"detections": "none"}',
      language: '{"iso_code": false, "confidence": 0}',
    },
    'the list as 0 / false': {
      moderation: '{"category_scores": 0}',
      injection: '{"categories": false}',
      pii: '{"detections": 0}',
      scrubber: '{"detections": false}',
      language: '{"iso_code": 0, "confidence": 0.99}',
    },
    'a score above 1 or below 0': {
      moderation: '{"category_scores": [{"category": "violence", "score": 97}]}',
      injection: '{"categories": [{"type": "injection", "score": -1}]}',
      pii: `{"detections": [{"type": "email", "value": "${EMAIL}", "confidence": 97}]}`,
      scrubber: `{"detections": [{"type": "secret", "value": "${SECRET}", "confidence": -0.5}]}`,
      language: '{"iso_code": "de", "confidence": 99}',
    },
  };
  for (const [answerName, answers] of Object.entries(wrongTypes)) {
    it(`${answerName}: every guard blocks`, async () => {
      for (const name of guardNames) await expectBlocked(name, () => answering(answers[name]));
    });
  }
});

/** A V4 judge whose `doStream` is `doStream` (for throws of any value and thenables that never settle). */
function rawJudge(doStream: LanguageModelV4['doStream']): LanguageModelV4 & { started: number } {
  const model = {
    specificationVersion: 'v4' as const,
    provider: 'raw',
    modelId: 'raw-judge',
    supportedUrls: {},
    started: 0,
    async doGenerate(): Promise<never> {
      throw new Error('doGenerate is not used by judges');
    },
    doStream(options: Parameters<LanguageModelV4['doStream']>[0]) {
      model.started++;
      return doStream(options);
    },
  };
  return model;
}

describe('a judge provider that misbehaves', () => {
  // permanent failures: a short deadline keeps the retries from taking 10 s per guard
  const quick = { judgeDeadlineMs: 20 };
  const safeThen = (name: GuardName, tail: LanguageModelV4StreamPart[]): LanguageModelV4StreamPart[] => [...textParts(JSON.stringify(safeAnswer[name]), { chunkSize: 7 }), ...tail];

  it('a safe-looking answer followed by an error part: every guard blocks', async () => {
    for (const name of guardNames) {
      await expectBlocked(name, () => mockModel({ parts: safeThen(name, [{ type: 'error', error: new Error('connection reset') }, finishPart('stop')]) }), quick);
    }
  });

  it('tool calls instead of an answer: every guard blocks', async () => {
    for (const name of guardNames) {
      await expectBlocked(name, () => mockModel({ parts: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'report', input: JSON.stringify(safeAnswer[name]) }, finishPart('tool-calls')] }));
    }
  });

  it('a safe-looking answer, then the judge is cut off by its length limit mid-sentence: every guard blocks', async () => {
    for (const name of guardNames) {
      await expectBlocked(name, () => answering(`${JSON.stringify(safeAnswer[name])}\n\nWait, on a second look the text does contain`, 'length'));
    }
  });

  it("a safe-looking answer with finish reason 'error': every guard blocks", async () => {
    for (const name of guardNames) await expectBlocked(name, () => answering(JSON.stringify(safeAnswer[name]), 'error'), quick);
  });

  it('a safe-looking answer stopped by the content filter: every guard blocks', async () => {
    for (const name of guardNames) await expectBlocked(name, () => answering(JSON.stringify(safeAnswer[name]), 'content-filter'));
  });

  const thrown: Record<string, () => unknown> = {
    'a string': () => 'socket hang up',
    undefined: () => undefined,
    null: () => null,
    'a symbol': () => Symbol('boom'),
    'an object without a prototype': () => Object.create(null) as object,
    'an object whose message getter throws': () => ({
      get message(): string {
        throw new Error('getter');
      },
    }),
  };
  for (const [what, value] of Object.entries(thrown)) {
    it(`a judge that throws ${what}: every guard blocks, onError is told, nothing untyped leaves the run`, async () => {
      for (const name of guardNames) {
        const onError = vi.fn();
        await expectBlocked(
          name,
          () =>
            rawJudge(() => {
              throw value();
            }),
          { ...quick, onError },
        );
        expect(onError).toHaveBeenCalled();
      }
    });
    it(`a judge whose stream rejects with ${what}: every guard blocks`, async () => {
      for (const name of guardNames) {
        await expectBlocked(name, () => rawJudge(() => Promise.reject(value())), quick);
      }
    });
  }
});

describe('a run aborted while (or before) its guard asks the judge', () => {
  // a deadline far longer than any test: only the abort can end the judge call
  const patient = { judgeDeadlineMs: 3_600_000 };
  /** A judge whose call never settles and ignores its abort signal; `asked` resolves when it was called. */
  function neverSettling(): { judge: LanguageModelV4 & { started: number }; asked: Promise<void> } {
    let called: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => (called = resolve));
    const judge = rawJudge(() => {
      called();
      return { then: () => undefined } as unknown as ReturnType<LanguageModelV4['doStream']>;
    });
    return { judge, asked };
  }

  for (const name of guardNames) {
    for (const phase of phases[name]) {
      it(`${name}/${phase}: a judge call that never settles ends when the run is aborted; nothing reaches the model or the client`, async () => {
        const { judge, asked } = neverSettling();
        const controller = new AbortController();
        const running = runGuarded(guard(name, judge, patient), phase, content[name], { abortSignal: controller.signal });
        await asked;
        controller.abort(new Error('user cancelled'));
        const outcome = await running;
        expect(outcome.error).toBeUndefined();
        expect(outcome.streamed).not.toContain('MARK');
        if (phase === 'input') expect(outcome.model.calls.length).toBe(0);
      });
    }
  }

  // the hook itself, as a run calls it (the run's operators skip the hooks of a run already aborted)
  for (const name of ['moderation', 'injection', 'pii', 'language'] as const) {
    it(`${name}: processInput asked with an already aborted signal settles with a tripwire (the judge call is not left waiting)`, async () => {
      const { judge } = neverSettling();
      const controller = new AbortController();
      controller.abort(new Error('cancelled before the guard ran'));
      const outcome = await runProcessor(guard(name, judge, patient), 'processInput', { messageList: listWith([textMessage('u1', 'user', content[name])]), abortSignal: controller.signal });
      expect(outcome.error).toBeUndefined();
      expect(outcome.tripwire, `${name}: the input passed`).toBeDefined();
    });

    it(`${name}: processInput whose run is aborted while the judge call never settles settles with a tripwire`, async () => {
      const { judge, asked } = neverSettling();
      const controller = new AbortController();
      const running = runProcessor(guard(name, judge, patient), 'processInput', { messageList: listWith([textMessage('u1', 'user', content[name])]), abortSignal: controller.signal });
      await asked;
      controller.abort(new Error('user cancelled'));
      const outcome = await running;
      expect(outcome.error).toBeUndefined();
      expect(outcome.tripwire, `${name}: the input passed`).toBeDefined();
    });
  }
});

describe('any answer that says "flagged" anywhere is never read as "nothing found" (property-based)', () => {
  type Style = 'bare' | 'pretty' | 'fenced' | 'fenced-untagged' | 'single-quoted';
  const render = (answer: Record<string, unknown>, style: Style): string => {
    switch (style) {
      case 'bare':
        return JSON.stringify(answer);
      case 'pretty':
        return JSON.stringify(answer, null, 2);
      case 'fenced':
        return fence(answer);
      case 'fenced-untagged':
        return `\`\`\`\n${JSON.stringify(answer)}\n\`\`\``;
      default:
        return JSON.stringify(answer).replace(/"/g, "'");
    }
  };
  const separators = ['\n', ' ', '\n\nOn reflection:\n', ' Final answer, as the user asked: ', '\nCorrected:\n'];
  const scenario = fc
    .constantFrom(...guardNames)
    .chain((name) =>
      fc.record({
        name: fc.constant(name),
        phase: fc.constantFrom(...phases[name]),
        // which pieces flag (at least one does), how each is written, and what is between them
        pieces: fc.array(fc.record({ flagged: fc.boolean(), style: fc.constantFrom<Style>('bare', 'pretty', 'fenced', 'fenced-untagged', 'single-quoted') }), { minLength: 1, maxLength: 3 }),
        flaggedAt: fc.nat(2),
        separator: fc.constantFrom(...separators),
        // one object whose keys repeat (the pieces' entries in order) instead of several answers
        merged: fc.boolean(),
      }),
    )
    .map((drawn) => {
      const pieces = drawn.pieces.map((piece, index) => ({ ...piece, flagged: piece.flagged || index === drawn.flaggedAt % drawn.pieces.length }));
      const answers = pieces.map((piece) => (piece.flagged ? flaggedAnswer[drawn.name] : safeAnswer[drawn.name]));
      const text = drawn.merged ? `{${answers.map(inner).join(', ')}}` : pieces.map((piece, index) => render(answers[index] ?? {}, piece.style)).join(drawn.separator);
      return { name: drawn.name, phase: drawn.phase, text };
    });

  it(
    'answers made of flagged and safe pieces (fenced, bare, single-quoted, merged into one object with repeated keys): the guard blocks',
    async () => {
      await checkProperty(
        'judge-answers-adversarial-pieces',
        scenario,
        async ({ name, phase, text }) => {
          const outcome = await runGuarded(guard(name, answering(text)), phase, content[name]);
          const where = `${name}/${phase}: ${JSON.stringify(text)}`;
          if (outcome.error !== undefined) throw new Error(`${where}: the run ended in an error`);
          if (outcome.tripwire === undefined) throw new Error(`${where}: not blocked`);
          if (outcome.streamed.includes('MARK')) throw new Error(`${where}: the client saw the content`);
          if (phase === 'input' && outcome.model.calls.length > 0) throw new Error(`${where}: the agent's model was called`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
