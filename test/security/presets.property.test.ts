/**
 * Property (issue 24 §8): presets match shapes, not words. Any ordinary sentence the corpus grammar
 * makes (prose, numbers, dates, addresses, code) matches no preset; any instance of a rule's format
 * (valid check digits where it has them) is found whole by that rule between any two sentences;
 * the same instance with a broken check is not.
 *
 * Case counts: `RXAGENT_PROPERTY_RUNS` each (CI 1,000: 10,000 sentences and 1,000 instances;
 * `npm run test:soak` 20,000).
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { checkProperty, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { ordinarySentence, seededRandom } from './support/ordinary-text.js';
import { INVALID, VALID } from './support/preset-instances.js';

const filter = new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' });

describe('presets match shapes, not words (property-based)', () => {
  it(
    'ordinary sentences match no preset',
    async () => {
      await checkProperty('presets-ordinary', fc.integer(), async (seed) => {
        const random = seededRandom(seed);
        const text = Array.from({ length: 10 }, () => ordinarySentence(random)).join(' ');
        const matches = filter.scan(text);
        if (matches.length > 0) throw new Error(`${JSON.stringify(text)}: ${JSON.stringify(matches.map((match) => [match.rule, match.value]))}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'every rule finds its instances whole in any ordinary sentence; broken checks are not found',
    async () => {
      const arbitrary = fc.record({ rule: fc.constantFrom(...Object.keys(VALID)), seed: fc.integer(), before: fc.integer(), after: fc.integer() });
      await checkProperty('presets-instances', arbitrary, async ({ rule, seed, before, after }) => {
        const random = seededRandom(seed);
        const instance = (VALID[rule] as (random: () => number) => string)(random);
        const prefix = `${ordinarySentence(seededRandom(before))} — `;
        const text = `${prefix}${instance} — ${ordinarySentence(seededRandom(after))}`;
        const found = filter.scan(text).some((match) => match.rule === rule && match.start === prefix.length && match.end === prefix.length + instance.length);
        if (!found) throw new Error(`${rule} not found whole in ${JSON.stringify(text)}: ${JSON.stringify(filter.scan(text).map((match) => [match.rule, match.value]))}`);
        const broken = INVALID[rule];
        if (broken === undefined) return;
        const invalid = broken(random);
        if (filter.scan(`${prefix}${invalid} — ${ordinarySentence(seededRandom(after))}`).some((match) => match.rule === rule)) throw new Error(`${rule}: broken ${JSON.stringify(invalid)} matched`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
