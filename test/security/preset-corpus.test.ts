/**
 * Presets match shapes, not words (issue 24 §8). A false-positive corpus of ordinary text (6,097
 * sentences: prose, numbers, dates, street addresses, code, chat replies) that every preset must
 * pass clean, and a true-positive corpus per rule (valid check digits where the format has them),
 * each instance found whole by its rule; broken check digits are not matched. The per-preset and
 * per-rule figures are printed.
 */
import { describe, expect, it } from 'vitest';
import { RegexFilterProcessor, type RegexPreset } from '../../src/processors/regex-filter.js';
import { ordinaryCorpus, seededRandom } from './support/ordinary-text.js';
import { INVALID, VALID } from './support/preset-instances.js';

const PRESETS: readonly RegexPreset[] = ['pii', 'secrets', 'urls'];
const PER_RULE = 500;

describe('the false-positive corpus', () => {
  const corpus = ordinaryCorpus();

  it('is thousands of sentences', () => {
    expect(corpus.length).toBeGreaterThan(6000);
  });

  for (const preset of PRESETS) {
    it(`preset '${preset}' matches nothing in it`, () => {
      const filter = new RegexFilterProcessor({ presets: [preset], strategy: 'redact' });
      const matches = corpus.flatMap((sentence) => filter.scan(sentence).map((match) => `${match.rule}: ${JSON.stringify(match.value)} in ${JSON.stringify(sentence)}`));
      console.log(`[corpus] false positives, preset ${preset}: ${matches.length} in ${corpus.length} sentences (${corpus.join(' ').length} characters)`);
      expect(matches).toEqual([]);
    });
  }
});

describe('the true-positive corpus', () => {
  const filter = new RegexFilterProcessor({ presets: [...PRESETS], strategy: 'redact' });
  for (const [rule, make] of Object.entries(VALID)) {
    it(`${rule}: ${PER_RULE} valid instances, each found whole by its rule`, () => {
      const random = seededRandom(rule.length * 7919);
      const missed: string[] = [];
      for (let index = 0; index < PER_RULE; index++) {
        const instance = make(random);
        const text = `Here it is: ${instance} — thanks.`;
        const start = 'Here it is: '.length;
        const found = filter.scan(text).some((match) => match.rule === rule && match.start === start && match.end === start + instance.length);
        if (!found) missed.push(`${instance} → ${JSON.stringify(filter.scan(text).map((match) => [match.rule, match.value]))}`);
      }
      console.log(`[corpus] true positives, ${rule}: ${PER_RULE - missed.length}/${PER_RULE}`);
      expect(missed).toEqual([]);
    });
  }

  for (const [rule, make] of Object.entries(INVALID)) {
    it(`${rule}: ${PER_RULE} instances with a broken check are not matched`, () => {
      const random = seededRandom(rule.length * 104729);
      const matched: string[] = [];
      for (let index = 0; index < PER_RULE; index++) {
        const instance = make(random);
        if (filter.scan(`Here it is: ${instance} — thanks.`).some((match) => match.rule === rule)) matched.push(instance);
      }
      console.log(`[corpus] broken checks, ${rule}: ${matched.length}/${PER_RULE} matched`);
      expect(matched).toEqual([]);
    });
  }
});

describe('the issue’s examples', () => {
  const filter = new RegexFilterProcessor({ presets: [...PRESETS], strategy: 'redact' });
  const rulesIn = (text: string) => filter.scan(text).map((match) => match.rule);

  it('bearer-token: not "the bearer of bad news"; with the default block, an ordinary reply is not tripwired', () => {
    expect(rulesIn('She was the bearer of bad news.')).toEqual([]);
    expect(rulesIn('Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl')).toEqual(['bearer-token']);
    const blocking = new RegexFilterProcessor({ presets: ['secrets'] });
    expect(blocking.scan('Bearer bonds and the bearer of bad news.')).toEqual([]);
  });

  it('phone: not "10 000 000"; E.164 (+14155552671) is caught', () => {
    expect(rulesIn('The city has 10 000 000 inhabitants.')).toEqual([]);
    expect(rulesIn('Call +14155552671 today.')).toEqual(['phone']);
  });

  it('IBAN: check digits must hold (AB12 CDEF GHIJ is not one)', () => {
    expect(rulesIn('Reference AB12 CDEF GHIJ.')).toEqual([]);
    expect(rulesIn('Pay to DE89 3704 0044 0532 0130 00.')).toEqual(['iban']);
    // (its digit groups from 0044 on still read as an international number: `0044` is the UK's prefix)
    expect(rulesIn('Pay to DE88 3704 0044 0532 0130 00.')).not.toContain('iban');
  });
});
