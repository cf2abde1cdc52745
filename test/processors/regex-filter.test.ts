import { describe, expect, it, vi } from 'vitest';
import { from, lastValueFrom, of, toArray } from 'rxjs';
import { processInput } from '../../src/operators/process-input.js';
import { processOutputResult } from '../../src/operators/process-output-result.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { ProcessorViolation } from '../../src/contract/processor-types.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { testUsage } from '../../src/testing/chunk-builders.js';
import { contextWith, listWith, runOutputStream, streamedText, textBlock, textMessage, textOf } from './support/harness.js';

describe('RegexFilterProcessor', () => {
  it('has the reference id and needs a rule', () => {
    expect(new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' }).id).toBe('regex-filter');
    expect(() => new RegexFilterProcessor()).toThrow(/at least one rule/);
  });

  describe('input', () => {
    it('redacts preset matches in the input messages and reports each one', async () => {
      const violations: ProcessorViolation[] = [];
      const filter = new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact', onViolation: (violation) => void violations.push(violation) });
      const list = listWith([textMessage('m1', 'user', 'Mail me at jane.doe@example.org or call 555-123-4567.')]);
      const processed = await lastValueFrom(of(list).pipe(processInput([filter], contextWith(list))));
      expect(textOf(processed.get.input.db()[0])).toBe('Mail me at [EMAIL] or call [PHONE].');
      expect(violations).toHaveLength(1);
      expect(violations[0]?.detail).toMatchObject({
        strategy: 'redact',
        phase: 'processInput',
        redactions: [
          { rule: 'email', index: 11, length: 20, replacement: '[EMAIL]' },
          { rule: 'phone', index: 40, length: 12, replacement: '[PHONE]' },
        ],
      });
      expect(JSON.stringify(violations)).not.toContain('jane.doe');
    });

    it('blocks with abort(): the run errors with a TripWire and onViolation is called once', async () => {
      const onViolation = vi.fn();
      const filter = new RegexFilterProcessor({ presets: 'secrets', strategy: 'block', onViolation });
      const list = listWith([textMessage('m1', 'user', 'my key is AKIAABCDEFGHIJKLMNOP')]);
      const error = await lastValueFrom(of(list).pipe(processInput([filter], contextWith(list)))).catch((caught: unknown) => caught);
      expect(TripWire.isInstance(error)).toBe(true);
      expect((error as TripWire).processorId).toBe('regex-filter');
      expect((error as TripWire).metadata).toEqual({
        processorId: 'regex-filter',
        strategy: 'block',
        matches: [{ rule: 'aws-key', match: '[REDACTED_MATCH]', index: 10 }],
        phase: 'input',
        rules: ['aws-key'],
      });
      expect((error as TripWire).reason).toBe('Regex filter: blocked content matching patterns: aws-key');
      expect(onViolation).toHaveBeenCalledTimes(1);
    });

    it('warn leaves the text as it is and reports', async () => {
      const onViolation = vi.fn();
      const filter = new RegexFilterProcessor({ presets: 'urls', strategy: 'warn', onViolation, includeRedactedValues: true });
      const list = listWith([textMessage('m1', 'user', 'see https://example.com/a?b=1.')]);
      const processed = await lastValueFrom(of(list).pipe(processInput([filter], contextWith(list))));
      expect(textOf(processed.get.input.db()[0])).toBe('see https://example.com/a?b=1.');
      expect(onViolation).toHaveBeenCalledWith(
        expect.objectContaining({
          processorId: 'regex-filter',
          detail: expect.objectContaining({ strategy: 'warn', matches: [{ rule: 'url', index: 4, match: 'https://example.com/a?b=1' }] }),
        }),
      );
    });

    it('custom rules: string patterns, replacements, validators and per-rule strategies', () => {
      const filter = new RegexFilterProcessor({
        rules: [
          { name: 'ticket', pattern: 'TICKET-\\d+', flags: 'i', replacement: '[ticket]', strategy: 'redact' },
          { name: 'even', pattern: /\b\d+\b/, validate: (value) => Number(value) % 2 === 0, strategy: 'warn' },
        ],
      });
      const text = 'ticket-42 and 7 and 8';
      const matches = filter.scan(text);
      expect(matches.map((match) => [match.rule, match.value])).toEqual([
        ['ticket', 'ticket-42'],
        ['even', '8'],
      ]);
      expect(filter.redactText(text)).toBe('[ticket] and 7 and 8');
    });

    it('checks card numbers with Luhn', () => {
      const filter = new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' });
      expect(filter.scan('card 4111 1111 1111 1111').map((match) => match.rule)).toEqual(['credit-card']);
      expect(filter.scan('card 4111 1111 1111 1112').map((match) => match.rule)).not.toContain('credit-card');
    });

    it('phase "output" leaves the input alone', async () => {
      const filter = new RegexFilterProcessor({ presets: 'pii', phase: 'output' });
      const list = listWith([textMessage('m1', 'user', 'a@b.io')]);
      const processed = await lastValueFrom(of(list).pipe(processInput([filter], contextWith(list))));
      expect(textOf(processed.get.input.db()[0])).toBe('a@b.io');
    });
  });

  describe('output stream', () => {
    it('redacts an e-mail address split across three chunks before any of it is streamed', async () => {
      const filter = new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' });
      const output = await runOutputStream(
        [filter],
        [chunk.stepStart(), ...textBlock(['Write to bob.s', 'mith@exam', 'ple.com for help.']), chunk.finish()],
      );
      expect(streamedText(output)).toBe('Write to [EMAIL] for help.');
      for (const part of output) expect(JSON.stringify(part)).not.toMatch(/smith|exam|bob/);
      expect(output.map((part) => part.type)).toEqual(['step-start', 'text-start', 'text-delta', 'text-end', 'finish']);
    });

    it('releases text that cannot be part of a match early and holds only the carry-over tail', async () => {
      const filter = new RegexFilterProcessor({ presets: 'pii', strategy: 'redact', streamCarryoverSize: 10 });
      const output = await runOutputStream([filter], [
        chunk.textStart(),
        chunk.textDelta('0123456789abcdefghij'),
        chunk.textDelta('KLMNOP'),
        chunk.textEnd(),
        chunk.finish(),
      ]);
      // The first delta releases all but the last 10 characters; the second releases 6 more;
      // text-end is held with the tail (the next block may continue a match); finish releases both.
      expect(output.map((part) => (part.type === 'text-delta' ? part.payload.text : part.type))).toEqual([
        'text-start',
        '0123456789',
        'abcdef',
        'ghijKLMNOP',
        'text-end',
        'finish',
      ]);
    });

    it('holds a match that reaches into the carry-over, so it can still grow (a@b.co + m)', async () => {
      const filter = new RegexFilterProcessor({ presets: 'pii', strategy: 'redact', streamCarryoverSize: 3 });
      const output = await runOutputStream([filter], [...textBlock(['contact a@b.co', 'm now']), chunk.finish()]);
      expect(output.map((part) => (part.type === 'text-delta' ? part.payload.text : part.type))).toEqual([
        'text-start',
        'contact ',
        '[EMAIL] ',
        'now',
        'text-end',
        'finish',
      ]);
    });

    it('documents the limit: a match longer than the carry-over that is not yet a match can leak its start', async () => {
      const filter = new RegexFilterProcessor({ presets: 'pii', strategy: 'redact', streamCarryoverSize: 12 });
      const output = await runOutputStream([filter], [...textBlock(['reach me: someone.with.a.long.name@example', '.com today']), chunk.finish()]);
      expect(streamedText(output)).toBe('reach me: someone.with.a.long.[EMAIL] today');
      const defaults = await runOutputStream(
        [new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' })],
        [...textBlock(['reach me: someone.with.a.long.name@example', '.com today']), chunk.finish()],
      );
      expect(streamedText(defaults)).toBe('reach me: [EMAIL] today');
    });

    it('blocks before the secret reaches the client', async () => {
      const onViolation = vi.fn();
      const filter = new RegexFilterProcessor({ presets: 'secrets', strategy: 'block', onViolation });
      const emitted: string[] = [];
      const error = await lastValueFrom(
        from([...textBlock(['token: AKIAABCD', 'EFGHIJKLMNOP', ' ok']), chunk.finish()]).pipe(processOutputStream([filter], createRunContext())),
        { defaultValue: undefined },
      )
        .then(() => undefined)
        .catch((caught: unknown) => caught);
      const recorded = await lastValueFrom(
        from([...textBlock(['token: AKIAABCD', 'EFGHIJKLMNOP', ' ok']), chunk.finish()]).pipe(processOutputStream([new RegexFilterProcessor({ presets: 'secrets', strategy: 'block' })], createRunContext()), toArray()),
      ).catch(() => undefined);
      expect(recorded).toBeUndefined();
      expect(TripWire.isInstance(error)).toBe(true);
      expect((error as TripWire).reason).toBe('Regex filter: blocked streaming content matching patterns: aws-key');
      from([...textBlock(['token: AKIAABCD', 'EFGHIJKLMNOP', ' ok']), chunk.finish()])
        .pipe(processOutputStream([new RegexFilterProcessor({ presets: 'secrets', strategy: 'block' })], createRunContext()))
        .subscribe({ next: (part) => emitted.push(JSON.stringify(part)), error: () => undefined });
      expect(emitted.join('')).not.toContain('AKIA');
      expect(onViolation).toHaveBeenCalledTimes(1);
    });

    it('releases held text before any non-text chunk, keeping the order', async () => {
      const filter = new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' });
      const toolCall = chunk.toolCall({ toolCallId: 'c1', toolName: 'lookup', args: {} });
      const output = await runOutputStream([filter], [chunk.textStart(), chunk.textDelta('ping a@b.io'), toolCall, chunk.textEnd()]);
      expect(output.map((part) => (part.type === 'text-delta' ? part.payload.text : part.type))).toEqual([
        'text-start',
        'ping [EMAIL]',
        'tool-call',
        'text-end',
      ]);
    });

    it('phase "input" passes the stream through untouched', async () => {
      const filter = new RegexFilterProcessor({ presets: 'pii', phase: 'input' });
      const output = await runOutputStream([filter], textBlock(['a@b.io']));
      expect(streamedText(output)).toBe('a@b.io');
    });
  });

  describe('output result', () => {
    it('redacts the stored reply (and reports) when the stream was not filtered', async () => {
      const onViolation = vi.fn();
      const filter = new RegexFilterProcessor({ presets: 'pii', strategy: 'redact', onViolation });
      const list = listWith([textMessage('u1', 'user', 'hi')], { response: [textMessage('a1', 'assistant', 'write to x@y.dev')] });
      const ctx = contextWith(list);
      await lastValueFrom(
        of({ text: 'write to x@y.dev', usage: testUsage(), finishReason: 'stop' as const, steps: [] }).pipe(processOutputResult([filter], ctx)),
      );
      expect(textOf(list.get.response.db()[0])).toBe('write to [EMAIL]');
      expect(onViolation).toHaveBeenCalledTimes(1);
    });

    it('does not report twice what the stream already handled', async () => {
      const onViolation = vi.fn();
      const filter = new RegexFilterProcessor({ presets: 'pii', strategy: 'warn', onViolation });
      const list = listWith([textMessage('u1', 'user', 'hi')], { response: [textMessage('a1', 'assistant', 'x@y.dev')] });
      const ctx = contextWith(list);
      await runOutputStream([filter], [...textBlock(['x@y.dev']), chunk.finish()], ctx);
      await lastValueFrom(
        of({ text: 'x@y.dev', usage: testUsage(), finishReason: 'stop' as const, steps: [] }).pipe(processOutputResult([filter], ctx)),
      );
      expect(onViolation).toHaveBeenCalledTimes(1);
    });
  });
});

describe('RegexFilterProcessor and data chunks', () => {
  it('releases the held tail before a data chunk instead of letting it overtake', async () => {
    const output = await runOutputStream(
      [new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' })],
      [chunk.textStart(), chunk.textDelta('mail a@b.io'), chunk.data('data-progress', { step: 1 }), chunk.textEnd()],
    );
    expect(output.map((part) => (part.type === 'text-delta' ? part.payload.text : part.type))).toEqual([
      'text-start',
      'mail [EMAIL]',
      'data-progress',
      'text-end',
    ]);
  });
});
