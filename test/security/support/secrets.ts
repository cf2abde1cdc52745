/**
 * Secrets of the preset rules as fast-check arbitraries, plain or obfuscated so they read the same
 * to a person (invisible characters inserted, full-width characters, homoglyphs in a key prefix):
 * shared by the guard properties.
 */
import fc from 'fast-check';

const alnum = (min: number, max: number, chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789') =>
  fc.array(fc.constantFrom(...chars), { minLength: min, maxLength: max }).map((items) => items.join(''));
const upperDigits = (length: number) => alnum(length, length, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
const lowerDigits = (min: number, max: number) => alnum(min, max, 'abcdefghijklmnopqrstuvwxyz0123456789');
const octet = fc.integer({ min: 0, max: 255 });

/** An IBAN of `country` with BBAN `bban` and the check digits ISO 7064 mod 97-10 gives (test-side, with BigInt). */
export function ibanOf(country: string, bban: string): string {
  const numeric = (text: string) => [...text].map((char) => (/[A-Z]/.test(char) ? String(char.charCodeAt(0) - 55) : char)).join('');
  const check = 98n - (BigInt(numeric(`${bban}${country}00`)) % 97n);
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}

/** A secret of one preset rule: `prefix` (where homoglyphs may go) and the rest. */
export const presetSecret: fc.Arbitrary<{ prefix: string; rest: string }> = fc.oneof(
  fc.tuple(fc.constantFrom('AKIA', 'ASIA'), upperDigits(16)).map(([prefix, rest]) => ({ prefix, rest })),
  alnum(20, 40).map((rest) => ({ prefix: 'sk-', rest })),
  alnum(36, 36).map((rest) => ({ prefix: 'ghp_', rest })),
  alnum(35, 35, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_').map((rest) => ({ prefix: 'AIza', rest })),
  alnum(10, 30).map((rest) => ({ prefix: 'xoxb-', rest })),
  fc.tuple(alnum(10, 30), alnum(10, 30), alnum(10, 30)).map(([a, b, c]) => ({ prefix: 'eyJ', rest: `${a}.${b}.${c}` })),
  fc.tuple(lowerDigits(1, 20), lowerDigits(1, 15), fc.constantFrom('com', 'org', 'io', 'de', 'example')).map(([local, host, tld]) => ({
    prefix: '',
    rest: `${local}@${host}.${tld}`,
  })),
  fc.tuple(octet, octet, octet, octet).map((parts) => ({ prefix: '', rest: parts.join('.') })),
  // a social security number the SSA can issue (area 001–899 but 666, group 01–99, serial 0001–9999)
  fc.tuple(fc.integer({ min: 100, max: 899 }).filter((area) => area !== 666), fc.integer({ min: 10, max: 99 }), fc.integer({ min: 1000, max: 9999 })).map(([a, b, c]) => ({
    prefix: '',
    rest: `${a}-${b}-${c}`,
  })),
  // E.164 phone numbers, written plain or grouped
  fc.tuple(fc.constantFrom('1', '44', '49', '33', '81', '61', '353'), fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 9, maxLength: 10 }), fc.boolean()).map(([country, digits, grouped]) => {
    const national = `${1 + ((digits[0] as number) % 9)}${digits.slice(1).join('')}`;
    return { prefix: '', rest: grouped ? `+${country} ${national.slice(0, 3)} ${national.slice(3, 6)} ${national.slice(6)}` : `+${country}${national}` };
  }),
  // IBANs with valid check digits
  fc.tuple(fc.constantFrom<[string, number]>(['DE', 18], ['GB', 18], ['FR', 23], ['NL', 14], ['ES', 20], ['NO', 11], ['CH', 17]), fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 23, maxLength: 23 })).map(
    ([[country, bbanLength], digits]) => ({ prefix: '', rest: ibanOf(country, digits.slice(0, bbanLength).join('')) }),
  ),
  fc.constantFrom('4111111111111111', '5500005555555559', '4012 8888 8888 1881', '378282246310005').map((rest) => ({ prefix: '', rest })),
  fc.tuple(lowerDigits(1, 12), lowerDigits(0, 20)).map(([host, path]) => ({ prefix: 'https://', rest: `${host}.example.com/${path}x` })),
);

const HOMOGLYPHS: Record<string, string> = { A: 'А', K: 'К', S: 'Ѕ', I: 'І', x: 'х', o: 'о', e: 'е' };
export const INVISIBLE = ['\u200b', '\u00ad', '\u2060', '\ufeff', '\u200d', '\ufe0f'];
const fullWidth = (char: string) => (/[0-9A-Za-z@]/.test(char) ? String.fromCharCode(char.charCodeAt(0) + 0xfee0) : char);

/** A secret as a person reads it, and how it is written. */
export const secretArbitrary = fc
  .record({
    secret: presetSecret,
    homoglyphs: fc.boolean(),
    invisible: fc.array(fc.tuple(fc.nat(), fc.constantFrom(...INVISIBLE)), { maxLength: 3 }),
    fullWidth: fc.array(fc.nat(), { maxLength: 4 }),
  })
  .map(({ secret, homoglyphs, invisible, fullWidth: widened }) => {
    const prefix = homoglyphs ? [...secret.prefix].map((char) => HOMOGLYPHS[char] ?? char).join('') : secret.prefix;
    const chars = [...prefix, ...secret.rest];
    for (const index of widened) {
      const at = index % chars.length;
      chars[at] = fullWidth(chars[at] as string);
    }
    for (const [index, char] of invisible) chars.splice(1 + (index % (chars.length - 1)), 0, char);
    return chars.join('');
  });

