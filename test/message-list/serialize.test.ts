import { describe, expect, it } from 'vitest';
import { MessageList } from '../../src/message-list/index.js';
import { createList, dbMessage, ids, textMessage, toolCall } from './helpers.js';

function populated(): MessageList {
  const list = createList({ threadId: 'thread-1', resourceId: 'user-1' });
  list.add(textMessage('m1', 'user', 'earlier'), 'memory');
  list.add('question', 'input');
  list.add(dbMessage('r1', 'assistant', [toolCall('c1', 'search', { q: 'x' }), { type: 'data-progress', data: { done: true } }]), 'response');
  list.addSystem('instructions').addSystem('facts', 'memory').addSystem('1', '10').addSystem('2', '2');
  list.drainUnsavedMessages();
  list.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'search', args: undefined, result: ['hit'] } });
  return list;
}

describe('serialize / deserialize', () => {
  it('produces plain JSON with ISO dates', () => {
    const serialized = populated().serialize();
    expect(JSON.parse(JSON.stringify(serialized))).toEqual(serialized);
    expect(serialized.messages.map((entry) => [entry.source, entry.message.id, entry.message.createdAt])).toEqual([
      ['memory', 'm1', '2024-12-31T00:00:00.000Z'],
      ['input', 'id-1', '2025-01-01T00:00:00.000Z'],
      ['response', 'r1', '2024-12-31T00:00:00.000Z'],
    ]);
    expect(serialized.unsavedIds).toEqual(['r1']);
  });

  it('restores messages, sources, system buckets (tag order kept) and unsaved ids', () => {
    const original = populated();
    const restored = MessageList.deserialize(JSON.parse(JSON.stringify(original.serialize())));
    expect(restored.get.all.db()).toEqual(original.get.all.db());
    expect(restored.get.all.db()[0]?.createdAt).toBeInstanceOf(Date);
    expect(ids(restored.get.remembered.db())).toEqual(['m1']);
    expect(ids(restored.get.response.db())).toEqual(['r1']);
    expect(restored.getAllSystemMessages()).toEqual(original.getAllSystemMessages());
    expect(restored.getAllSystemMessages().map((message) => message.content)).toEqual(['instructions', 'facts', '1', '2']);
    expect(restored.getUnsavedIds()).toEqual(['r1']);
    expect(restored.threadId).toBe('thread-1');
    expect(restored.get.all.prompt()).toEqual(original.get.all.prompt());
  });

  it('does not share objects with the list', () => {
    const list = populated();
    const serialized = list.serialize();
    serialized.messages[0]!.message.content.parts.push({ type: 'text', text: 'tampered' });
    expect(list.get.all.db()[0]?.content.parts).toHaveLength(1);
  });

  it('keeps new messages of a restored list increasing after the restored ones', () => {
    const restored = MessageList.deserialize(populated().serialize(), { now: () => new Date(0), generateId: () => 'next' });
    restored.add('more', 'input');
    const last = restored.get.all.db().at(-1);
    expect(last?.createdAt.getTime()).toBeGreaterThan(new Date('2025-01-01T00:00:00.000Z').getTime());
  });
});
