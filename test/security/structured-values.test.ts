/**
 * Object keys and depth (issue 24 §2), end to end: a secret used as an object key or nested far
 * deeper than 64 levels — in a tool result, tool input or data chunk — is redacted (or blocks) in
 * every consumer and store; the PII detector judges and redacts keys too.
 */
import { describe, expect, it } from 'vitest';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { judgeModel, runOutputStream } from '../processors/support/harness.js';
import { deeplyNested, leaks, observeRun } from './support/leak-harness.js';

const email = 'grace.hopper@navy.example';

describe('RegexFilterProcessor on keys and deep values', () => {
  it('block: a key holding a secret, 10,000 levels deep in a data chunk, trips the run', async () => {
    const filter = new RegexFilterProcessor({ presets: ['secrets'], strategy: 'block' });
    const data = deeplyNested(10_000, { AKIAQWERTYUIOPASDFGH: true });
    const error = await runOutputStream([filter], [chunk.data('data-x', data)]).catch((caught: unknown) => caught);
    expect(TripWire.isInstance(error)).toBe(true);
    expect((error as TripWire).reason).toBe('Regex filter: blocked streaming content matching patterns: aws-key');
  });

  it('redact: two keys redacted to the same name both survive, suffixed', async () => {
    const filter = new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' });
    const result = { 'ada@example.com': { role: 'admin' }, 'bob@example.com': { role: 'user' } };
    const [out] = await runOutputStream([filter], [chunk.toolResult({ toolCallId: 'c1', toolName: 'users', args: {}, result })]);
    expect(out?.type === 'tool-result' ? out.payload.result : undefined).toEqual({ '[EMAIL]': { role: 'admin' }, '[EMAIL] (2)': { role: 'user' } });
  });
});

describe('PIIDetector on keys and deep values of tool results', () => {
  const detectsEmail = () =>
    judgeModel(({ prompt }) => (prompt.includes(email) ? JSON.stringify({ detections: [{ type: 'email', value: email, confidence: 0.99 }] }) : '{"detections": []}'));

  for (const channel of ['tool-result-key', 'tool-result-deep'] as const) {
    it(`${channel}: the judge sees the value, and no consumer, store or later model call does`, async () => {
      const observations = await observeRun({ channel, secret: email, chunkSize: 5 }, () => [
        new PIIDetector({ model: detectsEmail(), strategy: 'redact', redactionMethod: 'placeholder' }),
      ]);
      expect(leaks(observations, email)).toEqual([]);
      expect(observations.find((observation) => observation.consumer === 'memory t-generate')?.seen).toContain('[EMAIL]');
    });
  }
});
