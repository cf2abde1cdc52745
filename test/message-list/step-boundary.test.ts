import { describe, expect, it } from 'vitest';
import { MessageList } from '../../src/message-list/index.js';
import { RxAgentError } from '../../src/index.js';
import { createList, dbMessage, ids, textMessage, toolCall } from './helpers.js';

describe('step boundaries', () => {
  it('describes the response at the boundary', () => {
    const list = createList();
    list.add('q', 'input');
    list.add(dbMessage('r1', 'assistant', [{ type: 'step-start' }, { type: 'text', text: 'a' }]), 'response');
    expect(list.openStepBoundary()).toEqual({ responseMessageIds: ['r1'], lastAssistantMessageId: 'r1', lastAssistantPartCount: 2 });
    expect(createList().openStepBoundary()).toEqual({ responseMessageIds: [], lastAssistantMessageId: undefined, lastAssistantPartCount: 0 });
  });

  it('removes response messages added after the boundary, keeping input', () => {
    const list = createList();
    list.add('q', 'input');
    const boundary = list.openStepBoundary();
    list.add(textMessage('r1', 'assistant', 'rejected answer'), 'response');
    list.add('follow-up', 'input');
    list.rollbackToStepBoundary(boundary);
    expect(ids(list.get.all.db())).toEqual(['id-1', 'id-2']);
    expect(list.get.response.db()).toEqual([]);
  });

  it('trims parts merged into an existing response message after the boundary', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [{ type: 'step-start' }, toolCall('c1', 't')]), 'response');
    const boundary = list.openStepBoundary();
    list.add(dbMessage('r2', 'assistant', [{ type: 'step-start' }, { type: 'text', text: 'rejected' }]), 'response');
    expect(list.get.response.db()[0]?.content.parts).toHaveLength(4);
    list.rollbackToStepBoundary(boundary);
    expect(list.get.response.db()[0]?.content.parts).toEqual([{ type: 'step-start' }, toolCall('c1', 't')]);
  });

  it('un-applies tool results folded in or set after the boundary', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [toolCall('c1', 't'), toolCall('c2', 't')]), 'response');
    const boundary = list.openStepBoundary();
    list.add({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 't', output: { type: 'text', value: 'x' } }] }, 'response');
    list.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c2', toolName: 't', args: {}, result: 'y' } });
    list.rollbackToStepBoundary(boundary);
    const states = list.get.response.db()[0]?.content.parts.map((part) => (part.type === 'tool-invocation' ? part.toolInvocation.state : part.type));
    expect(states).toEqual(['call', 'call']);
  });

  it('puts back a response message replaced by id after the boundary', () => {
    const list = createList();
    const original = textMessage('r1', 'assistant', 'original');
    list.add(original, 'response');
    const boundary = list.openStepBoundary();
    list.add(textMessage('r1', 'assistant', 'replacement'), 'response');
    list.rollbackToStepBoundary(boundary);
    expect(list.get.response.db()[0]).toBe(original);
    expect(original.content.parts).toEqual([{ type: 'text', text: 'original' }]);
  });

  it('marks restored messages unsaved so storage gets the rolled-back version', () => {
    const list = createList();
    list.add(textMessage('r1', 'assistant', 'kept'), 'response');
    const boundary = list.openStepBoundary();
    list.add(textMessage('r2', 'assistant', 'rejected'), 'response');
    list.drainUnsavedMessages();
    list.rollbackToStepBoundary(boundary);
    const drained = list.drainUnsavedMessages();
    expect(ids(drained)).toEqual(['r1']);
    expect(drained[0]?.content.parts).toEqual([{ type: 'text', text: 'kept' }]);
  });

  it('does not mark untouched messages', () => {
    const list = createList();
    list.add(textMessage('r1', 'assistant', 'kept'), 'response');
    list.drainUnsavedMessages();
    const boundary = list.openStepBoundary();
    list.rollbackToStepBoundary(boundary);
    expect(list.getUnsavedIds()).toEqual([]);
  });

  it('can roll back to the same boundary twice (a second retry)', () => {
    const list = createList();
    list.add(textMessage('r1', 'assistant', 'kept'), 'response');
    const boundary = list.openStepBoundary();
    list.add(textMessage('r2', 'assistant', 'first try'), 'response');
    list.rollbackToStepBoundary(boundary);
    list.add(textMessage('r3', 'assistant', 'second try'), 'response');
    list.rollbackToStepBoundary(boundary);
    expect(list.get.response.db()[0]?.content.parts).toEqual([{ type: 'text', text: 'kept' }]);
  });

  it('rejects a boundary from another list', () => {
    const boundary = new MessageList().openStepBoundary();
    expect(() => createList().rollbackToStepBoundary(boundary)).toThrowError(/not opened on this MessageList/);
    try {
      createList().rollbackToStepBoundary(boundary);
    } catch (error) {
      expect(RxAgentError.isInstance(error)).toBe(true);
    }
  });
});
