/**
 * How a hook's return value is reconciled into the run's MessageList (DESIGN §2, reference §5.5):
 * same instance accepted; another instance or messages + messageList → ProcessorError; an array
 * reconciled (missing removed, changed re-added with their source, system entries become system
 * messages); undefined changes nothing, an empty array removes the new input from processInput and
 * changes nothing elsewhere; { messages, systemMessages } replaces
 * the system messages first.
 */
import { describe, expect, it } from 'vitest';
import { firstValueFrom, of, type Observable } from 'rxjs';
import { MessageList } from '../../src/message-list/message-list.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { processInput } from '../../src/operators/process-input.js';
import { processInputStep, type StepInput } from '../../src/operators/process-input-step.js';
import { processOutputResult } from '../../src/operators/process-output-result.js';
import { processOutputStep, type StepOutput } from '../../src/operators/process-output-step.js';
import { processToolResult } from '../../src/operators/process-tool-result.js';
import type { RunContext } from '../../src/operators/run-context.js';
import { ProcessorError, type ProcessorHookName } from '../../src/contract/errors/processor-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { testUsage } from '../../src/testing/chunk-builders.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { assistant, errorOf, idsAndTexts, listWith, testContext, textMessage, toolCallMessage, user } from './helpers.js';

const model = mockModel();
const stepOutput: StepOutput = { stepNumber: 0, finishReason: 'stop', toolCalls: [], text: '', usage: testUsage() };

/** Runs `hook` of `processor` once through its operator on `ctx`. */
function runHook(hook: ProcessorHookName, processor: Processor, ctx: RunContext): Observable<unknown> {
  switch (hook) {
    case 'processInput':
      return of(ctx.messageList).pipe(processInput([processor], ctx));
    case 'processInputStep':
      return of<StepInput>({ stepNumber: 0, model }).pipe(processInputStep([processor], ctx));
    case 'processOutputStep':
      return of(stepOutput).pipe(processOutputStep([processor], ctx));
    case 'processToolResult':
      return of({ stepNumber: 0, toolName: 'lookup', toolCallId: 'c1', args: {}, result: 1 }).pipe(processToolResult([processor], ctx));
    case 'processOutputResult':
      return of({ text: '', usage: testUsage(), finishReason: 'stop' as const, steps: [] }).pipe(processOutputResult([processor], ctx));
    default:
      throw new Error(`not a message hook: ${hook}`);
  }
}

function conversation(): RunContext {
  return testContext({
    messageList: listWith([user('u1', 'hello'), user('u2', 'more')], {
      response: [toolCallMessage('a0', [{ toolCallId: 'c1', toolName: 'lookup' }]), assistant('a1', 'answer')],
      system: ['Be brief.'],
    }),
  });
}

const messageHooks = ['processInput', 'processInputStep', 'processOutputStep', 'processToolResult', 'processOutputResult'] as const;
const withText = (message: MastraDBMessage, text: string): MastraDBMessage => ({
  ...message,
  content: { ...message.content, parts: [{ type: 'text', text }], content: text },
});

describe.each(messageHooks)('reconciliation in %s', (hook) => {
  it('accepts the same MessageList instance, keeping its in-place mutations', async () => {
    const ctx = conversation();
    const processor = {
      id: 'same',
      [hook]: ({ messageList }: { messageList: MessageList }) => {
        messageList.removeByIds(['u2']);
        return messageList;
      },
    } as unknown as Processor;
    await firstValueFrom(runHook(hook, processor, ctx));
    expect(ctx.messageList.get.all.db().map((message) => message.id)).not.toContain('u2');
  });

  it('rejects another MessageList instance with a ProcessorError saying so', async () => {
    const ctx = conversation();
    const processor = { id: 'foreign', [hook]: () => new MessageList() } as unknown as Processor;
    const error = await errorOf(runHook(hook, processor, ctx));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect((error as ProcessorError).processorId).toBe('foreign');
    expect((error as ProcessorError).hook).toBe(hook);
    expect((error as ProcessorError).message).toContain('returned a MessageList instance other than the one that was passed in');
  });

  it('changes nothing when the hook returns undefined', async () => {
    const ctx = conversation();
    const before = idsAndTexts(ctx.messageList.get.all.db());
    await firstValueFrom(runHook(hook, { id: 'nothing', [hook]: () => undefined } as unknown as Processor, ctx));
    expect(idsAndTexts(ctx.messageList.get.all.db())).toEqual(before);
    expect(ctx.messageList.getSystemMessages()).toEqual([{ role: 'system', content: 'Be brief.' }]);
  });

  it(
    hook === 'processInput'
      ? 'removes all of the new input (and only it) when processInput returns an empty array'
      : 'changes nothing when the hook returns an empty array (our documented decision)',
    async () => {
      const ctx = conversation();
      const before = idsAndTexts(ctx.messageList.get.all.db());
      const inputIds = new Set(ctx.messageList.get.input.db().map((message) => message.id));
      await firstValueFrom(runHook(hook, { id: 'empty', [hook]: () => [] } as unknown as Processor, ctx));
      const expected = hook === 'processInput' ? before.filter(([id]) => !inputIds.has(id as string)) : before;
      if (hook === 'processInput') expect(inputIds.size).toBeGreaterThan(0);
      expect(idsAndTexts(ctx.messageList.get.all.db())).toEqual(expected);
    },
  );

  it('removes the messages missing from a returned array, and only among those it was given', async () => {
    const ctx = conversation();
    const given: string[] = [];
    const processor = {
      id: 'filter',
      [hook]: ({ messages }: { messages: MastraDBMessage[] }) => {
        given.push(...messages.map((message) => message.id));
        return messages.slice(1);
      },
    } as unknown as Processor;
    await firstValueFrom(runHook(hook, processor, ctx));
    const remaining = ctx.messageList.get.all.db().map((message) => message.id);
    expect(remaining).not.toContain(given[0]);
    for (const id of given.slice(1)) expect(remaining).toContain(id);
    for (const id of ['u1', 'u2', 'a0', 'a1'].filter((id) => !given.includes(id))) expect(remaining).toContain(id);
  });
});

describe('reconciliation of a returned array', () => {
  it('re-adds changed messages with their own source (input stays input, response stays response)', async () => {
    const ctx = conversation();
    const rewrite: Processor = {
      id: 'rewrite',
      processOutputStep: ({ messages }) => messages.map((message) => (message.id === 'u1' || message.id === 'a1' ? withText(message, `${message.id}!`) : message)),
    };
    await firstValueFrom(of(stepOutput).pipe(processOutputStep([rewrite], ctx)));
    expect(idsAndTexts(ctx.messageList.get.input.db())).toEqual([
      ['u1', 'u1!'],
      ['u2', 'more'],
    ]);
    expect(idsAndTexts(ctx.messageList.get.response.db()).find(([id]) => id === 'a1')).toEqual(['a1', 'a1!']);
    expect(ctx.messageList.getSource('u1')).toBe('input');
    expect(ctx.messageList.getSource('a1')).toBe('response');
  });

  it('keeps the order of the list when a changed message is re-added', async () => {
    const ctx = conversation();
    const rewrite: Processor = { id: 'rewrite', processInput: ({ messages }) => messages.map((message) => withText(message, message.id.toUpperCase())) };
    await firstValueFrom(of(ctx.messageList).pipe(processInput([rewrite], ctx)));
    expect(ctx.messageList.get.all.db().map((message) => message.id)).toEqual(['u1', 'u2', 'a0', 'a1']);
  });

  it('adds unknown messages with the phase\'s source: input for input hooks', async () => {
    const ctx = conversation();
    const extra = user('u3', 'added by processor');
    const add: Processor = { id: 'add', processInput: ({ messages }) => [...messages, extra] };
    await firstValueFrom(of(ctx.messageList).pipe(processInput([add], ctx)));
    expect(ctx.messageList.getSource('u3')).toBe('input');
    expect(ctx.messageList.get.input.db().map((message) => message.id)).toContain('u3');
  });

  it('adds unknown messages with the phase\'s source: response for output hooks', async () => {
    const ctx = conversation();
    const extra = assistant('a2', 'added by processor');
    const add: Processor = { id: 'add', processOutputResult: ({ messages }) => [...messages, extra] };
    await firstValueFrom(of({ text: '', usage: testUsage(), finishReason: 'stop' as const, steps: [] }).pipe(processOutputResult([add], ctx)));
    expect(ctx.messageList.getSource('a2')).toBe('response');
  });

  it('turns returned role: system entries into system messages', async () => {
    const ctx = conversation();
    const addSystem: Processor = {
      id: 'add-system',
      processInput: ({ messages }) => [...messages, textMessage('s1', 'system', 'Answer in French.')],
    };
    await firstValueFrom(of(ctx.messageList).pipe(processInput([addSystem], ctx)));
    expect(ctx.messageList.getSystemMessages()).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Answer in French.' },
    ]);
    expect(ctx.messageList.get.all.db().map((message) => message.id)).not.toContain('s1');
  });

  it('rejects an array holding something that is not a message', async () => {
    const ctx = conversation();
    const bad = { id: 'bad', processInput: () => [{ text: 'no id' }] } as unknown as Processor;
    const error = await errorOf(of(ctx.messageList).pipe(processInput([bad], ctx)));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect((error as ProcessorError).message).toMatch(/not a MastraDBMessage/);
  });
});

describe('reconciliation of { messages, systemMessages } and { messageList }', () => {
  it('replaces the system messages first, then reconciles the messages (system entries kept)', async () => {
    const ctx = conversation();
    const both: Processor = {
      id: 'both',
      processInput: ({ messages }) => ({
        messages: [...messages.slice(1), textMessage('s1', 'system', 'From the array.')],
        systemMessages: [{ role: 'system', content: 'Replaced.' }],
      }),
    };
    await firstValueFrom(of(ctx.messageList).pipe(processInput([both], ctx)));
    expect(ctx.messageList.getSystemMessages()).toEqual([
      { role: 'system', content: 'Replaced.' },
      { role: 'system', content: 'From the array.' },
    ]);
    expect(ctx.messageList.get.input.db().map((message) => message.id)).toEqual(['u2']);
  });

  it('processInputStep also replaces the system messages first, keeping system entries of its messages', async () => {
    const ctx = conversation();
    const both: Processor = {
      id: 'both',
      processInputStep: ({ messages }) => ({
        messages: [...messages, textMessage('s1', 'system', 'From the array.')],
        systemMessages: [{ role: 'system', content: 'Replaced.' }],
      }),
    };
    await firstValueFrom(of<StepInput>({ stepNumber: 0, model }).pipe(processInputStep([both], ctx)));
    expect(ctx.messageList.getSystemMessages()).toEqual([
      { role: 'system', content: 'Replaced.' },
      { role: 'system', content: 'From the array.' },
    ]);
  });

  it('replaces the step\'s system messages from a processInputStep result', async () => {
    const ctx = conversation();
    const replace: Processor = { id: 'replace', processInputStep: () => ({ systemMessages: [{ role: 'system', content: 'Step only.' }] }) };
    await firstValueFrom(of<StepInput>({ stepNumber: 0, model }).pipe(processInputStep([replace], ctx)));
    expect(ctx.messageList.getSystemMessages()).toEqual([{ role: 'system', content: 'Step only.' }]);
  });

  it.each(['processInput', 'processInputStep'] as const)('%s: rejects { messageList } of another instance', async (hook) => {
    const ctx = conversation();
    const processor = { id: 'foreign', [hook]: () => ({ messageList: new MessageList() }) } as unknown as Processor;
    const error = await errorOf(runHook(hook, processor, ctx));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect((error as ProcessorError).message).toContain('MessageList instance other than the one');
  });

  it.each(['processInput', 'processInputStep'] as const)('%s: accepts { messageList } of the same instance', async (hook) => {
    const ctx = conversation();
    const processor = { id: 'same', [hook]: ({ messageList }: { messageList: MessageList }) => ({ messageList }) } as unknown as Processor;
    await expect(firstValueFrom(runHook(hook, processor, ctx))).resolves.toBeDefined();
  });

  it.each(['processInput', 'processInputStep'] as const)('%s: rejects messages and messageList together', async (hook) => {
    const ctx = conversation();
    const processor = {
      id: 'both',
      [hook]: ({ messages, messageList }: { messages: MastraDBMessage[]; messageList: MessageList }) => ({ messages, messageList }),
    } as unknown as Processor;
    const error = await errorOf(runHook(hook, processor, ctx));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect((error as ProcessorError).message).toContain('returned both messages and messageList');
  });

  it('reconciles { messages } from processInputStep like an array', async () => {
    const ctx = conversation();
    const keep: Processor = { id: 'keep', processInputStep: ({ messages }) => ({ messages: messages.filter((message) => message.id !== 'u2') }) };
    await firstValueFrom(of<StepInput>({ stepNumber: 0, model }).pipe(processInputStep([keep], ctx)));
    expect(ctx.messageList.get.all.db().map((message) => message.id)).toEqual(['u1', 'a0', 'a1']);
  });
});
