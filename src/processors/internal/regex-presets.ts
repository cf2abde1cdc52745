/**
 * The built-in rules of `RegexFilterProcessor`. Every pattern is linear-time on hostile input: no
 * nested unbounded quantifiers, every repetition bounded, groups that repeat are separated by a
 * mandatory character (so a run of digits splits one way only), so a scan from each position costs
 * at most the rule's `maxMatchLength`. The rules match shapes, not words: each format's checksum or
 * structure is checked (`regex-checks.ts`), and the false-positive corpus
 * (`test/security/preset-corpus.test.ts`) must pass clean.
 */
import { isBearerToken, isCardNumber, isEmailAddress, isIban, isJwt, isKeyValue, isPhoneNumber, isSecretKey, isSlackToken, isSsn } from './regex-checks.js';

/**
 * One pattern to look for (the reference's `{ name, pattern, replacement }` plus rxagent's fields).
 *
 * @example
 * ```ts
 * import type { RegexRule } from 'rxagent/processors';
 * const rule: RegexRule = { name: 'ticket', pattern: /TICKET-(\d+)/, replacement: '[ticket $1]', maxMatchLength: 20 };
 * ```
 */
export interface RegexRule {
  /** Shown in violations and tripwire reasons. */
  name: string;
  /** A RegExp (its flags are kept, `g` is added) or a pattern string compiled with `flags`. */
  pattern: RegExp | string;
  /** Flags for a string `pattern`. */
  flags?: string;
  /** Replacement for `redact`; `$1`, `$&`… refer to the match. Default `'[REDACTED]'`. */
  replacement?: string;
  /** Extra check of a match (e.g. a Luhn check for card numbers); false ignores the match. */
  validate?: (match: string) => boolean;
  /**
   * The longest text this rule can match (default 128). A longer match split across streamed
   * chunks may be cut; the stream holds at most this much more than `streamCarryoverSize`.
   */
  maxMatchLength?: number;
  /** Overrides the processor's strategy for this rule. */
  strategy?: 'block' | 'redact' | 'warn';
}

/**
 * Built-in rule sets.
 *
 * @example
 * ```ts
 * const presets: RegexPreset[] = ['pii', 'secrets'];
 * ```
 */
export type RegexPreset = 'pii' | 'secrets' | 'urls';

/** Finds matches of a rule faster than its regex (same matches); offsets into `text`. */
export type RuleFinder = (text: string, from: number) => Array<[start: number, end: number]>;

const emailLocal = /[A-Za-z0-9._%+-]/;
const emailDomain = /[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,6}\.[A-Za-z]{2,24}(?![A-Za-z])/y;

/**
 * E-mail addresses found from each `@`: the local part is read backwards (at most 64 characters),
 * the domain forwards. Linear however long the runs of local-part characters are.
 */
const findEmails: RuleFinder = (text, from) => {
  const found: Array<[number, number]> = [];
  let searchFrom = from;
  for (let at = text.indexOf('@', searchFrom); at !== -1; at = text.indexOf('@', searchFrom)) {
    let start = at;
    while (start > from && at - start < 64 && emailLocal.test(text[start - 1] as string)) start--;
    emailDomain.lastIndex = at + 1;
    const domain = start < at ? emailDomain.exec(text) : null;
    if (domain === null) {
      searchFrom = at + 1;
      continue;
    }
    found.push([start, at + 1 + domain[0].length]);
    searchFrom = at + 1 + domain[0].length;
  }
  return found;
};

const octet = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const quad = `(?:${octet}\\.){3}${octet}`;
/** A three-part version (`2.3.4`, `1.9.0`): never an address, so a four-part number near one is a version too. */
const threePart = '(?<![\\d.])\\d{1,4}\\.\\d{1,4}\\.\\d{1,4}(?![.\\d])';
/**
 * Up to 30 characters of one clause: no line break, no `,;:!?`, dash or sentence-ending `.` (the
 * normalised view folds every dash to `-`: a `-` before a space is a dash, `1.2.3-rc` is not).
 */
const sameClause = '(?:[^\\n,;:!?\u2014\u2013.-]|[.-](?!\\s)){0,30}';
/** Words that introduce a version (`Version 1.2.3.4`, `release: 10.0.19041.1`). */
const versionWord = '\\b(?:[Vv]ersions?|VERSION|[Vv]er|[Rr]elease[ds]?|RELEASE|[Rr]el|[Bb]uild|BUILD|[Rr]ev|[Rr]evision|[Tt]ag)[\\s:.#]{0,3}';
/**
 * IPv4 addresses, not four-part versions: a dotted quad not inside a word or a longer number
 * (`v1.2.3.4`, `0xc0.168.1.1`, `1.2.3.4.5`), and — unless written as an address, with a port or a
 * prefix length (`10.0.0.1:8080`, `10.0.0.0/8`) — not after `@` (`zlib@1.2.13.1`) or a version word,
 * not with a pre-release or build suffix (`1.2.3.4-rc.1`, `10.2.154.26-node.26`; a range
 * `10.0.0.1-10.0.0.9` is two addresses), and not within 30 characters of a three-part version in
 * the same clause (`from 1.2.3 to 1.2.3.4`; `10.0.0.1, version 1.2.3` is an address).
 */
const IPV4 = new RegExp(
  `(?<![\\w.])(?=\\d)(?:${quad}(?=[:/]\\d)|(?<!@|${versionWord}|${threePart}${sameClause})${quad}(?!\\.?\\d|[-+](?!\\d{1,3}\\.\\d)[0-9A-Za-z]|${sameClause}?${threePart}))`,
  'g',
);
/** Currencies written before or after an amount (a symbol, a common ISO 4217 code, or a local sign: `kr`, `zł`). */
const currencyCode = '(?:USD|EUR|GBP|JPY|CHF|CNY|INR|CAD|AUD|NZD|SEK|NOK|DKK|PLN|CZK|HUF|RUB|BRL|MXN|KRW|ZAR|TRY|HKD|SGD|kr|zł|Kč|Ft|lei|Rs)';

/**
 * The built-in rules of each preset. The reference's rules and replacement tokens
 * (`[EMAIL]`, `[PHONE]`, `[SSN]`, `[CREDIT_CARD]`, `[API_KEY]`, `[BEARER_TOKEN]`, `[AWS_KEY]`,
 * `[URL]`) plus rxagent's (IPv4, IBAN, `sk-` keys, GitHub, Google and Slack tokens, JWTs).
 *
 * @example
 * ```ts
 * import { REGEX_PRESETS } from 'rxagent/processors';
 * const emailRule = REGEX_PRESETS.pii.find((rule) => rule.name === 'email');
 * ```
 */
const EMAIL_RULE: RegexRule = {
  name: 'email',
  pattern: /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,6}\.[A-Za-z]{2,24}(?![A-Za-z])/g,
  replacement: '[EMAIL]',
  validate: isEmailAddress,
  maxMatchLength: 128,
};

/** Built-in rules whose matches a finder computes faster than the regex (static data). */
export const PRESET_FINDERS: ReadonlyMap<RegexRule, RuleFinder> = new Map([[EMAIL_RULE, findEmails]]);

/** The preset names: `pii`, `secrets`, `urls`. */
export const REGEX_PRESETS: Readonly<Record<RegexPreset, readonly RegexRule[]>> = {
  pii: [
    EMAIL_RULE,
    {
      // E.164 (`+14155552671`), international with separators (`+44 20 7946 0958`, `+1 (415) 555-2671`),
      // North American (`(415) 555-2671`, `415-555-2671`) and national numbers with a trunk `0`
      // (`020 7946 0958`, `030 1234567`, `01 23 45 67 89`); not thousands (`10 000 000`) or dates,
      // not an amount (a currency before or after it, or decimals: `+12 345 678 €`, `+100 000.00`),
      // not a piece of a longer run of digit groups (a hex dump, a table: `08 00 00 00 00 28 58`).
      name: 'phone',
      pattern: new RegExp(
        `(?<![\\w+]|\\d[ .'\\u00a0\\u202f-]|\\p{Sc}\\s?|\\b${currencyCode}\\s?)(?:\\+[1-9]\\d{6,14}|\\+[1-9]\\d{0,3}(?:[ .-]?\\(\\d{1,4}\\))?(?:[ .-]\\d{1,6}){1,6}|(?:1[ .-])?(?:\\(\\d{3}\\) ?|\\d{3}[ .-])\\d{3}[ .-]\\d{4}|0\\d{1,4}(?:[ ./-]\\d{2,8}){1,4}|\\(0\\d{1,4}\\) ?\\d{2,8}(?:[ .-]\\d{2,8}){0,3})(?![\\w]|[ .,'\\u00a0\\u202f-]\\d|\\s?(?:\\p{Sc}|${currencyCode}(?!\\w)))`,
        'gu',
      ),
      replacement: '[PHONE]',
      validate: isPhoneNumber,
      maxMatchLength: 40,
    },
    { name: 'ssn', pattern: /(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])/g, replacement: '[SSN]', validate: isSsn, maxMatchLength: 11 },
    {
      name: 'credit-card',
      // not inside a word (a commit hash: `…ca4671703986996be2b…`)
      pattern: /(?<![\w-])(?:\d[ -]?){11,18}\d(?![\w-])/g,
      replacement: '[CREDIT_CARD]',
      validate: isCardNumber,
      maxMatchLength: 37,
    },
    {
      name: 'ipv4',
      pattern: IPV4,
      replacement: '[IP_ADDRESS]',
      maxMatchLength: 15,
    },
    {
      name: 'iban',
      pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])/g,
      replacement: '[IBAN]',
      validate: isIban,
      maxMatchLength: 42,
    },
  ],
  secrets: [
    {
      // the value must hold a digit: `api_key = get_api_key_from_env()` is code, not a key
      name: 'api-key',
      pattern: /api[_-]?(?:key|secret)\s{0,8}[:=]\s{0,8}["']?[A-Za-z0-9_-]{20,512}["']?/gi,
      replacement: '[API_KEY]',
      validate: isKeyValue,
      maxMatchLength: 560,
    },
    {
      // RFC 6750's token characters, at least 8 of them, with a digit: not "the bearer of bad news"
      name: 'bearer-token',
      pattern: /\bBearer\s{1,8}[A-Za-z0-9._~+/-]{8,4096}=*/gi,
      replacement: '[BEARER_TOKEN]',
      validate: isBearerToken,
      maxMatchLength: 4120,
    },
    { name: 'aws-key', pattern: /(?:AKIA|ASIA)[A-Z0-9]{16}/g, replacement: '[AWS_KEY]', maxMatchLength: 20 },
    { name: 'secret-key', pattern: /\bsk-[A-Za-z0-9_-]{20,512}/g, replacement: '[SECRET_KEY]', validate: isSecretKey, maxMatchLength: 515 },
    {
      name: 'github-token',
      pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})/g,
      replacement: '[GITHUB_TOKEN]',
      maxMatchLength: 266,
    },
    { name: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g, replacement: '[GOOGLE_API_KEY]', maxMatchLength: 39 },
    // not words joined by dashes (`xoxo-see-you-soon`), not the start of a longer name (`xoxo-Hugs_v1`)
    { name: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,255}(?!\w)/g, replacement: '[SLACK_TOKEN]', validate: isSlackToken, maxMatchLength: 260 },
    {
      // A JWT is flagged from its header on ('eyJ' is base64 for '{"'), so it is held while it grows.
      name: 'jwt',
      pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,2048}(?:\.[A-Za-z0-9_-]{0,4096}){0,2}/g,
      replacement: '[JWT]',
      validate: isJwt,
      maxMatchLength: 8192,
    },
  ],
  urls: [
    {
      name: 'url',
      pattern: /\bhttps?:\/\/[^\s<>"'(){}|\\^`[\]]{0,4095}[^\s<>"'(){}|\\^`[\].,;:!?]/gi,
      replacement: '[URL]',
      maxMatchLength: 4104,
    },
  ],
};
