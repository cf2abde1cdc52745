/**
 * A true-positive corpus for the regex presets (issue 24 §8): for each rule, instances of the real
 * format, with valid check digits where the format has them (Luhn for card numbers, ISO 7064
 * mod 97-10 for IBANs, the SSA's ranges for SSNs) — computed here, independently of the code under
 * test — and instances with a broken check digit that must not match.
 */
import { ibanOf } from './secrets.js';

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const chars = (random: Random, alphabet: string, length: number) => Array.from({ length }, () => pick(random, [...alphabet])).join('');
const DIGITS = '0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ALNUM = `${UPPER}abcdefghijklmnopqrstuvwxyz${DIGITS}`;
const BASE64URL = `${ALNUM}-_`;

/** The Luhn check digit for `payload` (test-side). */
function luhnDigit(payload: string): number {
  let sum = 0;
  for (let index = 0; index < payload.length; index++) {
    let digit = Number(payload[payload.length - 1 - index]);
    if (index % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

const CARD_BRANDS: ReadonlyArray<{ prefixes: readonly string[]; lengths: readonly number[] }> = [
  { prefixes: ['4'], lengths: [13, 16, 19] }, // Visa
  { prefixes: ['51', '52', '53', '54', '55', '2221', '2500', '2720'], lengths: [16] }, // Mastercard
  { prefixes: ['34', '37'], lengths: [15] }, // American Express
  { prefixes: ['6011', '644', '649', '65'], lengths: [16, 19] }, // Discover
  { prefixes: ['300', '305', '36', '38'], lengths: [14, 16] }, // Diners Club
  { prefixes: ['3528', '3589'], lengths: [16] }, // JCB
  { prefixes: ['62'], lengths: [16, 19] }, // UnionPay
  { prefixes: ['6759', '5018'], lengths: [12, 16, 19] }, // Maestro
];

function cardNumber(random: Random, valid: boolean): string {
  const brand = pick(random, CARD_BRANDS);
  const prefix = pick(random, brand.prefixes);
  const length = pick(random, brand.lengths);
  const payload = prefix + chars(random, DIGITS, length - prefix.length - 1);
  const check = luhnDigit(payload);
  const digits = payload + String(valid ? check : (check + int(random, 1, 9)) % 10);
  switch (int(random, 0, 2)) {
    case 0:
      return digits;
    case 1:
      return digits.replace(/(\d{4})(?=\d)/g, '$1 ');
    default:
      return digits.replace(/(\d{4})(?=\d)/g, '$1-');
  }
}

/** BBAN lengths and shapes (letters where the bank code has them) of some countries (test-side). */
const IBAN_FORMATS: ReadonlyArray<[country: string, bban: (random: Random) => string]> = [
  ['DE', (random) => chars(random, DIGITS, 18)],
  ['GB', (random) => chars(random, UPPER, 4) + chars(random, DIGITS, 14)],
  ['FR', (random) => chars(random, DIGITS, 23)],
  ['NL', (random) => chars(random, UPPER, 4) + chars(random, DIGITS, 10)],
  ['ES', (random) => chars(random, DIGITS, 20)],
  ['IT', (random) => chars(random, UPPER, 1) + chars(random, DIGITS, 22)],
  ['NO', (random) => chars(random, DIGITS, 11)],
  ['BE', (random) => chars(random, DIGITS, 12)],
  ['CH', (random) => chars(random, DIGITS, 17)],
  ['AT', (random) => chars(random, DIGITS, 16)],
  ['PL', (random) => chars(random, DIGITS, 24)],
  ['SE', (random) => chars(random, DIGITS, 20)],
  ['IE', (random) => chars(random, UPPER, 4) + chars(random, DIGITS, 14)],
  ['PT', (random) => chars(random, DIGITS, 21)],
  ['MT', (random) => chars(random, UPPER, 4) + chars(random, DIGITS, 23)],
  ['SA', (random) => chars(random, DIGITS, 20)],
];

function iban(random: Random, valid: boolean): string {
  const [country, bban] = pick(random, IBAN_FORMATS);
  let value = ibanOf(country, bban(random));
  if (!valid) {
    const check = Number(value.slice(2, 4));
    value = `${country}${String(((check + int(random, 1, 96) - 2) % 97) + 2).padStart(2, '0')}${value.slice(4)}`;
  }
  return random() < 0.5 ? value : value.replace(/(.{4})(?=.)/g, '$1 ');
}

function phone(random: Random): string {
  const nanp = () => [chars(random, '23456789', 1) + chars(random, DIGITS, 2), chars(random, DIGITS, 3), chars(random, DIGITS, 4)];
  switch (int(random, 0, 7)) {
    case 0: {
      const [area, exchange, line] = nanp();
      return `+1${area}${exchange}${line}`; // E.164
    }
    case 1:
      return `+${pick(random, ['44', '49', '33', '34', '39', '81', '61', '353', '358'])}${chars(random, '123456789', 1)}${chars(random, DIGITS, int(random, 7, 9))}`;
    case 2: {
      const [area, exchange, line] = nanp();
      return `+1 (${area}) ${exchange}-${line}`;
    }
    case 3: {
      const [area, exchange, line] = nanp();
      return pick(random, [`(${area}) ${exchange}-${line}`, `${area}-${exchange}-${line}`, `${area}.${exchange}.${line}`, `1-${area}-${exchange}-${line}`]);
    }
    case 4:
      return `+44 20 ${chars(random, DIGITS, 4)} ${chars(random, DIGITS, 4)}`;
    case 5:
      return `0${chars(random, '123456789', 1)}${chars(random, DIGITS, 2)} ${chars(random, DIGITS, 7)}`; // DE
    case 6:
      return `020 ${chars(random, DIGITS, 4)} ${chars(random, DIGITS, 4)}`; // UK
    default:
      return `0${chars(random, '1234567', 1)} ${[0, 1, 2, 3].map(() => chars(random, DIGITS, 2)).join(' ')}`; // FR
  }
}

function ssn(random: Random, valid: boolean): string {
  if (!valid) return pick(random, [`000-${int(random, 10, 99)}-${int(random, 1000, 9999)}`, `666-${int(random, 10, 99)}-${int(random, 1000, 9999)}`, `9${int(random, 10, 99)}-${int(random, 10, 99)}-${int(random, 1000, 9999)}`, `${int(random, 100, 665)}-00-${int(random, 1000, 9999)}`]);
  const area = int(random, 1, 899);
  return `${String(area === 666 ? 667 : area).padStart(3, '0')}-${String(int(random, 1, 99)).padStart(2, '0')}-${String(int(random, 1, 9999)).padStart(4, '0')}`;
}

const jwtPart = (random: Random, length: number) => `eyJ${chars(random, BASE64URL, length)}`;

/** One valid instance of each rule. */
export const VALID: Readonly<Record<string, (random: Random) => string>> = {
  email: (random) => `${chars(random, 'abcdefghij', int(random, 1, 8))}${pick(random, ['', '.', '+', '_'])}${chars(random, 'klmnop0123', int(random, 1, 8))}@${chars(random, 'qrstuvwxyz', int(random, 2, 10))}.${pick(random, ['com', 'org', 'io', 'co.uk', 'example', 'dev'])}`,
  phone,
  ssn: (random) => ssn(random, true),
  'credit-card': (random) => cardNumber(random, true),
  ipv4: (random) => [0, 1, 2, 3].map(() => int(random, 0, 255)).join('.'),
  iban: (random) => iban(random, true),
  'api-key': (random) => `${pick(random, ['api_key', 'API_KEY', 'api-secret', 'apiKey'])}${pick(random, ['=', ': ', ' = '])}${pick(random, ['', '"'])}${chars(random, ALNUM, int(random, 12, 30))}${int(random, 0, 9)}${chars(random, ALNUM, 8)}`,
  'bearer-token': (random) => `Bearer ${pick(random, [`${jwtPart(random, 20)}.${jwtPart(random, 30)}.${chars(random, BASE64URL, 43)}`, `${chars(random, ALNUM, 20)}${int(random, 0, 9)}${chars(random, ALNUM, 11)}`])}`,
  'aws-key': (random) => `${pick(random, ['AKIA', 'ASIA'])}${chars(random, UPPER + DIGITS, 16)}`,
  'secret-key': (random) => `sk-${pick(random, ['', 'proj-', 'ant-api03-'])}${chars(random, ALNUM, int(random, 20, 60))}${int(random, 0, 9)}`,
  'github-token': (random) => pick(random, [`gh${pick(random, [...'pousr'])}_${chars(random, ALNUM, 36)}`, `github_pat_${chars(random, `${ALNUM}_`, 82)}`]),
  'google-api-key': (random) => `AIza${chars(random, BASE64URL, 35)}`,
  'slack-token': (random) => `xox${pick(random, [...'abposr'])}-${chars(random, DIGITS, 12)}-${chars(random, DIGITS, 13)}-${chars(random, ALNUM, 24)}`,
  jwt: (random) => `${jwtPart(random, 33)}.${jwtPart(random, 60)}.${chars(random, BASE64URL, 43)}`,
  url: (random) => `https://${chars(random, 'abcdefgh', int(random, 2, 10))}.${pick(random, ['com', 'org', 'example'])}/${chars(random, 'abcdef012', int(random, 1, 12))}?q=${chars(random, ALNUM, 6)}`,
};

/** Instances with a broken check (digit, range), per rule that has one: none may match. */
export const INVALID: Readonly<Record<string, (random: Random) => string>> = {
  'credit-card': (random) => cardNumber(random, false),
  iban: (random) => iban(random, false),
  ssn: (random) => ssn(random, false),
};
