import { describe, expect, it, vi } from 'vitest';
import type { UIMessage } from 'ai';
import { MessageList, inboundMessageSchema } from '../../src/message-list/index.js';
import { createList, dbMessage, ids, textMessage, toolCall } from './helpers.js';

describe('MessageList.add', () => {
  it('turns a string into a user message with a generated id, stamps thread and resource', () => {
    const list = createList({ threadId: 'thread-1', resourceId: 'user-1' });
    list.add('hello', 'input');
    expect(list.get.all.db()).toEqual([
      {
        id: 'id-1',
        role: 'user',
        createdAt: new Date('2025-01-01T00:00:00.000Z'),
        threadId: 'thread-1',
        resourceId: 'user-1',
        content: { format: 2, parts: [{ type: 'text', text: 'hello' }] },
      },
    ]);
  });

  it('uses crypto.randomUUID ids by default', () => {
    const list = new MessageList();
    list.add('hi', 'input');
    expect(list.get.all.db()[0]?.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('treats "user" as an alias of "input"', () => {
    const list = createList();
    list.add('hi', 'user');
    expect(list.getSource('id-1')).toBe('input');
    expect(ids(list.get.input.db())).toEqual(['id-1']);
  });

  it('accepts model, UI and stored messages in one array, in order', () => {
    const list = createList();
    const ui: UIMessage = { id: 'ui-1', role: 'user', parts: [{ type: 'text', text: 'from ui' }] };
    list.add([{ role: 'user', content: 'from model' }, ui, textMessage('db-1', 'user', 'from db'), 'from string'], 'input');
    expect(list.get.all.db().map((message) => [message.id, message.content.parts])).toEqual([
      ['id-1', [{ type: 'text', text: 'from model' }]],
      ['ui-1', [{ type: 'text', text: 'from ui' }]],
      ['db-1', [{ type: 'text', text: 'from db' }]],
      ['id-2', [{ type: 'text', text: 'from string' }]],
    ]);
  });

  it('keeps an id given on a model message', () => {
    const list = createList();
    list.add({ id: 'given', role: 'user', content: 'x' } as never, 'input');
    expect(ids(list.get.all.db())).toEqual(['given']);
  });

  it('adopts a stored message object (same reference), normalising an ISO createdAt', () => {
    const list = createList();
    const stored = { ...textMessage('m1', 'user', 'hi'), createdAt: '2024-05-01T10:00:00.000Z' as unknown as Date };
    list.add(stored, 'input');
    const [held] = list.get.all.db();
    expect(held).toBe(stored);
    expect(held?.createdAt).toEqual(new Date('2024-05-01T10:00:00.000Z'));
  });

  it('turns a legacy content.content-only stored message into a text part and fills reasoning details', () => {
    const list = createList();
    list.add(
      [
        { id: 'm1', role: 'user', createdAt: new Date(0), content: { format: 2, parts: [], content: 'legacy text' } },
        dbMessage('m2', 'assistant', [{ type: 'reasoning', reasoning: 'thinking' } as never]),
      ],
      'input',
    );
    const [first, second] = list.get.all.db();
    expect(first?.content.parts).toEqual([{ type: 'text', text: 'legacy text' }]);
    expect(second?.content.parts).toEqual([{ type: 'reasoning', reasoning: 'thinking', details: [{ type: 'text', text: 'thinking' }] }]);
  });

  it('gives generated messages strictly increasing createdAt even when the clock stands still', () => {
    const list = createList();
    list.add(['a', 'b', 'c'], 'input');
    const times = list.get.all.db().map((message) => message.createdAt.getTime());
    expect(times).toEqual([times[0], times[0]! + 1, times[0]! + 2]);
  });

  it('routes system messages of every format to the untagged bucket', () => {
    const list = createList();
    list.add(
      [
        { role: 'system', content: 'model system' },
        { id: 's-ui', role: 'system', parts: [{ type: 'text', text: 'ui system' }] },
        textMessage('s-db', 'system', 'db system'),
        'user text',
      ],
      'input',
    );
    expect(list.getSystemMessages().map((message) => message.content)).toEqual(['model system', 'ui system', 'db system']);
    expect(ids(list.get.all.db())).toEqual(['id-1']);
  });

  it('ignores system messages coming from memory', () => {
    const list = createList();
    list.add([{ role: 'system', content: 'old instructions' }, textMessage('m1', 'user', 'hi')], 'memory');
    expect(list.getAllSystemMessages()).toEqual([]);
    expect(ids(list.get.remembered.db())).toEqual(['m1']);
  });

  it("adds system messages with source 'system' and rejects other roles there", () => {
    const list = createList();
    list.add({ role: 'system', content: 'sys' }, 'system');
    expect(list.getSystemMessages()).toEqual([{ role: 'system', content: 'sys' }]);
    expect(() => list.add([{ role: 'system', content: 'x' }, 'not system'], 'system')).toThrowError(/only system messages/);
    expect(list.getSystemMessages()).toHaveLength(1);
  });

  it('does not stamp thread and resource on remembered messages', () => {
    const list = createList({ threadId: 'thread-1' });
    const remembered = { ...textMessage('m1', 'user', 'hi'), threadId: 'other-thread' };
    list.add(remembered, 'memory');
    expect(list.get.remembered.db()[0]?.threadId).toBe('other-thread');
  });

  it('returns this for chaining', () => {
    const list = createList();
    expect(list.add('a', 'input')).toBe(list);
  });
});

describe('replacement by id', () => {
  it('replaces a message in place, keeping its position and taking the new source', () => {
    const list = createList();
    list.add([textMessage('a', 'user', 'one'), textMessage('b', 'user', 'two')], 'input');
    list.add(textMessage('c', 'assistant', 'three'), 'response');
    const replacement = textMessage('a', 'user', 'one, edited');
    list.add(replacement, 'response');
    expect(ids(list.get.all.db())).toEqual(['a', 'b', 'c']);
    expect(list.get.all.db()[0]).toBe(replacement);
    expect(list.getSource('a')).toBe('response');
  });

  it('keeps the source when the caller passes the same one back (the reconciliation path)', () => {
    const list = createList();
    list.add(textMessage('m1', 'user', 'hi'), 'memory');
    const message = list.get.all.db()[0]!;
    list.add({ ...message, content: { ...message.content, parts: [{ type: 'text', text: 'redacted' }] } }, list.getSource(message)!, { merge: false });
    expect(list.getSource('m1')).toBe('memory');
    expect(list.get.remembered.db()[0]?.content.parts).toEqual([{ type: 'text', text: 'redacted' }]);
  });

  it('skips duplicates coming from memory', () => {
    const list = createList();
    list.add(textMessage('m1', 'user', 'current'), 'input');
    list.add(textMessage('m1', 'user', 'stale copy'), 'memory');
    expect(list.get.all.db().map((message) => message.content.parts)).toEqual([[{ type: 'text', text: 'current' }]]);
    expect(list.getSource('m1')).toBe('input');
  });

  it('does not merge a replacement into the previous assistant message', () => {
    const list = createList();
    list.add([textMessage('a1', 'assistant', 'x'), textMessage('a2', 'assistant', 'y')], 'response', { merge: false });
    list.add(textMessage('a2', 'assistant', 'y2'), 'response');
    expect(ids(list.get.all.db())).toEqual(['a1', 'a2']);
  });
});

describe('merging consecutive assistant messages', () => {
  it('appends the parts of a new response assistant message to the previous one, keeping the first id', () => {
    const list = createList();
    list.add('question', 'input');
    list.add(dbMessage('r1', 'assistant', [{ type: 'step-start' }, { type: 'text', text: 'step 1' }]), 'response');
    list.add(dbMessage('r2', 'assistant', [{ type: 'step-start' }, { type: 'text', text: 'step 2' }]), 'response');
    expect(ids(list.get.response.db())).toEqual(['r1']);
    expect(list.get.response.db()[0]?.content.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'step 1' },
      { type: 'step-start' },
      { type: 'text', text: 'step 2' },
    ]);
  });

  it('merges metadata and keeps a legacy content.content mirror in step', () => {
    const list = createList();
    const first = { ...textMessage('r1', 'assistant', 'Hello'), content: { format: 2 as const, parts: [{ type: 'text' as const, text: 'Hello' }], content: 'Hello', metadata: { a: 1 } } };
    list.add(first, 'response');
    list.add({ ...textMessage('r2', 'assistant', ' world'), content: { format: 2, parts: [{ type: 'text', text: ' world' }], metadata: { b: 2 } } }, 'response');
    expect(first.content.content).toBe('Hello world');
    expect(first.content.metadata).toEqual({ a: 1, b: 2 });
  });

  it('does not merge with { merge: false }', () => {
    const list = createList();
    list.add(textMessage('r1', 'assistant', 'a'), 'response');
    list.add(textMessage('r2', 'assistant', 'b'), 'response', { merge: false });
    expect(ids(list.get.response.db())).toEqual(['r1', 'r2']);
  });

  it('never merges remembered messages, with each other or with new ones', () => {
    const list = createList();
    list.add([textMessage('m1', 'assistant', 'a'), textMessage('m2', 'assistant', 'b')], 'memory');
    list.add(textMessage('r1', 'assistant', 'c'), 'response');
    expect(ids(list.get.all.db())).toEqual(['m1', 'm2', 'r1']);
    expect(list.get.remembered.db()[1]?.content.parts).toEqual([{ type: 'text', text: 'b' }]);
  });

  it('does not merge an input assistant message with a response one', () => {
    const list = createList();
    list.add(textMessage('i1', 'assistant', 'prefill'), 'input');
    list.add(textMessage('r1', 'assistant', 'answer'), 'response');
    expect(ids(list.get.input.db())).toEqual(['i1']);
    expect(ids(list.get.response.db())).toEqual(['r1']);
  });

  it('merges consecutive input assistant messages of one add call', () => {
    const list = createList();
    list.add(
      [
        { role: 'assistant', content: 'part one' },
        { role: 'assistant', content: 'part two' },
      ],
      'input',
    );
    expect(list.get.input.db().map((message) => message.content.parts)).toEqual([
      [
        { type: 'text', text: 'part one' },
        { type: 'text', text: 'part two' },
      ],
    ]);
  });

  it('does not merge when a user message sits in between', () => {
    const list = createList();
    list.add([textMessage('r1', 'assistant', 'a'), textMessage('u1', 'user', 'b'), textMessage('r2', 'assistant', 'c')], 'response');
    expect(ids(list.get.all.db())).toEqual(['r1', 'u1', 'r2']);
  });

  it('merges tool calls of a later step into the running response', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [{ type: 'step-start' }, toolCall('c1', 'search')]), 'response');
    list.add(dbMessage('r2', 'assistant', [{ type: 'step-start' }, toolCall('c2', 'search')]), 'response');
    expect(list.get.response.db()[0]?.content.parts.filter((part) => part.type === 'tool-invocation')).toHaveLength(2);
  });
});

describe('removeByIds and getSource', () => {
  it('removes messages, returns them in list order and forgets their source', () => {
    const list = createList();
    list.add([textMessage('a', 'user', '1'), textMessage('b', 'user', '2'), textMessage('c', 'user', '3')], 'input');
    const removed = list.removeByIds(['c', 'a', 'missing']);
    expect(ids(removed)).toEqual(['a', 'c']);
    expect(ids(list.get.all.db())).toEqual(['b']);
    expect(list.getSource('a')).toBeUndefined();
    expect(list.removeByIds(['nothing'])).toEqual([]);
  });

  it('reports the source of a message object or id', () => {
    const list = createList();
    list.add(textMessage('m', 'user', 'old'), 'memory');
    list.add(textMessage('i', 'user', 'new'), 'input');
    list.add(textMessage('r', 'assistant', 'reply'), 'response');
    const [remembered, input, response] = list.get.all.db();
    expect([list.getSource(remembered!), list.getSource(input!), list.getSource(response!), list.getSource('unknown')]).toEqual([
      'memory',
      'input',
      'response',
      undefined,
    ]);
  });

  it('lets a removed id be added again at the end', () => {
    const list = createList();
    list.add([textMessage('a', 'user', '1'), textMessage('b', 'user', '2')], 'input');
    list.removeByIds(['a']);
    list.add(textMessage('a', 'user', '1 again'), 'input');
    expect(ids(list.get.all.db())).toEqual(['b', 'a']);
  });
});

describe('validation cost', () => {
  it('does not re-validate message objects the list already holds or created', () => {
    const list = createList();
    list.add(['a', 'b'], 'input');
    const spy = vi.spyOn(inboundMessageSchema, 'safeParse');
    try {
      list.add(list.get.all.db(), 'input', { merge: false });
      expect(spy).not.toHaveBeenCalled();
      list.add({ role: 'user', content: 'new' }, 'input');
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });
});
