/**
 * Property (issue 31 §3): shapes of ordinary text that must not match a preset, each class
 * generated whole — amounts are not phone numbers, words joined by dashes are not tokens, code
 * identifiers are not keys, legal phrases with "bearer" are not bearer tokens, four-part version
 * strings are not IPv4 addresses (unless written as an address), `name@self.attr` in code is not
 * an e-mail address. The real-text scan (`preset-real-text.test.ts`) found instances of most of
 * these in the dependency tree's own docs.
 *
 * Case counts: `RXAGENT_PROPERTY_RUNS` each (CI 1,000; `npm run test:soak` 20,000).
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { RegexFilterProcessor, type RegexMatch } from '../../src/processors/regex-filter.js';
import { checkProperty, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

const filter = new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' });
/** Without `url`, whose match would own the region of an address inside a link. */
const pii = new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' });
const SECRETS = new Set(['api-key', 'bearer-token', 'aws-key', 'secret-key', 'github-token', 'google-api-key', 'slack-token', 'jwt']);

/** Throws when `text` has a match of one of `rules`. */
function expectNoMatch(text: string, rules: (rule: string) => boolean): void {
  const found = filter.scan(text).filter((match: RegexMatch) => rules(match.rule));
  if (found.length > 0) throw new Error(`${JSON.stringify(text)}: ${JSON.stringify(found.map((match) => [match.rule, match.value]))}`);
}

const consonant = fc.constantFrom(...'bcdfghjklmnprstvwz');
const vowel = fc.constantFrom(...'aeiou');
/** A pronounceable lowercase word of 1–4 syllables (2–12 letters). */
const word = fc.array(fc.tuple(consonant, vowel, fc.option(consonant, { nil: '' })).map((parts) => parts.join('')), { minLength: 1, maxLength: 4 }).map((syllables) => syllables.join(''));
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
/** A short number part of a name: `2`, `v2`, `256`, `2024`. */
const numberPart = fc.oneof(fc.integer({ min: 0, max: 9999 }).map(String), fc.integer({ min: 1, max: 99 }).map((n) => `v${n}`));

describe('shapes of ordinary text match no preset (property-based)', () => {
  it(
    'amounts with a currency or thousands separators are not phone numbers',
    async () => {
      const separators = fc.constantFrom(',', '.', ' ', '\u00a0', '\u202f', "'");
      const amount = fc
        .record({
          digits: fc.integer({ min: 4, max: 11 }).chain((length) => fc.stringMatching(new RegExp(`^[1-9]\\d{${length - 1}}$`))),
          thousands: separators,
          decimals: fc.option(fc.stringMatching(/^\d{2}$/), { nil: undefined }),
          sign: fc.constantFrom('', '+', '-', '−'),
          currency: fc.constantFrom('', '$', '€', '£', '¥', '₹', 'CHF ', 'USD ', 'EUR ', 'kr '),
          suffix: fc.constantFrom('', ' €', ' EUR', ' USD', ' zł', ' kr', '€', ' CHF'),
        })
        // `+1 234 567 890` (a sign, ten digits or more in thousands, no currency, no decimals) is also how
        // an international number is grouped: it reads as one (docs/security.md, remaining limits)
        .filter(({ digits, decimals, sign, currency, suffix }) => !(sign === '+' && currency === '' && suffix === '' && decimals === undefined && digits.length >= 10))
        .map(({ digits, thousands, decimals, sign, currency, suffix }) => {
          const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, thousands);
          const decimalMark = thousands === '.' ? ',' : '.';
          return `${sign}${currency}${grouped}${decimals === undefined ? '' : decimalMark + decimals}${suffix}`;
        });
      const sentence = fc.tuple(fc.constantFrom('Revenue changed by', 'The total is', 'Budget:', 'We raised', 'Net result'), amount, fc.constantFrom(' this year.', '.', ' (audited)', ' in Q3;'));
      await checkProperty('preset-shapes-amounts', sentence, async ([before, value, after]) => {
        expectNoMatch(`${before} ${value}${after}`, (rule) => rule === 'phone');
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'words joined by dashes are not tokens',
    async () => {
      const piece = fc.oneof({ weight: 4, arbitrary: word }, { weight: 2, arbitrary: word.map(capitalised) }, { weight: 1, arbitrary: word.map((text) => text.toUpperCase()) }, { weight: 1, arbitrary: numberPart });
      const joined = fc.tuple(fc.array(piece, { minLength: 2, maxLength: 8 }), fc.constantFrom('-', '_')).map(([pieces, dash]) => pieces.join(dash));
      const context = fc.constantFrom('sk-', 'xoxb-', 'xoxo-', 'xoxp-', 'Bearer ', 'bearer ', 'api_key: ', 'api-key=', 'API_SECRET = ', 'the ');
      await checkProperty('preset-shapes-dashed-words', fc.tuple(context, joined), async ([before, value]) => {
        expectNoMatch(`See ${before}${value} for details.`, (rule) => SECRETS.has(rule));
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'identifiers in code are not keys',
    async () => {
      const camel = fc.array(fc.oneof({ weight: 5, arbitrary: word.map(capitalised) }, { weight: 1, arbitrary: fc.constantFrom('Hmac', 'Sha256', 'Base64', 'V2', 'Utf8', 'Http', 'Api', 'Url', 'Id', 'HTTP', 'JSON', 'UTF8') }), { minLength: 2, maxLength: 6 });
      const identifier = fc.oneof(
        fc.tuple(word, camel).map(([first, rest]) => first + rest.join('')), // camelCase
        camel.map((parts) => parts.join('')), // PascalCase
        fc.tuple(word, fc.array(fc.oneof(word, word, numberPart), { minLength: 1, maxLength: 5 })).map(([first, rest]) => [first, ...rest].join('_')), // snake_case
        fc.tuple(word, fc.array(fc.oneof(word, word, numberPart), { minLength: 1, maxLength: 4 })).map(([first, rest]) => [first, ...rest].join('_').toUpperCase()), // CONSTANT_CASE
      );
      const key = fc.constantFrom('apiKey', 'api_key', 'API_KEY', 'apiSecret', 'api_secret', 'ApiKey', 'api-key');
      const code = fc.tuple(key, identifier, fc.constantFrom('=', ': ', ' = ', ' := '), fc.constantFrom('(secret);', '();', '.digest("hex")', ',', '', '?.value ??')).map(
        ([name, value, assign, after]) => `const ${name}${assign}${value}${after}`,
      );
      await checkProperty('preset-shapes-identifiers', code, async (text) => {
        expectNoMatch(text, (rule) => SECRETS.has(rule));
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'legal phrases with "bearer" are not bearer tokens',
    async () => {
      const date = fc.record({ day: fc.integer({ min: 1, max: 28 }), month: fc.integer({ min: 1, max: 12 }), year: fc.integer({ min: 1990, max: 2040 }), style: fc.integer({ min: 0, max: 3 }) }).map(({ day, month, year, style }) => {
        const dd = String(day).padStart(2, '0');
        const mm = String(month).padStart(2, '0');
        return [`${year}-${mm}-${dd}`, `${dd}/${mm}/${year}`, `${dd}.${mm}.${year}`, `${mm}-${dd}-${year}`][style] as string;
      });
      const amount = fc.integer({ min: 1000, max: 99_999_999 }).map((value) => value.toLocaleString('en-US'));
      const reference = fc.oneof(
        date,
        amount,
        fc.integer({ min: 1, max: 99 }).map((n) => `${n}${Math.floor(n / 10) === 1 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}-class`),
        fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 })).map(([a, b, c]) => `${a}.${b}.${c}`),
        fc.integer({ min: 100_000, max: 999_999_999 }).map(String),
        fc.tuple(word, fc.integer({ min: 1, max: 9999 })).map(([text, n]) => `${text}-${n}`),
      );
      const phrase = fc.tuple(
        fc.constantFrom('This note is payable to bearer', 'The bonds are issued to bearer', 'Pay the bearer', 'Bearer', 'The bearer', 'Shares held by bearer', 'bearer'),
        reference,
        fc.constantFrom(' on demand.', ', as agreed.', ' under clause 4.', '.'),
      );
      await checkProperty('preset-shapes-bearer', phrase, async ([before, value, after]) => {
        expectNoMatch(`${before} ${value}${after}`, (rule) => SECRETS.has(rule));
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'four-part version strings are not IPv4 addresses unless written as an address',
    async () => {
      const part = fc.integer({ min: 0, max: 255 });
      const quad = fc.tuple(part, part, part, part).map((parts) => parts.join('.'));
      const version = fc.tuple(
        quad,
        fc.integer({ min: 0, max: 8 }),
        fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 30 })).map((parts) => parts.join('.')),
        fc.constantFrom('node', 'zlib', 'v8', 'typescript', '@scope/pkg'),
      ).map(([value, style, semver, name]) =>
        [
          `Upgrade to v${value} now.`,
          `Version ${value} is out.`,
          `version: ${value}`,
          `${name}@${value} is installed.`,
          `Released ${value}-beta.2 today.`,
          `Build ${value}+sha.5114f85 passed.`,
          `It went from ${semver} to ${value} last week.`,
          `For example, \`${value}\` will return \`${semver}\`.`,
          `Release ${value}-1 ships the fix.`,
        ][style] as string,
      );
      await checkProperty('preset-shapes-versions', version, async (text) => {
        expectNoMatch(text, (rule) => rule === 'ipv4');
      });
      const address = fc.tuple(quad, fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 65535 }), fc.integer({ min: 8, max: 32 })).map(([value, style, port, prefix]) => ({
        value,
        text: [`Connect to ${value}:${port} (version 2.1.0).`, `http://${value}/status`, `The host is ${value}.`, `Allow ${value}/${prefix} in the firewall.`, `ssh app@${value}:${port}`][style] as string,
      }));
      await checkProperty('preset-shapes-addresses', address, async ({ value, text }) => {
        if (!pii.scan(text).some((match) => match.rule === 'ipv4' && match.value === value)) throw new Error(`${JSON.stringify(text)}: the address ${value} is not found`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    '`name@self.attr` in code is not an e-mail address',
    async () => {
      const identifier = fc.tuple(word, fc.array(word.map(capitalised), { maxLength: 2 }), fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined })).map(
        ([first, rest, digit]) => `${first}${rest.join('')}${digit ?? ''}`,
      );
      const code = fc.tuple(identifier, fc.constantFrom('self', 'this', 'cls'), identifier, fc.constantFrom('', ' ', '\n'), fc.constantFrom(')', '', '.T', '[0]', ' + bias')).map(
        ([name, receiver, attr, space, after]) => `out = ${name}@${receiver}.${attr}${after}${space}`,
      );
      await checkProperty('preset-shapes-self-attr', code, async (text) => {
        expectNoMatch(text, (rule) => rule === 'email');
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
