import { describe, expect, it } from 'vitest';
import { of } from 'rxjs';
import { firstValueFrom } from 'rxjs';
import { processInput } from '../../src/operators/process-input.js';
import type { MessageList } from '../../src/message-list/message-list.js';
import type { Processor, ProcessInputArgs } from '../../src/contract/processor-types.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { describeMarbleChecklist } from './marble-checklist.js';
import { idsAndTexts, listWith, testContext, textOf, user } from './helpers.js';

describeMarbleChecklist<MessageList>('processInput', {
  hook: 'processInput',
  operator: processInput,
  setup: () => ({ ctx: testContext(), a: listWith([user('a1', 'first')]), b: listWith([user('b1', 'second')]) }),
});

describe('processInput', () => {
  it('gives the input messages (no system messages), the system messages and the list', async () => {
    const list = listWith([user('u1', 'hello')], { system: ['Be brief.'] });
    const seen: ProcessInputArgs[] = [];
    const spy: Processor = { id: 'spy', processInput: (args) => void seen.push(args) };
    await firstValueFrom(of(list).pipe(processInput([spy], testContext())));
    const args = seen[0] as ProcessInputArgs;
    expect(idsAndTexts(args.messages)).toEqual([['u1', 'hello']]);
    expect(args.systemMessages).toEqual([{ role: 'system', content: 'Be brief.' }]);
    expect(args.messageList).toBe(list);
  });

  it('emits the same list instance, after every processor ran, each seeing the previous one\'s edits', () => {
    const list = listWith([user('u1', 'Hello')]);
    const lower: Processor = {
      id: 'lower',
      processInput: ({ messages }) =>
        messages.map((message) => ({
          ...message,
          content: { ...message.content, parts: message.content.parts.map((part) => (part.type === 'text' ? { ...part, text: part.text.toLowerCase() } : part)) },
        })),
    };
    const seenBySecond: string[] = [];
    const second: Processor = { id: 'second', processInput: ({ messages }) => void seenBySecond.push(...messages.map(textOf)) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-l|', { l: list }).pipe(processInput([lower, second], testContext()))).toBe('-l|', { l: list });
    });
    expect(seenBySecond).toEqual(['hello']);
    expect(idsAndTexts(list.get.input.db())).toEqual([['u1', 'hello']]);
  });

  it('makes the incoming list the run context\'s list', async () => {
    const ctx = testContext();
    const list = listWith([user('u1', 'hi')]);
    await firstValueFrom(of(list).pipe(processInput([{ id: 'noop', processInput: () => undefined }], ctx)));
    expect(ctx.messageList).toBe(list);
  });
});
