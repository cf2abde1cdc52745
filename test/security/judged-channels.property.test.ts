/**
 * Issue 24 §5: every channel for every guard. A model-backed guard judges what the client
 * receives: PIIDetector every channel (text, reasoning, tool-call input streamed and final, tool
 * results, tool errors, data chunks); blocks open at the same time are judged each on its own text,
 * so a value split across the deltas of one block is found even when another block's deltas come
 * between them.
 *
 * Case counts: end to end (five consumers, a store and later model calls per case)
 * `RXAGENT_PROPERTY_RUNS / 10` (at least 20; CI 100, soak 2,000); interleaved blocks
 * `RXAGENT_PROPERTY_RUNS` (CI 1,000, soak 20,000).
 */
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { judgedContents, judgeModel } from '../processors/support/harness.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { LEAK_CHANNELS, leaks, observeRun, type LeakChannel } from './support/leak-harness.js';

const word = (min: number, max: number) => fc.stringMatching(new RegExp(`^[a-z0-9]{${min},${max}}$`));
/** An e-mail address or an API-key-like token (no characters JSON would escape). */
const secretArbitrary = fc.oneof(
  fc.tuple(word(1, 12), word(1, 10), fc.constantFrom('com', 'org', 'example')).map(([local, host, tld]) => `${local}.x@${host}.${tld}`),
  word(20, 32).map((rest) => `sk-${rest}`),
);

/** A judge that reports `secret` as PII when the judged content holds it whole. */
function piiJudge(secret: string) {
  return judgeModel(({ prompt }) =>
    JSON.stringify({ detections: judgedContents(prompt).some((content) => content.includes(secret)) ? [{ type: 'api-key', value: secret, confidence: 0.99 }] : [] }),
  );
}

describe('PIIDetector judges every channel the client receives (property-based)', () => {
  it(
    'end to end: any secret in any channel, any delta size, redact or block — no consumer, UI stream, store or later model call sees it',
    async () => {
      const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 10));
      await checkProperty(
        'judged-channels-end-to-end',
        fc.tuple(secretArbitrary, fc.integer({ min: 1, max: 9 }), fc.constantFrom<LeakChannel>(...LEAK_CHANNELS), fc.constantFrom('redact' as const, 'block' as const)),
        async ([secret, chunkSize, channel, strategy]) => {
          const observations = await observeRun({ channel, secret, chunkSize }, () => [
            new PIIDetector({ model: piiJudge(secret), strategy, detectionTypes: ['api-key'], redactionMethod: 'placeholder' }),
          ]);
          const seen = leaks(observations, secret);
          if (seen.length > 0) throw new Error(`${channel}/${strategy}: ${JSON.stringify(secret)} seen by ${seen.join(', ')}`);
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS * 2,
  );

  it(
    'interleaved blocks: a secret split across the deltas of one block, with another open block\'s deltas between them, is judged whole per block',
    async () => {
      const scenario = fc.record({
        secret: secretArbitrary,
        kind: fc.constantFrom('text', 'reasoning'),
        cuts: fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 20 }),
        other: fc.array(word(1, 6), { minLength: 1, maxLength: 12 }),
        order: fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
        mode: fc.constantFrom('window' as const, 'final' as const),
      });
      await checkProperty('judged-channels-interleaved', scenario, async ({ secret, kind, cuts, other, order, mode }) => {
        const text = `Your key: ${secret} keep it safe.`;
        const pieces: string[] = [];
        for (let at = 0, index = 0; at < text.length; index++) {
          const size = cuts[index % cuts.length] as number;
          pieces.push(text.slice(at, at + size));
          at += size;
        }
        const start = (id: string) => (kind === 'text' ? chunk.textStart(id) : chunk.reasoningStart(id));
        const delta = (piece: string, id: string) => (kind === 'text' ? chunk.textDelta(piece, id) : chunk.reasoningDelta(piece, id));
        const end = (id: string) => (kind === 'text' ? chunk.textEnd(id) : chunk.reasoningEnd(id));
        // both blocks open, their deltas interleaved in a generated order
        const parts: ChunkType[] = [start('a'), start('b')];
        const secretPieces = [...pieces];
        const otherPieces = other.map((piece) => `${piece} `);
        for (let step = 0; secretPieces.length + otherPieces.length > 0; step++) {
          const takeSecret = otherPieces.length === 0 || (secretPieces.length > 0 && order[step % order.length] === true);
          if (takeSecret) parts.push(delta(secretPieces.shift() as string, 'a'));
          else parts.push(delta(otherPieces.shift() as string, 'b'));
        }
        parts.push(end('a'), end('b'), chunk.finish());
        const guard = new PIIDetector({ model: piiJudge(secret), streamMode: mode, detectionTypes: ['api-key'], redactionMethod: 'placeholder' });
        const output = await lastValueFrom(from(parts).pipe(processOutputStream([guard], createRunContext()), toArray()));
        const perBlock = new Map<string, string>();
        for (const part of output) {
          if (part.type === 'text-delta' || part.type === 'reasoning-delta') perBlock.set(part.payload.id, (perBlock.get(part.payload.id) ?? '') + part.payload.text);
        }
        const all = [...perBlock.values()].join('\n');
        if (all.includes(secret)) throw new Error(`leaked ${JSON.stringify(secret)}: ${JSON.stringify(parts.map((part) => ('payload' in part ? part.payload : part)))}`);
        if (perBlock.get('a') !== 'Your key: [API_KEY] keep it safe.') throw new Error(`block a streamed ${JSON.stringify(perBlock.get('a'))}`);
        if (perBlock.get('b') !== other.map((piece) => `${piece} `).join('')) throw new Error(`block b streamed ${JSON.stringify(perBlock.get('b'))}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('Moderation and SystemPromptScrubber judge what the model writes (text, reasoning, tool-call input)', () => {
  it(
    'a flagged passage in any model-written channel, any delta size, never reaches a consumer; the run ends in a tripwire',
    async () => {
      const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 20));
      const marker = fc.stringMatching(/^[a-z]{6,12}$/).map((letters) => `FORBIDDEN${letters}`);
      await checkProperty(
        'judged-channels-model-written',
        fc.tuple(marker, fc.integer({ min: 1, max: 9 }), fc.constantFrom<LeakChannel>('text', 'reasoning', 'tool-input'), fc.constantFrom('moderation', 'scrubber')),
        async ([secret, chunkSize, channel, guardName]) => {
          const flagged = (prompt: string) => judgedContents(prompt).some((content) => content.includes(secret));
          const guard = () =>
            guardName === 'moderation'
              ? new ModerationProcessor({ model: judgeModel(({ prompt }) => (flagged(prompt) ? '{"categories": {"violence": 0.97}}' : '{"categories": {}}')) })
              : new SystemPromptScrubber({
                  model: judgeModel(({ prompt }) => JSON.stringify({ detections: flagged(prompt) ? [{ value: secret, confidence: 0.9 }] : [] })),
                  strategy: 'block',
                });
          const observations = await observeRun({ channel, secret, chunkSize }, () => [guard()]);
          const seen = leaks(observations, secret);
          if (seen.length > 0) throw new Error(`${guardName}/${channel}: ${JSON.stringify(secret)} seen by ${seen.join(', ')}`);
          const generated = observations.find((observation) => observation.consumer === 'generate()')?.seen ?? '';
          if (!generated.includes('"tripwire"')) throw new Error(`${guardName}/${channel}: no tripwire`);
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS * 2,
  );
});

