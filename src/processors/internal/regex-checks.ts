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

/**
 * A phone number: 8–15 digits (E.164 allows at most 15 after the country code's `+`), not one digit
 * repeated. A national number (leading `0`) has at least 9 digits, one kind of separator between its
 * groups (a date followed by a time, `01.02.2024 10:30`, mixes them) and is neither a date nor
 * shaped like a social security number.
 */
export function isPhoneNumber(candidate: string): boolean {
  const digits = digitsOf(candidate);
  if (digits.length < 8 || digits.length > 15 || /^(\d)\1+$/.test(digits)) return false;
  if (!candidate.startsWith('0')) return true;
  return digits.length >= 9 && new Set(candidate.replace(/\d/g, '')).size <= 1 && !dateShape.test(candidate) && !ssnShape.test(candidate);
}

/** The value after the key of an `api_key=…` match holds a digit (a word or an identifier does not). */
export function isKeyValue(candidate: string): boolean {
  return /\d/.test(candidate.slice(candidate.search(/[:=]/) + 1));
}

/** A bearer token holds a digit (`Bearer eyJ…`, `Bearer 4f9c…`; not "the bearer of bad news"). */
export function isBearerToken(candidate: string): boolean {
  return /\d/.test(candidate.slice(6));
}

/** An `sk-` key holds a digit or a capital letter after `sk-` (kebab-case names such as `sk-learn-…` do not). */
export function isSecretKey(candidate: string): boolean {
  return /[0-9A-Z]/.test(candidate.slice(3));
}
