import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { InvalidMessageError, MessageList, inboundMessageSchema, modelMessageSchema, uiMessageSchema, dbMessageSchema } from '../../src/message-list/index.js';
import { createList, textMessage } from './helpers.js';

function errorOf(action: () => unknown): InvalidMessageError {
  try {
    action();
  } catch (error) {
    if (InvalidMessageError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an InvalidMessageError');
}

const add = (input: unknown): InvalidMessageError => errorOf(() => createList().add(input as never, 'input'));

describe('invalid inbound messages', () => {
  it('content: 42 is an InvalidMessageError at content, not a TypeError', () => {
    const error = add({ role: 'user', content: 42 });
    expect(error.path).toEqual(['content']);
    expect(error.name).toBe('InvalidMessageError');
    expect(error.message).toMatch(/content/);
  });

  it('puts the array index first', () => {
    expect(add([{ role: 'user', content: 'fine' }, { role: 'user', content: [{ type: 'text', text: 1 }] }]).path).toEqual([1, 'content', 0, 'text']);
  });

  it('rejects empty content instead of dropping the message', () => {
    expect(add('').path).toEqual([]);
    expect(add({ role: 'user', content: '' }).path).toEqual(['content']);
    expect(add({ role: 'assistant', content: [] }).path).toEqual(['content']);
    expect(add({ id: 'u', role: 'user', parts: [] }).path).toEqual(['parts']);
    expect(add({ id: 'd', role: 'user', createdAt: new Date(), content: { format: 2, parts: [] } }).path).toEqual(['content', 'parts']);
  });

  it('names unsupported part types at their type', () => {
    expect(add({ role: 'user', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} }] }).path).toEqual(['content', 0, 'type']);
    expect(add({ id: 'u', role: 'assistant', parts: [{ type: 'text', text: 'ok' }, { type: 'mystery' }] }).path).toEqual(['parts', 1, 'type']);
  });

  it('names bad UI tool states and missing fields', () => {
    expect(add({ id: 'u', role: 'assistant', parts: [{ type: 'tool-x', toolCallId: 'c', state: 'done' }] }).path).toEqual(['parts', 0, 'state']);
    expect(add({ id: 'u', role: 'assistant', parts: [{ type: 'tool-x', toolCallId: 'c', state: 'output-error', input: {} }] }).path).toEqual(['parts', 0, 'errorText']);
    expect(add({ id: 'u', role: 'assistant', parts: [{ type: 'dynamic-tool', toolCallId: 'c', state: 'input-available', input: {} }] }).path).toEqual(['parts', 0, 'toolName']);
  });

  it('names bad tool results', () => {
    expect(add({ role: 'tool', content: 'text' }).path).toEqual(['content']);
    expect(add({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'yaml', value: '' } }] }).path).toEqual([
      'content',
      0,
      'output',
      'type',
    ]);
    expect(add({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'json', value: () => 1 } }] }).path).toEqual([
      'content',
      0,
      'output',
      'value',
    ]);
  });

  it('names bad stored messages', () => {
    const stored = textMessage('m', 'user', 'x');
    expect(add({ ...stored, createdAt: 'not a date' }).path).toEqual(['createdAt']);
    expect(add({ ...stored, content: { format: 2, parts: [{ type: 'tool-invocation', toolInvocation: { state: 'done', toolCallId: 'c', toolName: 't', args: {} } }] } }).path).toEqual([
      'content',
      'parts',
      0,
      'toolInvocation',
      'state',
    ]);
    expect(add({ ...stored, content: { format: 1, parts: [] } }).path).toEqual(['content', 'format']);
  });

  it('names an unknown role and non-object input', () => {
    expect(add({ role: 'robot', content: 'x' }).path).toEqual(['role']);
    expect(add(42).path).toEqual([]);
    expect(add([null]).path).toEqual([0]);
  });

  it('lists every issue and adds nothing when any message is invalid', () => {
    const list = createList();
    const error = errorOf(() => list.add(['ok', { role: 'user', content: 1 }, { role: 'user', content: '' }] as never, 'input'));
    expect(error.issues.map((issue) => issue.path)).toEqual([
      [1, 'content'],
      [2, 'content'],
    ]);
    expect(list.get.all.db()).toEqual([]);
  });

  it('never throws anything but InvalidMessageError for arbitrary input', () => {
    const roles = fc.constantFrom('user', 'assistant', 'system', 'tool', 'other');
    const inbound = fc.oneof(
      fc.jsonValue(),
      fc.record({ role: roles, content: fc.jsonValue() }),
      fc.record({ id: fc.string(), role: roles, parts: fc.array(fc.record({ type: fc.constantFrom('text', 'reasoning', 'tool-x', 'dynamic-tool', 'data-x', 'file'), text: fc.jsonValue(), state: fc.string() })) }),
      fc.record({ id: fc.string(), role: roles, content: fc.record({ format: fc.constant(2), parts: fc.array(fc.record({ type: fc.constantFrom('text', 'tool-invocation', 'file'), text: fc.jsonValue() })) }) }),
    );
    fc.assert(
      fc.property(inbound, (value) => {
        try {
          new MessageList().add(value as never, 'input');
        } catch (error) {
          if (!InvalidMessageError.isInstance(error)) throw error;
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('exported schemas', () => {
  it('accept valid messages of each format', () => {
    expect(modelMessageSchema.safeParse({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} }] }).success).toBe(true);
    expect(uiMessageSchema.safeParse({ id: 'u', role: 'user', parts: [{ type: 'data-x', data: 1 }] }).success).toBe(true);
    expect(dbMessageSchema.safeParse(textMessage('m', 'user', 'x')).success).toBe(true);
    expect(inboundMessageSchema.safeParse('hello').success).toBe(true);
  });

  it('return the input object itself on success', () => {
    const message = { role: 'user' as const, content: 'hi', extra: true };
    expect(modelMessageSchema.parse(message)).toBe(message);
  });
});
