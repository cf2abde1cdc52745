/**
 * Guardrails cover every channel (issue 13 §4): a secret the model or a tool puts into text,
 * reasoning, tool-call input, a tool result, a tool error or a data chunk reaches no consumer,
 * no store and no later model call, with the filter in redact and in block mode.
 */
import { describe, expect, it } from 'vitest';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { LEAK_CHANNELS, leaks, observeRun } from './support/leak-harness.js';

const secrets = {
  awsKey: 'AKIAQWERTYUIOPASDFGH',
  email: 'ada.lovelace@example.com',
  apiKey: 'sk-proj-abcdefghijklmnopqrstuvwx1234',
};

describe('RegexFilterProcessor on every channel (redact)', () => {
  const guards = () => [new RegexFilterProcessor({ presets: ['pii', 'secrets'], strategy: 'redact' })];
  for (const channel of LEAK_CHANNELS) {
    it(`${channel}: no consumer, store or later model call sees the secret`, async () => {
      for (const secret of Object.values(secrets)) {
        const observations = await observeRun({ channel, secret, chunkSize: 3 }, guards);
        expect(leaks(observations, secret), `${channel} / ${secret}`).toEqual([]);
      }
    });
  }

  it('the harness sees a leak when nothing guards the run', async () => {
    for (const channel of LEAK_CHANNELS) {
      const observations = await observeRun({ channel, secret: secrets.awsKey, chunkSize: 3 }, () => []);
      expect(leaks(observations, secrets.awsKey).length, channel).toBeGreaterThan(0);
    }
  });
});

describe('RegexFilterProcessor on every channel (block)', () => {
  const guards = () => [new RegexFilterProcessor({ presets: ['secrets'], strategy: 'block' })];
  for (const channel of LEAK_CHANNELS) {
    it(`${channel}: the run is tripwired and nothing of the secret is seen`, async () => {
      const observations = await observeRun({ channel, secret: secrets.awsKey, chunkSize: 4 }, guards);
      expect(leaks(observations, secrets.awsKey)).toEqual([]);
      const generated = observations.find((observation) => observation.consumer === 'generate()');
      expect(generated?.seen).toContain('"processorId":"regex-filter"');
    });
  }
});
