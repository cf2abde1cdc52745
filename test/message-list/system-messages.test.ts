import { describe, expect, it } from 'vitest';
import { InvalidMessageError, toCoreSystemMessages } from '../../src/message-list/index.js';
import { createList } from './helpers.js';

const contents = (messages: ReadonlyArray<{ content: string }>): string[] => messages.map((message) => message.content);

describe('system messages', () => {
  it('keeps untagged and tagged buckets apart', () => {
    const list = createList();
    list.addSystem('instructions').addSystem('remembered facts', 'memory').addSystem(['a', 'b'], 'other');
    expect(contents(list.getSystemMessages())).toEqual(['instructions']);
    expect(contents(list.getSystemMessages('memory'))).toEqual(['remembered facts']);
    expect(contents(list.getSystemMessages('other'))).toEqual(['a', 'b']);
    expect(list.getSystemMessages('unknown')).toEqual([]);
  });

  it('lists untagged first, then tagged buckets in the order tags were first used', () => {
    const list = createList();
    list.addSystem('t2', 'second').addSystem('untagged').addSystem('t1', 'first').addSystem('t2 again', 'second');
    expect(contents(list.getAllSystemMessages())).toEqual(['untagged', 't2', 't2 again', 't1']);
  });

  it('de-duplicates by content within a bucket only', () => {
    const list = createList();
    list.addSystem('same').addSystem({ role: 'system', content: 'same' }).addSystem('same', 'tag');
    expect(contents(list.getSystemMessages())).toEqual(['same']);
    expect(contents(list.getSystemMessages('tag'))).toEqual(['same']);
  });

  it('keeps providerOptions of a CoreSystemMessage', () => {
    const list = createList();
    list.addSystem({ role: 'system', content: 'cached', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } });
    expect(list.getSystemMessages()).toEqual([{ role: 'system', content: 'cached', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }]);
  });

  it('replaceAllSystemMessages replaces the untagged bucket only', () => {
    const list = createList();
    list.addSystem(['one', 'two']).addSystem('kept', 'memory');
    list.replaceAllSystemMessages([{ role: 'system', content: 'three' }]);
    expect(contents(list.getAllSystemMessages())).toEqual(['three', 'kept']);
  });

  it('clearSystemMessages clears the untagged bucket, or one tag', () => {
    const list = createList();
    list.addSystem('u').addSystem('a', 'a').addSystem('b', 'b');
    list.clearSystemMessages('a');
    expect(contents(list.getAllSystemMessages())).toEqual(['u', 'b']);
    list.clearSystemMessages();
    expect(contents(list.getAllSystemMessages())).toEqual(['b']);
  });

  it('rejects empty or malformed system messages with a path', () => {
    const list = createList();
    expect(() => list.addSystem('')).toThrow(InvalidMessageError);
    try {
      list.addSystem(['fine', { role: 'system', content: 5 } as never]);
      expect.unreachable();
    } catch (error) {
      expect(InvalidMessageError.isInstance(error)).toBe(true);
      expect((error as InvalidMessageError).path).toEqual([1, 'content']);
    }
    expect(list.getAllSystemMessages()).toEqual([]);
  });

  it('toCoreSystemMessages normalises strings', () => {
    expect(toCoreSystemMessages(['a', { role: 'system', content: 'b' }])).toEqual([
      { role: 'system', content: 'a' },
      { role: 'system', content: 'b' },
    ]);
  });
});

describe('get.all.prompt()', () => {
  it('puts system messages first (untagged, then tagged), then the conversation', () => {
    const list = createList();
    list.add('question', 'input');
    list.addSystem('memory context', 'memory').addSystem('instructions');
    list.add({ role: 'assistant', content: 'answer' }, 'response');
    expect(list.get.all.prompt()).toEqual([
      { role: 'system', content: 'instructions' },
      { role: 'system', content: 'memory context' },
      { role: 'user', content: [{ type: 'text', text: 'question' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'answer' }] },
    ]);
  });

  it('puts remembered messages before new ones, in list order', () => {
    const list = createList();
    list.add({ role: 'user', content: 'earlier' }, 'memory');
    list.add({ role: 'user', content: 'now' }, 'input');
    expect(list.get.all.prompt().map((message) => (message.role === 'user' ? message.content[0] : undefined))).toEqual([
      { type: 'text', text: 'earlier' },
      { type: 'text', text: 'now' },
    ]);
  });
});
