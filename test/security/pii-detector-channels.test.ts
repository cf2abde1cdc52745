/** PIIDetector beyond text deltas: tool results and the stored reply; keyed hashes (issue 13 §4). */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { judgeModel } from '../processors/support/harness.js';
import { leaks, observeRun } from './support/leak-harness.js';

const email = 'grace.hopper@navy.example';
const detectsEmail = () =>
  judgeModel(({ prompt }) => (prompt.includes(email) ? JSON.stringify({ detections: [{ type: 'email', value: email, confidence: 0.99 }] }) : '{"detections": []}'));

describe('PIIDetector on tool results', () => {
  it('a detected value in a tool result reaches no consumer, store or later model call', async () => {
    const observations = await observeRun({ channel: 'tool-result', secret: email, chunkSize: 5 }, () => [
      new PIIDetector({ model: detectsEmail(), strategy: 'redact', redactionMethod: 'placeholder' }),
    ]);
    expect(leaks(observations, email)).toEqual([]);
    expect(observations.find((observation) => observation.consumer === 'memory t-generate')?.seen).toContain('found [EMAIL]');
  });

  it('block mode tripwires the run on a tool result', async () => {
    const observations = await observeRun({ channel: 'tool-result', secret: email, chunkSize: 5 }, () => [new PIIDetector({ model: detectsEmail(), strategy: 'block' })]);
    expect(leaks(observations, email)).toEqual([]);
    expect(observations.find((observation) => observation.consumer === 'generate()')?.seen).toContain('"processorId":"pii-detector"');
  });
});

describe("PIIDetector 'hash' redaction is keyed", () => {
  const value = '4711';
  it('is not the plain SHA-256 of the value, differs between instances, and is stable with a shared key', () => {
    const plain = `[HASH:${createHash('sha256').update(value).digest('hex').slice(0, 8)}]`;
    const first = new PIIDetector({ model: detectsEmail(), redactionMethod: 'hash' });
    const second = new PIIDetector({ model: detectsEmail(), redactionMethod: 'hash' });
    expect(first.redactValue(value, 'pin')).toMatch(/^\[HASH:[0-9a-f]{8}\]$/);
    expect(first.redactValue(value, 'pin')).toBe(first.redactValue(value, 'pin'));
    expect(first.redactValue(value, 'pin')).not.toBe(plain);
    expect(first.redactValue(value, 'pin')).not.toBe(second.redactValue(value, 'pin'));
    const keyed = (key: string) => new PIIDetector({ model: detectsEmail(), redactionMethod: 'hash', hashKey: key }).redactValue(value, 'pin');
    expect(keyed('team-secret')).toBe(keyed('team-secret'));
    expect(keyed('team-secret')).not.toBe(keyed('other-secret'));
  });

  it('a brute force over all 4-digit values without the key finds nothing', () => {
    const hashed = new PIIDetector({ model: detectsEmail(), redactionMethod: 'hash' }).redactValue(value, 'pin');
    const candidates = Array.from({ length: 10_000 }, (_, index) => String(index).padStart(4, '0'));
    const hits = candidates.filter((candidate) => `[HASH:${createHash('sha256').update(candidate).digest('hex').slice(0, 8)}]` === hashed);
    expect(hits).toEqual([]);
  });
});
