/**
 * Issue 24 §4: under `processorsMiddleware`, every channel a client reads is guarded.
 *
 * - `streamText({ includeRawChunks: true })`: `raw` parts carry the provider's unfiltered payload,
 *   and each one, passing through the output chain, released the text a processor held back. With
 *   output processors, raw parts are withheld: the client text is exactly the redacted text, for
 *   any secret, any delta sizes, raw parts anywhere. Before: failed after 16 cases (the secret in
 *   the raw parts; with a raw part inside the address, the redacted text showed `[EMAIL]` twice).
 * - A posted history: input guards checked only the last user turn (earlier turns were history).
 *   Every client turn is now input, as on the Agent path: a secret in any turn, any role, is caught
 *   before the model is called. Before: failed after 13 cases (a secret in an earlier turn).
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` / 10 each (CI 100; the soak run 2,000).
 */
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { streamText, wrapLanguageModel, type ModelMessage } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { processorsMiddleware } from '../../src/ai-sdk/index.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, splitText } from '../../src/testing/model-parts.js';
import { checkProperty, expectNone, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 10));

const word = fc.stringMatching(/^[a-z]{1,8}$/);
const email = fc.tuple(word, word).map(([local, domain]) => `${local}.x@${domain}.com`);
const prose = fc.array(word, { minLength: 0, maxLength: 6 }).map((words) => words.join(' '));

/** Text parts of `text` in deltas of the given sizes, a raw part (echoing the delta) where `rawAt` says. */
function partsWithRaw(text: string, sizes: number[], rawAt: boolean[]): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'text-start', id: 't' }];
  let offset = 0;
  let index = 0;
  while (offset < text.length) {
    const size = sizes[index % sizes.length] ?? 1;
    const delta = text.slice(offset, offset + size);
    if (rawAt[index % rawAt.length] === true) parts.push({ type: 'raw', rawValue: { choices: [{ delta: { content: delta } }] } });
    parts.push({ type: 'text-delta', id: 't', delta });
    offset += size;
    index++;
  }
  parts.push({ type: 'text-end', id: 't' }, finishPart('stop'));
  return parts;
}

describe('processorsMiddleware: every channel (property)', () => {
  it(
    `raw parts: with output processors none reaches the client and the text is exactly the redacted text (${runs} cases)`,
    async () => {
      const arbitrary = fc.record({
        before: prose,
        secret: email,
        after: prose,
        sizes: fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 }),
        rawAt: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
      });
      await checkProperty(
        'middleware raw parts',
        arbitrary,
        async ({ before, secret, after, sizes, rawAt }) => {
          const text = `${before} ${secret} ${after}`;
          const model = mockModel({ parts: partsWithRaw(text, sizes, rawAt) });
          const filter = new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' });
          const result = streamText({
            model: wrapLanguageModel({ model, middleware: processorsMiddleware({ outputProcessors: [filter] }) }),
            prompt: 'Who do I write to?',
            includeRawChunks: true,
          });
          const problems: string[] = [];
          let shown = '';
          for await (const part of result.fullStream) {
            if (part.type === 'raw') problems.push(`a raw part reached the client: ${JSON.stringify(part.rawValue)}`);
            if (part.type === 'text-delta') shown += part.text;
          }
          if (shown !== `${before} [EMAIL] ${after}`) problems.push(`client text ${JSON.stringify(shown)}`);
          expectNone(problems, JSON.stringify(text));
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('raw parts still pass when no output processor is configured (includeRawChunks keeps its meaning)', async () => {
    const model = mockModel({ parts: partsWithRaw('plain text', [3], [true]) });
    const result = streamText({ model: wrapLanguageModel({ model, middleware: processorsMiddleware({}) }), prompt: 'x', includeRawChunks: true });
    const types: string[] = [];
    for await (const part of result.fullStream) types.push(part.type);
    expect(types.filter((type) => type === 'raw')).toHaveLength(4);
  });

  it(
    `a posted history: a secret in any client turn is caught before the model is called (${runs} cases)`,
    async () => {
      const arbitrary = fc
        .record({ turns: fc.array(prose, { minLength: 1, maxLength: 8 }), secret: email })
        .chain(({ turns, secret }) => fc.record({ turns: fc.constant(turns), secret: fc.constant(secret), at: fc.nat({ max: turns.length - 1 }) }));
      await checkProperty(
        'middleware posted history',
        arbitrary,
        async ({ turns, secret, at }) => {
          // user, assistant, user, … ending with a user turn
          const count = turns.length % 2 === 0 ? turns.length + 1 : turns.length;
          const messages: ModelMessage[] = Array.from({ length: count }, (_, index) => {
            const text = `${turns[index] ?? 'go on'}${index === at ? ` mail ${secret}` : ''}`;
            return index % 2 === 0 ? { role: 'user', content: text } : { role: 'assistant', content: text };
          });
          const model = mockModel({ parts: [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'ok' }, { type: 'text-end', id: 't' }, finishPart('stop')] });
          const guard = new RegexFilterProcessor({ presets: 'pii', strategy: 'block', phase: 'input' });
          const errors: unknown[] = [];
          const result = streamText({
            model: wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [guard] }) }),
            messages,
            onError: ({ error }) => void errors.push(error),
          });
          await result.consumeStream();
          const problems: string[] = [];
          if (model.calls.length !== 0) problems.push(`the model was called with the secret in turn ${at} (${messages[at]?.role})`);
          if (errors.length === 0) problems.push('no tripwire reached the caller');
          expectNone(problems, JSON.stringify(messages));
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
