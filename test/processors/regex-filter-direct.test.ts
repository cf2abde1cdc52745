/**
 * RegexFilterProcessor's hooks called as the reference's own unit tests call them (issue 34): the
 * same array back when nothing changed, string `content` on output, a hand-built chunk without a
 * payload, 'warn' with no onViolation, the reference's constructor message.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProcessOutputResultArgs, ProcessOutputStreamArgs } from '../../src/contract/processor-types.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { textMessage } from './support/harness.js';
import { expectOptionError } from './support/option-error.js';

const abort = ((reason?: string) => {
  throw new Error(reason ?? 'aborted');
}) as ProcessOutputResultArgs['abort'];
/** The output hook's arguments with only what the reference's tests pass (no state, no messageList). */
const outputArgs = (messages: unknown[]) => ({ messages, abort, retryCount: 0 }) as unknown as ProcessOutputResultArgs;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('processOutputResult called directly', () => {
  it('returns the very array it was given when nothing matched, and when the phase is input', () => {
    const clean = [textMessage('a1', 'assistant', 'The answer is 42')];
    expect(new RegexFilterProcessor({ presets: ['pii'] }).processOutputResult(outputArgs(clean))).toBe(clean);
    const flagged = [textMessage('a1', 'assistant', 'mail ada@example.com')];
    expect(new RegexFilterProcessor({ presets: ['pii'], phase: 'input' }).processOutputResult(outputArgs(flagged))).toBe(flagged);
  });

  it('accepts a message whose content is a string (the v1 shape): redacted, blocked, or the same array when clean', () => {
    const v1 = (text: string) => ({ id: 'a1', role: 'assistant', createdAt: new Date(0), content: text });
    const redacted = new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' }).processOutputResult(outputArgs([v1('mail bob@test.com')])) as MastraDBMessage[];
    expect(redacted[0]?.content.parts).toEqual([{ type: 'text', text: 'mail [EMAIL]' }]);
    expect(() => new RegexFilterProcessor({ presets: ['pii'] }).processOutputResult(outputArgs([v1('SSN 123-45-6789')]))).toThrow(/ssn/i);
    const clean = [v1('nothing here')];
    expect(new RegexFilterProcessor({ presets: ['pii'] }).processOutputResult(outputArgs(clean))).toBe(clean);
  });
});

describe('processOutputStream called directly', () => {
  it('a hand-built step-finish chunk with no payload passes through (no TypeError)', () => {
    const part = { type: 'step-finish' } as unknown as ProcessOutputStreamArgs['part'];
    const args = { part, streamParts: [], state: {}, abort, retryCount: 0 } as unknown as ProcessOutputStreamArgs;
    expect(new RegexFilterProcessor({ presets: ['pii'] }).processOutputStream(args)).toBe(part);
  });
});

describe('the reference wording', () => {
  it("'warn' with no onViolation warns on the console (rule names, never the matched value)", () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const messages = [textMessage('m1', 'user', 'mail ada@example.com')];
    const filter = new RegexFilterProcessor({ presets: ['pii'], strategy: 'warn' });
    expect(filter.processInput({ messages, abort } as never)).toBe(messages);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('[RegexFilterProcessor]'));
    expect(String(warn.mock.calls[0]?.[0])).toContain('email');
    expect(String(warn.mock.calls[0]?.[0])).not.toContain('ada@');
  });

  it("'warn' with an onViolation tells only onViolation", () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const onViolation = vi.fn();
    new RegexFilterProcessor({ presets: ['pii'], strategy: 'warn', onViolation }).processInput({ messages: [textMessage('m1', 'user', 'ada@example.com')], abort } as never);
    expect(onViolation).toHaveBeenCalledTimes(1);
    expect(warn).not.toHaveBeenCalled();
  });

  it('no rule and no preset: a typed error naming the options', () => {
    const error = expectOptionError(() => new RegexFilterProcessor({}), 'regex-filter', 'rules');
    expect(error.message).toContain('presets');
  });
});
