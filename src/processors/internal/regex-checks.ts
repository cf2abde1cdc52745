/**
 * The checks that make the preset rules match shapes, not words: checksums where the format has
 * one (Luhn for card numbers, ISO 7064 mod 97-10 for IBANs), the issuer ranges of card networks,
 * the SSA's rules for social security numbers, the ITU's digit counts for phone numbers. Each sees
 * the matched text of the normalised view.
 */

/** The digits of `text`. */
const digitsOf = (text: string) => text.replace(/\D/g, '');

function luhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * Issuer prefixes of the card networks and their lengths: Visa, Mastercard (51–55, 2221–2720),
 * American Express, Discover, Diners Club, JCB, UnionPay and Maestro.
 */
function cardIssuer(digits: string): boolean {
  const length = digits.length;
  const two = Number(digits.slice(0, 2));
  const three = Number(digits.slice(0, 3));
  const four = Number(digits.slice(0, 4));
  const six = Number(digits.slice(0, 6));
  if (digits[0] === '4') return length === 13 || length === 16 || length === 19; // Visa
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return length === 16; // Mastercard
  if (two === 34 || two === 37) return length === 15; // American Express
  if (four === 6011 || (three >= 644 && three <= 649) || two === 65 || (six >= 622126 && six <= 622925)) return length >= 16 && length <= 19; // Discover
  if ((three >= 300 && three <= 305) || two === 36 || two === 38 || two === 39) return length >= 14 && length <= 19; // Diners Club
  if (four >= 3528 && four <= 3589) return length >= 16 && length <= 19; // JCB
  if (two === 62) return length >= 16 && length <= 19; // UnionPay
  if ([5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763].includes(four)) return length >= 12 && length <= 19; // Maestro
  return false;
}

/** A payment card number: a known issuer prefix and length, and a valid Luhn check digit. */
export function isCardNumber(candidate: string): boolean {
  const digits = digitsOf(candidate);
  return digits.length >= 12 && digits.length <= 19 && cardIssuer(digits) && luhn(digits);
}

/**
 * IBAN lengths per country (the SWIFT IBAN registry). Countries whose length is not listed here
 * (recent or rarely used) are accepted at any length the standard allows (15–34).
 */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28,
  CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18,
  GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32,
  LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15,
  PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27,
  ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
};
/** IBAN countries whose length the table above does not pin. */
const OTHER_IBAN_COUNTRIES = new Set(['BI', 'DJ', 'FK', 'HN', 'MN', 'NI', 'OM', 'RU', 'SO', 'YE']);

/** ISO 7064 mod 97-10 of an IBAN (country and check digits moved to the end, letters as 10–35). */
function ibanRemainder(iban: string): number {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' && char <= 'Z' ? char.charCodeAt(0) - 55 : Number(char);
    remainder = (value > 9 ? remainder * 100 + value : remainder * 10 + value) % 97;
  }
  return remainder;
}

/** An IBAN: a country that issues them, its length, and check digits that hold (mod 97 = 1). */
export function isIban(candidate: string): boolean {
  const iban = candidate.replace(/ /g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return false;
  const country = iban.slice(0, 2);
  const length = IBAN_LENGTHS[country];
  if (length === undefined ? !OTHER_IBAN_COUNTRIES.has(country) || iban.length < 15 || iban.length > 34 : iban.length !== length) return false;
  return ibanRemainder(iban) === 1;
}

/** A US social security number the SSA can issue: area not 000, 666 or 900–999; group not 00; serial not 0000. */
export function isSsn(candidate: string): boolean {
  const [area, group, serial] = candidate.split('-') as [string, string, string];
  return area !== '000' && area !== '666' && area[0] !== '9' && group !== '00' && serial !== '0000';
}

/** A day and month, then a year (`05.01.2021`, `04/03/1998`): a date, not a national number. */
const dateShape = /^\d{2}([./-])\d{2}\1(?:19|20)\d{2}$/;
/** `ddd-dd-dddd` is a social security number (the `ssn` rule's), not a national number. */
const ssnShape = /^\d{3}-\d{2}-\d{4}$/;
/** 1–3 digits, then groups of exactly three with one separator (`+12 345 678`, `1.234.567`): thousands, an amount. */
const thousandsShape = /^\+?[1-9]\d{0,2}([ .,'\u00a0\u202f])\d{3}(?:\1\d{3})+$/;
/** Thousands (or none), then a decimal mark and cents (`+200 300.00`, `+1.234,5`): an amount. */
const decimalShape = /^\+?[1-9]\d{0,2}(?:([ .,'\u00a0\u202f])\d{3}(?:\1\d{3})*)?[.,]\d{1,2}$/;
/**
 * `+`, then a first group of four digits or more and more groups (`+1300-3000`, `≈ +8000–16000`: a
 * range or a signed quantity): an international number written in groups sets its country code
 * (1–3 digits) apart.
 */
const plusLongFirstGroup = /^\+\d{4,}[ .\-/(]/;
/** A country code written with `+` or `00` as the first group (`+44 20…`, `0049 30…`) and the group after it. */
const internationalGroups = /^(?:\+|00)([1-9]\d{0,2})[ .-](?:\(0\)[ .-]?)?(\d)/;

/**
 * A phone number: 8–15 digits (E.164 allows at most 15 after the country code's `+`), not one digit
 * repeated, not an amount (`+12 345 678`, `+200 300.00`). A national number (leading `0`) has
 * at least 9 digits, one kind of separator between its groups (a date followed by a time,
 * `01.02.2024 10:30`, mixes them) and is neither a date nor shaped like a social security number.
 * An international number's own digits never start with the trunk `0` after its country code
 * (`+44 020…`, `0044 0532…` are not numbers; Italy, +39, keeps its `0`), and written in groups it
 * sets the country code apart (`+1300-3000` is a range).
 */
export function isPhoneNumber(candidate: string): boolean {
  const digits = digitsOf(candidate);
  if (digits.length < 8 || digits.length > 15 || /^(\d)\1+$/.test(digits) || decimalShape.test(candidate)) return false;
  // grouped in thousands with fewer than ten digits: an amount (`+12 345 678`); with ten or more it may be either, and reads as a number
  if (digits.length < 10 && thousandsShape.test(candidate)) return false;
  if (plusLongFirstGroup.test(candidate)) return false;
  const international = internationalGroups.exec(candidate);
  if (international !== null) {
    const [, country, firstDigit] = international;
    if (firstDigit === '0' && country !== '39') return false;
  }
  if (!candidate.startsWith('0')) return true;
  return digits.length >= 9 && new Set(candidate.replace(/\d/g, '')).size <= 1 && !dateShape.test(candidate) && !ssnShape.test(candidate);
}

/** A piece of a name: letters (one word, or an acronym) and the digits after them, or digits alone. */
const NAME_PIECE = /[A-Z]{2,}(?![a-z])\d*|[A-Z]?[a-z]+\d*|[A-Z]\d*|\d+/g;
/** Acronyms and abbreviations common in code, in any case (`parseJSON`, `HttpClient`, `getCtx`). */
const CODE_WORDS = new Set(
  ('API AES ARG ARGS AWS BTN BUF CFG CLI CMD CPU CSS CSV CTX DB DIR DNS DST ENV ERR FN GPU HMAC HTML HTTP HTTPS ID IDX IO IP ' +
    'JS JSON JWT LEN LIB MD MGR MSG NPM OBJ OS PDF PKG PTR REQ RES RPC RSA SDK SHA SQL SRC SSL STR SVC TCP TLS TMP TS UDP UI URI URL UTF UUID XHR XML')
    .split(' '),
);
/** Capitals made of code acronyms (`JSON`, `HTTPURL`) or one and a version letter (`HTTPV2`). */
function isCodeCaps(text: string, digits: string): boolean {
  const caps = text.toUpperCase();
  if (CODE_WORDS.has(caps) || (digits !== '' && caps.endsWith('V') && CODE_WORDS.has(caps.slice(0, -1)))) return true;
  for (let cut = 2; cut <= caps.length - 2; cut++) if (CODE_WORDS.has(caps.slice(0, cut)) && CODE_WORDS.has(caps.slice(cut))) return true;
  return false;
}

/** Words that take a number in code (`Base64`, `Sha256`, `Utf8`, `Int32`, `V2`, `Es2023`). */
const NUMBERED_WORDS = /^(?:base|sha|utf|md|int|uint|float|v|es|ipv|http|h|x)$/i;

/** Two consonants a word may start with (`string`, `black`, `three`, `phrase`…); `y` is a consonant there. */
const ONSETS = new Set('bl br ch cl cr dr dw fl fr gh gl gn gr kl kn kr ph pl pr ps sc sh sk sl sm sn sp sq st sw th tr tw wh wr'.split(' '));

/**
 * A pronounceable word of at most 15 letters: a vowel (`y` counts) when it has three letters or
 * more, no run of four consonants, `q` followed
 * by `u`, and two consonants at the start only as English words start (`st`, `ch`, `pl`…).
 */
function isWord(text: string): boolean {
  const word = text.toLowerCase();
  if (word.length > 15 || /q(?!u)/.test(word) || /[^aeiouy]{4}/.test(word)) return false;
  if (word.length >= 3 && !/[aeiouy]/.test(word)) return false;
  const onset = /^[^aeiou][^aeiouy]/.exec(word)?.[0];
  return onset === undefined || ONSETS.has(onset);
}

/**
 * Reads as a name made of words, not as random characters: words joined by dashes, underscores or
 * dots (`learn-rate-scheduler`, `my_project_v2`, `1st-class`) or a camelCase / PascalCase
 * identifier of three or more words (`createHmacSha256Digest`). Every word is pronounceable (see
 * `isWord`) or one of the acronyms and abbreviations of code (`JSON`, `Http`, `ctx`); the words of
 * one camelCase part have three letters on average, at most half are shorter than three (`getById`),
 * and at most one is another acronym, of two capitals; digits end a word (`Sha256`, `v2`) or are a number with its unit
 * or ordinal (`1st`, `3d`), never sit inside one; runs of digits have at most four; an identifier has at most three
 * of them besides those of words of code (`Base64`, `Sha256`) and never starts with one. Random keys of 20 characters (base62, hex, base64url) read as a name
 * about once in 100,000 or less, of 32 characters about never.
 */
export function readsAsName(value: string): boolean {
  const parts = value.split(/[-_.]+/).filter((part) => part !== '');
  if (parts.length === 0 || parts.some((part) => /[^A-Za-z0-9]/.test(part))) return false;
  // one identifier: at most three runs of digits, and never a digit first
  if (parts.length === 1 && /^\d/.test(value)) return false;
  let words = 0;
  let numbers = 0;
  for (const part of parts) {
    // a number with its unit or ordinal (`1st`, `12th`, `3d`, `4k`, `90s`) is one word
    if (/^\d{1,4}(?:st|nd|rd|th|[dkmsx])$/i.test(part)) {
      words++;
      continue;
    }
    // digits end a word (`Sha256Digest`, `v2`), never sit inside one
    if (/[A-Za-z]\d+[a-z]/.test(part)) return false;
    // an all-capitals part (`API_KEY_V2`) is one word, a mixed-case one is split at its capitals
    const pieces = /[a-z]/.test(part) ? (part.match(NAME_PIECE) ?? []) : [part];
    let partWords = 0;
    let letters = 0;
    let short = 0;
    let acronyms = 0;
    for (const piece of pieces) {
      const [, text = '', digits = ''] = /^([A-Za-z]*)(\d*)$/.exec(piece) ?? [];
      if (digits.length > 4) return false;
      // numbers that belong to a word of code (`Sha256`, `Base64`, `UTF8`, `V2`) are part of it
      if (digits !== '' && !(NUMBERED_WORDS.test(text) || isCodeCaps(text, digits))) numbers++;
      if (text === '') continue;
      if (text.toLowerCase() === 'v' && digits !== '') {
        partWords++; // a version (`V2`) is a word of the name
        letters += 3;
        continue;
      }
      partWords++;
      // a word of code (`Id`, `JSON`, `ctx`) is a word whatever its length
      if (isCodeCaps(text, digits)) {
        letters += 3;
        continue;
      }
      const acronym = pieces.length > 1 && text.length > 1 && text === text.toUpperCase();
      if (acronym ? text.length > 2 || ++acronyms > 1 : !isWord(text)) return false;
      if (text.length < 3) short++;
      letters += text.length;
    }
    // a camelCase part: words of three letters on average, at most half of them shorter
    if (partWords > 1 && (short * 2 > partWords || letters / partWords < 3)) return false;
    words += partWords;
  }
  // words joined by separators (numbers and versions among them: `v10-1000`), or an identifier of three words
  return parts.length > 1 || (words >= 3 && numbers <= 3);
}

/**
 * The value after the key of an `api_key=…` match holds a digit (a word does not) and does not read
 * as a name (`apiKey = createHmacSha256Digest(…)`, `api_key: my-service-key-v2` are code and labels).
 */
export function isKeyValue(candidate: string): boolean {
  const value = candidate.slice(candidate.search(/[:=]/) + 1).trim().replace(/^["']|["']$/g, '');
  return /\d/.test(value) && !readsAsName(value);
}

/** Three dot-separated parts of 3+ characters with a letter: a JWT's shape (`eyJ….eyJ….sig`, `abc.def.123`). */
const jwtShape = /^(?=[^.]*[A-Za-z])[\w-]{3,}\.[\w-]{3,}\.[\w-]{3,}$/;

/**
 * A bearer token: JWT-shaped, or a digit and a letter in a value that does not read as a name —
 * not "the bearer of bad news", not "payable to bearer 2024-01-15", "bearer 1st-class shares",
 * "Bearer my-service-v2".
 */
export function isBearerToken(candidate: string): boolean {
  const token = candidate.slice(6).trim().replace(/=+$/, '');
  if (jwtShape.test(token)) return true;
  return /\d/.test(token) && /[A-Za-z]/.test(token) && !readsAsName(token);
}

/** A Slack token: not words joined by dashes after the prefix (`xoxo-see-you-soon`, `xoxb-0-see-you-v2`). */
export function isSlackToken(candidate: string): boolean {
  const rest = candidate.slice(5);
  return !(rest.includes('-') && readsAsName(rest));
}

/** Prefixes of `sk-` keys that are words by design (`sk-proj-…`, `sk-ant-api03-…`). */
const SECRET_KEY_PREFIX = /^(?:proj|ant-api\d\d|svcacct|admin)-/;

/**
 * An `sk-` key holds a digit or a capital letter after `sk-` (kebab-case names such as `sk-learn-…`
 * do not) and does not read as words joined by dashes (`sk-Learn-Rate-Scheduler-v2`).
 */
export function isSecretKey(candidate: string): boolean {
  const body = candidate.slice(3);
  if (!/[0-9A-Z]/.test(body)) return false;
  const rest = body.replace(SECRET_KEY_PREFIX, '');
  return !(/[-_]/.test(rest) && readsAsName(rest));
}

/** Parameter names of a JOSE header (RFC 7515, 7516, 7519, 7797, 8225, 8555). */
const JOSE_PARAMETERS = new Set(['alg', 'jku', 'jwk', 'kid', 'x5u', 'x5c', 'x5t', 'x5t#S256', 'typ', 'cty', 'crit', 'enc', 'zip', 'epk', 'apu', 'apv', 'iv', 'tag', 'p2s', 'p2c', 'b64', 'ppt', 'url', 'nonce']);

/**
 * A JWT: its first part (base64url of a JSON object, `eyJ` is `{"`) names a JOSE header parameter
 * (`alg`, `typ`, `kid`…) among the keys it shows. Readable base64 JSON that is not a header — a
 * source map (`{"version":3,…}`), a data URL's payload — is not one. A first part that is not
 * readable text, or shows no key yet, counts as a JWT.
 */
export function isJwt(candidate: string): boolean {
  const header = candidate.slice(0, candidate.includes('.') ? candidate.indexOf('.') : candidate.length);
  let decoded: string;
  try {
    decoded = atob(header.slice(0, header.length - (header.length % 4)).replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return true;
  }
  // binary (a random or truncated header) cannot be read: a JWT, to be safe
  if (!/^[\x20-\x7e\t\r\n]*$/.test(decoded)) return true;
  const keys = [...decoded.matchAll(/[{,]\s*"([A-Za-z0-9_#$-]{1,32})"\s*:/g)].map((match) => match[1] as string);
  return keys.length === 0 || keys.some((key) => JOSE_PARAMETERS.has(key));
}

/** Receivers in code (`x@self.weight` is a matrix product in Python, `@this.prop`): never a mail domain. */
const CODE_RECEIVER = /@(?:self|this|cls)\./;

/** An e-mail address, not code: the domain does not start with `self.`, `this.` or `cls.`. */
export function isEmailAddress(candidate: string): boolean {
  return !CODE_RECEIVER.test(candidate);
}
