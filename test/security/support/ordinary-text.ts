/**
 * A false-positive corpus for the regex presets (issue 24 §8): ordinary prose, numbers, dates and
 * times, street addresses, code, and chat replies — the text an assistant writes every day, with
 * the words the presets used to mistake for secrets ("the bearer of bad news", "10 000 000",
 * `api_key = load_key()`, `sk-learn`). Generated deterministically from templates (a seeded
 * generator, no downloads), so the corpus is the same on every run; `ordinarySentence(random)`
 * draws one sentence for the fast-check property.
 */

/** A deterministic generator of numbers in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const pad = (value: number, width: number) => String(value).padStart(width, '0');

const NAMES = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Dennis', 'Barbara', 'Ken', 'Radia', 'Tim', 'Frances', 'Edsger'];
const NOUNS = ['report', 'meeting', 'budget', 'release', 'invoice', 'contract', 'schedule', 'survey', 'draft', 'proposal', 'bug', 'test suite'];
const VERBS = ['reviewed', 'approved', 'updated', 'shipped', 'rejected', 'signed', 'postponed', 'rewrote', 'merged', 'archived'];
const PLACES = ['Berlin', 'Lisbon', 'Osaka', 'Toronto', 'Nairobi', 'Lima', 'Oslo', 'Dublin', 'Austin', 'Seoul'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const STREETS = ['Main Street', 'Baker Street', 'Rue de Rivoli', 'Unter den Linden', 'Calle Mayor', 'Via Roma', 'Elm Avenue', 'Queen Street West'];

/** Hand-written lines: the words and shapes the presets must not take for secrets. */
const FIXED = [
  'She was the bearer of bad news, and nobody thanked her for it.',
  'Bearer bonds were popular in the 1980s, before regulators stepped in.',
  'He served as a pall bearer at his grandfather’s funeral.',
  'The standard-bearer of the party spoke for an hour.',
  'The bearer of this letter is a friend; please help them.',
  'Bearer tokens are described in RFC 6750, section 2.1.',
  'Use the Authorization header with the Bearer scheme.',
  'The city has about 10 000 000 inhabitants.',
  'Revenue grew to 1,234,567 dollars, up from 987,654.',
  'Die Stadt hat 3.645.000 Einwohner und 12.345 Straßen.',
  'La population est de 2 161 000 habitants.',
  'Set your API key in the settings page, then restart the app.',
  'Never paste your secret key into a chat.',
  'We trained the model with sk-learn and scikit-learn pipelines.',
  'The class .sk-button-primary-large sets the padding.',
  'Done!',
  'Done! Anything else?',
  'Here is the summary you asked for.',
  'I could not find that file; could you check the path?',
  'Call me when you land.',
  'The meeting moved to room 101 on the 3rd floor.',
  'Flight LH 400 leaves at 10:35 from gate B22.',
  'ISBN 978-0-306-40615-7 is the reference edition.',
  'The answer is 42, and 2^32 is 4294967296.',
  'Pi is roughly 3.14159265358979 and e is 2.718281828459045.',
  'Version 1.2.3 fixes the crash; 1.2.4 adds dark mode.',
  'The patch bumps 4.18.2 to 4.19.0.',
  'Temperatures ranged from -5 to 12 degrees.',
  'The score was 3-1 after extra time.',
  'Chapter 3, verses 16-18, are quoted in full.',
  'Our office hours are 9:00-17:30, Monday to Friday.',
  'The route is 42.195 km long.',
  'Order #48213 shipped on 2024-03-05.',
  'Ticket ABC-1234 is blocked by ABC-1199.',
  'Mail them at the front desk, not by e-mail.',
  'Write to ada at example dot com if the form fails.',
  'Visit example.com or docs.example.org for details.',
  'HTTP and HTTPS are both supported.',
  'The token count was 1,024 for the prompt and 256 for the answer.',
  'AKIA is the prefix AWS uses for access key IDs.',
  'JWTs start with eyJ because that is base64 for {".',
  'Use ghp_ for personal tokens and gho_ for OAuth ones.',
  'A Slack bot token begins with xoxb-.',
  'Google keys begin with AIza.',
  'IBANs start with a country code and two check digits, like DE or FR.',
  'Account numbers are not IBANs: see form AB12 CDEF GHIJ.',
  'The reference code is AB12 3456 7890.',
  'Section 1.2 covers setup; section 1.3 covers upgrades.',
  '50% of users opened it, 100% of admins did.',
  'AT&T and T-Mobile both offer that plan.',
  'Q&A starts at 5 p.m.; bring your questions.',
  'The formula is a*b + c*d, not a**b.',
  'Use **bold** for emphasis and `code` for identifiers.',
  'Escape a literal asterisk as \\* in Markdown.',
  'Rock & roll, salt & pepper, R&D.',
  'It costs 12,50 € or $13.99, whichever is less.',
  'The warehouse stores 1 200 pallets and 15 000 boxes.',
  'Weights: 0.5 kg, 0.25 kg and 0.125 kg.',
  'Coordinates: 52.5200° N, 13.4050° E.',
  'The SKU is SKU-48213-BLK, size 42.',
  'See page 10, paragraph 2, line 5.',
  'Please call the front desk at extension 4471.',
];

/** Lines of code an assistant writes (JavaScript, Python, SQL, shell, CSS, config). */
const CODE = [
  'const bearer = getToken();',
  "headers['Authorization'] = `Bearer ${token}`;",
  'api_key = os.environ["API_KEY"]',
  'api_key = load_api_key_from_environment()',
  "const apiKey = process.env.OPENAI_API_KEY ?? '';",
  'API_SECRET: ${{ secrets.API_SECRET }}',
  'import sklearn.linear_model as sk',
  'for (let i = 0; i < 1000000; i++) total += i;',
  'x = 10_000_000',
  'SELECT id, email FROM users WHERE id = 12345 LIMIT 10;',
  'UPDATE orders SET status = 2 WHERE created_at < NOW() - INTERVAL 30 DAY;',
  'git commit -m "fix: handle empty input"',
  'docker run -p 8080:80 nginx:1.25',
  'chmod 755 deploy.sh && ./deploy.sh --env staging',
  '.sk-card { margin: 0 auto; color: #ff0000; }',
  'width: calc(100% - 24px);',
  'timeout_ms: 30000',
  'retries: 3',
  'version: "3.9"',
  'id = "123e4567-e89b-12d3-a456-426614174000"',
  'sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
  'commit 3f786850e387550fdab836ed7e6dc881de23001b',
  'if (bearer === undefined) throw new Error("no token");',
  'def get_secret_key(name): return vault.read(name)',
  'let phone = user.phone ?? "";',
  'const iban = form.iban.trim().toUpperCase();',
  'const card = parseCard(input); // Luhn checked below',
  'return a ** 2 + b ** 2;',
  'matrix[12][34] = 0.5;',
  'assert.equal(sum([1, 2, 3]), 6);',
  'println!("{}", 2_u64.pow(40));',
  'const EPOCH = 1705314600;',
  'const created = 1705314600000;',
  'range(0, 100, 5)',
  'ports: ["3000:3000", "9229:9229"]',
];

function prose(random: Random): string {
  const name = pick(random, NAMES);
  switch (int(random, 0, 7)) {
    case 0:
      return `${name} ${pick(random, VERBS)} the ${pick(random, NOUNS)} on ${pick(random, MONTHS)} ${int(random, 1, 28)}.`;
    case 1:
      return `The ${pick(random, NOUNS)} from ${pick(random, PLACES)} was ${pick(random, VERBS)} by ${name} and ${pick(random, NAMES)}.`;
    case 2:
      return `After ${int(random, 2, 59)} minutes, ${name} said the ${pick(random, NOUNS)} looked fine.`;
    case 3:
      return `${name} was the bearer of ${pick(random, ['good', 'bad', 'surprising', 'old'])} news about the ${pick(random, NOUNS)}.`;
    case 4:
      return `Please send the ${pick(random, NOUNS)} to ${name} in ${pick(random, PLACES)} before Friday.`;
    case 5:
      return `We expect ${int(random, 2, 99)} people at the ${pick(random, NOUNS)} review in ${pick(random, PLACES)}.`;
    case 6:
      return `Done! The ${pick(random, NOUNS)} is ready, ${name}.`;
    default:
      return `${name} asked whether the ${pick(random, NOUNS)} needs a new key or token.`;
  }
}

function numbers(random: Random): string {
  const thousands = (value: number, separator: string) => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, separator);
  switch (int(random, 0, 6)) {
    case 0:
      return `The population is ${thousands(int(random, 1_000, 99_000_000), pick(random, [' ', ',', '.', '\u202f']))}.`;
    case 1:
      return `Revenue was ${thousands(int(random, 1_000, 999_999_999), ',')}.${pad(int(random, 0, 99), 2)} dollars.`;
    case 2:
      return `It weighs ${int(random, 1, 999)}.${int(random, 0, 9)} kg and costs ${int(random, 1, 99)},${pad(int(random, 0, 99), 2)} €.`;
    case 3:
      return `Scores: ${int(random, 0, 9)}-${int(random, 0, 9)}, ${int(random, 0, 9)}-${int(random, 0, 9)} and ${int(random, 0, 99)}%.`;
    case 4:
      return `Version ${int(random, 0, 20)}.${int(random, 0, 40)}.${int(random, 0, 99)} ships ${int(random, 1, 9)} fixes.`;
    case 5:
      return `Order #${int(random, 10_000, 99_999_999)} has ${int(random, 1, 40)} items.`;
    default:
      return `Between ${int(random, 1900, 2030)} and ${int(random, 1900, 2030)} it grew by ${thousands(int(random, 1000, 9_999_999), ' ')} units.`;
  }
}

function dates(random: Random): string {
  const year = int(random, 1990, 2035);
  const month = int(random, 1, 12);
  const day = int(random, 1, 28);
  const hour = int(random, 0, 23);
  const minute = int(random, 0, 59);
  switch (int(random, 0, 6)) {
    case 0:
      return `It is due on ${year}-${pad(month, 2)}-${pad(day, 2)}.`;
    case 1:
      return `Am ${pad(day, 2)}.${pad(month, 2)}.${year} um ${pad(hour, 2)}:${pad(minute, 2)} Uhr.`;
    case 2:
      return `Due ${pad(month, 2)}/${pad(day, 2)}/${year} at ${(hour % 12) + 1}:${pad(minute, 2)} ${hour < 12 ? 'AM' : 'PM'}.`;
    case 3:
      return `Logged at ${year}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(int(random, 0, 59), 2)}.${pad(int(random, 0, 999), 3)}Z.`;
    case 4:
      return `${MONTHS[month - 1]} ${day}, ${year}, from ${pad(hour, 2)}:${pad(minute, 2)} to ${pad((hour + 1) % 24, 2)}:${pad(minute, 2)}.`;
    case 5:
      return `Le ${pad(day, 2)}/${pad(month, 2)}/${year} à ${pad(hour, 2)}h${pad(minute, 2)}.`;
    default:
      return `The period ${pad(day, 2)}.${pad(month, 2)}.${year} – ${pad(day, 2)}.${pad(month, 2)}.${year + 1} is covered.`;
  }
}

function addresses(random: Random): string {
  const number = int(random, 1, 2999);
  switch (int(random, 0, 4)) {
    case 0:
      return `Ship it to ${number} ${pick(random, STREETS)}, ${pick(random, PLACES)}, CA ${pad(int(random, 10000, 99999), 5)}.`;
    case 1:
      return `Office: ${pick(random, STREETS)} ${int(random, 1, 200)}, ${pad(int(random, 1000, 99999), 5)} ${pick(random, PLACES)}.`;
    case 2:
      return `Apt ${int(random, 1, 40)}${pick(random, ['A', 'B', 'C'])}, ${number} W ${int(random, 1, 120)}th St, New York, NY ${pad(int(random, 10000, 10299), 5)}-${pad(int(random, 0, 9999), 4)}.`;
    case 3:
      return `${int(random, 1, 300)} ${pick(random, STREETS)}, London ${pick(random, ['SW1A', 'NW1', 'EC2A', 'W1D'])} ${int(random, 1, 9)}${pick(random, ['AA', 'XE', 'BB'])}.`;
    default:
      return `Suite ${int(random, 100, 999)}, Floor ${int(random, 1, 60)}, ${pick(random, PLACES)} ${pad(int(random, 100, 999), 3)}-${pad(int(random, 1000, 9999), 4)}.`;
  }
}

/** One ordinary sentence (prose, numbers, dates, addresses, code or a fixed line). */
export function ordinarySentence(random: Random): string {
  switch (int(random, 0, 6)) {
    case 0:
      return prose(random);
    case 1:
      return numbers(random);
    case 2:
      return dates(random);
    case 3:
      return addresses(random);
    case 4:
      return pick(random, CODE);
    default:
      return pick(random, FIXED);
  }
}

/** The corpus: every fixed line and code line, then `generated` sentences from seed 2024. */
export function ordinaryCorpus(generated = 6000): string[] {
  const random = seededRandom(2024);
  return [...FIXED, ...CODE, ...Array.from({ length: generated }, () => ordinarySentence(random))];
}
