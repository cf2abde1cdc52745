/**
 * RegexFilterProcessor accepts the reference's options and behaves as the reference documents
 * them (issue 15): default strategy `block`, `[REDACTED]` for custom rules, the presets'
 * replacement tokens, `$1` / `$&` expansion, overlapping matches merged, block metadata.
 */
import { lastValueFrom, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { processInput } from '../../src/operators/process-input.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { ProcessorViolation } from '../../src/contract/processor-types.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { contextWith, listWith, runOutputStream, streamedText, textBlock, textMessage } from './support/harness.js';
import { expectOptionError } from './support/option-error.js';

describe('RegexFilterProcessor with the reference options', () => {
  it('blocks by default, with the reference reason and metadata (values never in the metadata)', async () => {
    const filter = new RegexFilterProcessor({ presets: ['pii'] });
    const list = listWith([textMessage('m1', 'user', 'mail ada@example.com')]);
    const error = await lastValueFrom(of(list).pipe(processInput([filter], contextWith(list)))).catch((caught: unknown) => caught);
    expect(TripWire.isInstance(error)).toBe(true);
    const tripwire = error as TripWire;
    expect(tripwire.reason).toBe('Regex filter: blocked content matching patterns: email');
    expect(tripwire.retry).toBe(false);
    expect(tripwire.metadata).toMatchObject({ processorId: 'regex-filter', strategy: 'block', matches: [{ rule: 'email', match: '[REDACTED_MATCH]', index: 5 }] });
    expect(JSON.stringify(tripwire.metadata)).not.toContain('ada@');
  });

  it("custom rules default to '[REDACTED]'; '$1' and '$&' refer to the match", () => {
    const filter = new RegexFilterProcessor({
      strategy: 'redact',
      rules: [
        { name: 'internal-id', pattern: /INTERNAL-(\d{6})/g, replacement: '[id ending $1]' },
        { name: 'ticket', pattern: /TICKET-\d+/g, replacement: '<$&>' },
        { name: 'word', pattern: /secret/g },
      ],
    });
    expect(filter.redactText('see INTERNAL-123456, TICKET-7 and the secret')).toBe('see [id ending 123456], <TICKET-7> and the [REDACTED]');
  });

  it('uses the preset replacement tokens of the reference', () => {
    const filter = new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' });
    expect(
      // (values shaped like real ones: presets match shapes, not words — issue 24 §8)
      filter.redactText('a@b.io, 555-123-4567, 123-45-6789, 4111 1111 1111 1111, api_key=abcdefghijklmnopqrstu12345, Bearer abc.def.123, AKIAQWERTYUIOPASDFGH, https://x.io/p'),
    ).toBe('[EMAIL], [PHONE], [SSN], [CREDIT_CARD], [API_KEY], [BEARER_TOKEN], [AWS_KEY], [URL]');
  });

  it('merges overlapping matches of different rules into one region, replaced once', () => {
    const violations: ProcessorViolation[] = [];
    const filter = new RegexFilterProcessor({
      strategy: 'redact',
      rules: [
        { name: 'long', pattern: /ABC-\d{4}-XYZ/g, replacement: '[LONG]' },
        { name: 'short', pattern: /\d{4}-XYZ-\d+/g, replacement: '[SHORT $&]' },
      ],
      onViolation: (violation) => void violations.push(violation),
    });
    // The longer match owns the region; no tail of either survives.
    expect(filter.redactText('id ABC-1234-XYZ-99 end')).toBe('id [LONG] end');
    const list = listWith([textMessage('m1', 'user', 'id ABC-1234-XYZ-99 end')]);
    return lastValueFrom(of(list).pipe(processInput([filter], contextWith(list)))).then(() => {
      expect(violations[0]?.detail).toMatchObject({ redactions: [{ rule: 'long', index: 3, length: 15, replacement: '[LONG]', overlappingRules: ['long', 'short'] }] });
    });
  });

  it('accepts a preset as a string or an array, and RegExp rules with or without g', () => {
    const fromString = new RegexFilterProcessor({ presets: 'secrets', strategy: 'redact' });
    const fromArray = new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact' });
    expect(fromString.redactText('AKIAQWERTYUIOPASDFGH')).toBe(fromArray.redactText('AKIAQWERTYUIOPASDFGH'));
    const noGlobal = new RegexFilterProcessor({ strategy: 'redact', rules: [{ name: 'x', pattern: /x\d/ }] });
    expect(noGlobal.redactText('x1 x2 x3')).toBe('[REDACTED] [REDACTED] [REDACTED]');
  });

  it('validates its options with clear errors', () => {
    expectOptionError(() => new RegexFilterProcessor({ presets: ['pii'], streamCarryoverSize: 0 }), 'regex-filter', 'streamCarryoverSize');
    expectOptionError(() => new RegexFilterProcessor({ presets: ['pii'], streamCarryoverSize: 1.5 }), 'regex-filter', 'streamCarryoverSize');
    expect(expectOptionError(() => new RegexFilterProcessor({ presets: ['nope' as 'pii'] }), 'regex-filter', 'presets').message).toContain('(got a string of 4 characters)');
    expectOptionError(() => new RegexFilterProcessor({ rules: [{ name: '', pattern: /x/ }] }), 'regex-filter', 'rules[0].name');
    expectOptionError(() => new RegexFilterProcessor({ rules: [{ name: 'x' } as never] }), 'regex-filter', 'rules[0].pattern');
    expectOptionError(() => new RegexFilterProcessor({}), 'regex-filter', 'rules');
  });

  it('streamCarryoverSize holds that many characters (a positive integer, as the reference)', async () => {
    const output = await runOutputStream([new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact', streamCarryoverSize: 4 })], [
      ...textBlock(['0123456789', 'abcdefgh']),
      chunk.finish(),
    ]);
    expect(output.filter((part) => part.type === 'text-delta').map((part) => (part.type === 'text-delta' ? part.payload.text : ''))).toEqual([
      '012345',
      '6789abcd',
      'efgh',
    ]);
    expect(streamedText(output)).toBe('0123456789abcdefgh');
  });
});
