/**
 * Property (issue 24 §1): a secret from the presets, written with encodings a reader undoes on the
 * way to the screen, never reaches it.
 * - Tool-call arguments: any of the secret's characters written as JSON escapes (`\uXXXX`, `\/`),
 *   the secret in a value or a key, the arguments split anywhere — at no point of the client's
 *   partial-JSON parse, and not in the final input, on `processOutputStream`, the UI message stream
 *   (`release: 'live'` and `'accepted'`) and the AI SDK middleware.
 * - Text: any of its characters written as character references (decimal, hex), percent-encoded
 *   UTF-8 or a Markdown escape (punctuation), split anywhere — the stream, decoded as a renderer
 *   decodes it, never shows it.
 *
 * Case counts: `processOutputStream` and text properties `RXAGENT_PROPERTY_RUNS` each (CI 1,000;
 * soak 20,000); the end-to-end paths (three agent or `streamText` runs per case) a tenth (CI 100;
 * soak 2,000).
 */
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, it } from 'vitest';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { normalizeForMatching } from '../../src/processors/internal/normalized-text.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { jsonEscaped, pieces, shownToolInput, type EncodedInputPath } from './support/encoded-input.js';
import { presetSecret } from './support/secrets.js';

const guards = () => [new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' })];
const secretText = presetSecret.map(({ prefix, rest }) => prefix + rest);
const sizes = fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 30 });

/** Arguments text with the secret JSON-escaped where `escapes` says, as a value or as a key. */
const encodedArguments = fc
  .record({ secret: secretText, escapes: fc.array(fc.boolean(), { minLength: 1, maxLength: 64 }), asKey: fc.boolean(), sizes })
  .map(({ secret, escapes, asKey, sizes: cut }) => {
    const written = jsonEscaped(secret, (index) => escapes[index % escapes.length] === true);
    const argsText = asKey ? `{"query":"x","${written}":"y"}` : `{"query":"find ${written} now"}`;
    return { secret, argsText, deltas: pieces(argsText, cut) };
  });

async function assertHidden(path: EncodedInputPath, secret: string, argsText: string, deltas: readonly string[]): Promise<void> {
  const needle = normalizeForMatching(secret).text;
  const shown = await shownToolInput(path, deltas, guards);
  const leaked = shown.find((text) => normalizeForMatching(text).text.includes(needle));
  if (leaked !== undefined) throw new Error(`${path}: ${JSON.stringify(argsText)} split ${JSON.stringify(deltas)} showed ${JSON.stringify(leaked)}`);
}

/** A character written as a renderer decodes it: a reference, percent-encoding or a Markdown escape. */
function encodeChar(char: string, how: number): string {
  const code = char.codePointAt(0) as number;
  switch (how % 5) {
    case 0:
      return `&#${code};`;
    case 1:
      return `&#x${code.toString(16)};`;
    case 2:
      return [...new TextEncoder().encode(char)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
    case 3:
      return /[!-/:-@[-`{-~]/.test(char) ? `\\${char}` : char;
    default:
      return char;
  }
}

/** The test's own reading of the forms {@link encodeChar} writes (independent of the code under test). */
function rendered(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);|&#([0-9]+);/gi, (_match, hex: string | undefined, decimal: string | undefined) => String.fromCodePoint(hex === undefined ? Number(decimal) : Number.parseInt(hex, 16)))
    .replace(/(?:%[0-9A-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    })
    .replace(/\\([!-/:-@[-`{-~])/g, '$1');
}

describe('secrets in encoded forms (property-based)', () => {
  it(
    'tool-call arguments with JSON escapes: processOutputStream never shows the secret to the client',
    async () => {
      await checkProperty('encoded-tool-input', encodedArguments, ({ secret, argsText, deltas }) => assertHidden('processOutputStream', secret, argsText, deltas));
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'tool-call arguments with JSON escapes: the UI stream (live, accepted) and the middleware never show it',
    async () => {
      const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 10));
      await checkProperty(
        'encoded-tool-input-end-to-end',
        encodedArguments,
        async ({ secret, argsText, deltas }) => {
          for (const path of ['ui live', 'ui accepted', 'middleware'] as const) await assertHidden(path, secret, argsText, deltas);
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS * 2,
  );

  it(
    'text with references, percent-encoding or Markdown escapes: the stream never shows the secret',
    async () => {
      const encodedText = fc.record({ secret: secretText, hows: fc.array(fc.nat(), { minLength: 1, maxLength: 64 }), sizes });
      await checkProperty('encoded-text', encodedText, async ({ secret, hows, sizes: cut }) => {
        const written = [...secret].map((char, index) => encodeChar(char, hows[index % hows.length] as number)).join('');
        const text = `Here it is: ${written} and done.`;
        const input = [chunk.textStart(), ...pieces(text, cut).map((piece) => chunk.textDelta(piece)), chunk.textEnd(), chunk.finish()];
        const output = await lastValueFrom(from(input).pipe(processOutputStream(guards(), createRunContext()), toArray()));
        const streamed = output.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('');
        if (rendered(streamed).includes(secret)) {
          throw new Error(`${JSON.stringify(text)} streamed as ${JSON.stringify(streamed)}`);
        }
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
