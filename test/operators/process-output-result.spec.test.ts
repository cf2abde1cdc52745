import { describe, expect, it } from 'vitest';
import { firstValueFrom, of } from 'rxjs';
import { processOutputResult } from '../../src/operators/process-output-result.js';
import type { OutputResult, Processor, ProcessOutputResultArgs } from '../../src/contract/processor-types.js';
import { testUsage } from '../../src/testing/chunk-builders.js';
import { describeMarbleChecklist } from './marble-checklist.js';
import { assistant, idsAndTexts, listWith, testContext, user } from './helpers.js';

const result = (text: string): OutputResult => ({ text, usage: testUsage(), finishReason: 'stop', steps: [] });

describeMarbleChecklist<OutputResult>('processOutputResult', {
  hook: 'processOutputResult',
  operator: processOutputResult,
  setup: () => ({ ctx: testContext({ messageList: listWith([user('u1', 'hi')], { response: [assistant('a1', 'hello')] }) }), a: result('hello'), b: result('hello') }),
});

describe('processOutputResult', () => {
  it('gives the response messages (not the input) and the result', async () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'hi')], { response: [assistant('a1', 'hello')] }) });
    const seen: ProcessOutputResultArgs[] = [];
    const spy: Processor = { id: 'spy', processOutputResult: (args) => void seen.push(args) };
    await firstValueFrom(of(result('hello')).pipe(processOutputResult([spy], ctx)));
    const args = seen[0] as ProcessOutputResultArgs;
    expect(idsAndTexts(args.messages)).toEqual([['a1', 'hello']]);
    expect(args.result).toEqual(result('hello'));
    expect(args.messageList).toBe(ctx.messageList);
  });

  it('makes the result text follow edits to the response messages', async () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'hi')], { response: [assistant('a1', 'my ssn is 123')] }) });
    const redact: Processor = {
      id: 'redact',
      processOutputResult: ({ messages }) =>
        messages.map((message) => ({
          ...message,
          content: {
            ...message.content,
            parts: message.content.parts.map((part) => (part.type === 'text' ? { ...part, text: part.text.replace(/\d+/g, '***') } : part)),
          },
        })),
    };
    const final = await firstValueFrom(of(result('my ssn is 123')).pipe(processOutputResult([redact], ctx)));
    expect(final.text).toBe('my ssn is ***');
    expect(idsAndTexts(ctx.messageList.get.response.db())).toEqual([['a1', 'my ssn is ***']]);
  });

  it('keeps the result object when nothing changed', async () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'hi')], { response: [assistant('a1', 'hello')] }) });
    const input = result('hello');
    const final = await firstValueFrom(of(input).pipe(processOutputResult([{ id: 'noop', processOutputResult: () => undefined }], ctx)));
    expect(final).toBe(input);
  });
});
