/**
 * Property (issue 24 §7): boundaries are boundaries. A text ending in a complete match, followed
 * across a boundary by any word that would extend the match if the two were read as one — two
 * text blocks, two reasoning blocks, two steps, or a rejected attempt and its retry — streams and is
 * stored exactly as each text would be on its own. After a rejected attempt, whatever it ended
 * with (a whole secret or any prefix of one), the retried attempt streams and is stored as if it
 * were the first.
 *
 * Case counts: the stream-level property `RXAGENT_PROPERTY_RUNS` (CI 1,000; soak 20,000); the agent
 * properties (with memory) a tenth each (CI 100; soak 2,000).
 */
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, reasoningParts, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { secretArbitrary } from './support/secrets.js';

const guard = () => new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' });
const alone = (text: string) => guard().redactText(text);

/** A word that would extend most matches: letters, digits, dots, dashes. */
const extension = fc
  .tuple(fc.string({ unit: fc.constantFrom(...'abcXYZ0189.-_'), minLength: 1, maxLength: 8 }), fc.constantFrom('!', ' is next.', '', ' done'))
  .map(([word, rest]) => word + rest);
const lead = fc.constantFrom('', 'see ', 'Mail: ', 'key=');
const sizes = fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 12 });

function deltas(text: string, cut: readonly number[]): string[] {
  const pieces: string[] = [];
  for (let at = 0, index = 0; at < text.length; index++) {
    const size = cut[index % cut.length] as number;
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  return pieces;
}

const perBlock = (output: readonly ChunkType[], id: string) =>
  output.map((part) => ((part.type === 'text-delta' || part.type === 'reasoning-delta') && part.payload.id === id ? part.payload.text : '')).join('');

const rejectFirstAttempt: Processor = {
  id: 'reject-first-attempt',
  processOutputStep: ({ abort, retryCount }) => {
    if (retryCount === 0) abort('try again', { retry: true });
    return undefined as never;
  },
};

async function runAgent(model: ReturnType<typeof mockModel>, processors: Processor[], retries?: number) {
  const storage = new InMemoryStorage();
  const agent = new Agent({
    id: 'a',
    model,
    memory: new Memory({ storage }),
    tools: { noop: { description: 'does nothing', execute: () => 'ok' } },
    outputProcessors: processors,
    ...(retries === undefined ? {} : { maxProcessorRetries: retries }),
  });
  const chunks = await lastValueFrom(agent.stream$('x', { memory: { thread: 't', resource: 'u' } }).pipe(toArray()));
  const stored = (await storage.getMessages({ threadId: 't' }))
    .filter((message) => message.role === 'assistant')
    .flatMap((message) => message.content.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])));
  const lastStep = chunks.slice(chunks.findLastIndex((part) => part.type === 'step-start'));
  return { chunks, stored, lastStepText: lastStep.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('') };
}

function expectEqual(actual: unknown, expected: unknown, context: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`${context}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
}

describe('boundaries are boundaries (property-based)', () => {
  it(
    'two blocks (text or reasoning), the first ending in a complete match: each streams as it would alone',
    async () => {
      const arbitrary = fc.record({ lead, secret: secretArbitrary, next: extension, cut1: sizes, cut2: sizes, kind: fc.constantFrom('text', 'reasoning') });
      await checkProperty('boundaries-blocks', arbitrary, async ({ lead: before, secret, next, cut1, cut2, kind }) => {
        const first = before + secret;
        const block = (id: string, text: string, cut: readonly number[]): ChunkType[] =>
          kind === 'text'
            ? [chunk.textStart(id), ...deltas(text, cut).map((piece) => chunk.textDelta(piece, id)), chunk.textEnd(id)]
            : [chunk.reasoningStart(id), ...deltas(text, cut).map((piece) => chunk.reasoningDelta(piece, id)), chunk.reasoningEnd(id)];
        const input = [...block('b1', first, cut1), ...block('b2', next, cut2), chunk.finish()];
        const output = await lastValueFrom(from(input).pipe(processOutputStream([guard()], createRunContext()), toArray()));
        expectEqual([perBlock(output, 'b1'), perBlock(output, 'b2')], [alone(first), alone(next)], `${kind} ${JSON.stringify([first, next])}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'agent with memory: across text blocks and across steps, each text streams and is stored as it would alone',
    async () => {
      const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 10));
      const arbitrary = fc.record({ lead, secret: secretArbitrary, next: extension, chunkSize: fc.integer({ min: 1, max: 9 }), boundary: fc.constantFrom('block', 'step') });
      await checkProperty(
        'boundaries-agent',
        arbitrary,
        async ({ lead: before, secret, next, chunkSize, boundary }) => {
          const first = before + secret;
          const model = mockModel({
            parts: ({ callIndex }) =>
              boundary === 'block' ? [...textParts(first, { id: 'b1', chunkSize }), ...textParts(next, { id: 'b2', chunkSize }), finishPart()]
              : callIndex === 0 ? [...reasoningParts('thinking'), ...textParts(first, { id: 'b1', chunkSize }), ...toolCallParts('noop', {}), finishPart('tool-calls')]
              : [...textParts(next, { id: 'b1', chunkSize }), finishPart()],
          });
          const { chunks, stored } = await runAgent(model, [guard()]);
          const streamed = chunks.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join('');
          expectEqual([streamed, stored], [alone(first) + alone(next), [alone(first), alone(next)]], `${boundary} ${JSON.stringify([first, next])}`);
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS * 2,
  );

  it(
    'a rejected attempt leaves no context: whatever the draft ended with, the retry streams and is stored as if first',
    async () => {
      const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 10));
      const arbitrary = fc.record({ lead, secret: secretArbitrary, at: fc.nat(), next: extension, chunkSize: fc.integer({ min: 1, max: 9 }) });
      await checkProperty(
        'boundaries-retry',
        arbitrary,
        async ({ lead: before, secret, at, next, chunkSize }) => {
          // the draft ends anywhere in (or right after) the secret; the retry goes on with its rest
          const whole = before + secret;
          const cut = 1 + (at % whole.length);
          const draft = whole.slice(0, cut);
          const retried = whole.slice(cut) + next;
          const model = mockModel({
            parts: ({ callIndex }) => (callIndex === 0 ? [...textParts(draft, { id: 'b1', chunkSize }), finishPart()] : [...textParts(retried || 'ok', { id: 'b1', chunkSize }), finishPart()]),
          });
          const expected = alone(retried || 'ok');
          const { stored, lastStepText } = await runAgent(model, [guard(), rejectFirstAttempt], 1);
          expectEqual([lastStepText, stored], [expected, [expected]], `draft ${JSON.stringify(draft)}, retry ${JSON.stringify(retried)}`);
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS * 2,
  );
});
