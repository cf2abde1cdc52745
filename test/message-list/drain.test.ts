import { describe, expect, it } from 'vitest';
import { createList, dbMessage, ids, textMessage, toolCall } from './helpers.js';

describe('drainUnsavedMessages', () => {
  it('returns new input and response messages in list order, not remembered ones, then nothing', () => {
    const list = createList();
    list.add(textMessage('m1', 'user', 'old'), 'memory');
    list.add(textMessage('i1', 'user', 'question'), 'input');
    list.add(textMessage('r1', 'assistant', 'answer'), 'response');
    expect(list.getUnsavedIds()).toEqual(['i1', 'r1']);
    expect(ids(list.drainUnsavedMessages())).toEqual(['i1', 'r1']);
    expect(list.drainUnsavedMessages()).toEqual([]);
    expect(list.getUnsavedIds()).toEqual([]);
  });

  it('returns a drained message again once something is merged into it', () => {
    const list = createList();
    list.add(textMessage('r1', 'assistant', 'step 1'), 'response');
    list.drainUnsavedMessages();
    list.add(textMessage('r2', 'assistant', 'step 2'), 'response');
    const drained = list.drainUnsavedMessages();
    expect(ids(drained)).toEqual(['r1']);
    expect(drained[0]?.content.parts).toHaveLength(2);
  });

  it('returns a replaced message, but not a remembered one replaced with source memory', () => {
    const list = createList();
    list.add(textMessage('m1', 'user', 'history'), 'memory');
    list.add(textMessage('i1', 'user', 'question'), 'input');
    list.drainUnsavedMessages();
    list.add(textMessage('i1', 'user', 'question, edited'), 'input');
    list.add(textMessage('m1', 'user', 'history reshaped for the prompt'), 'memory');
    expect(ids(list.drainUnsavedMessages())).toEqual(['i1']);
  });

  it('returns a remembered message re-sourced as input', () => {
    const list = createList();
    list.add(textMessage('m1', 'user', 'history'), 'memory');
    list.add(textMessage('m1', 'user', 'history, corrected'), 'input');
    expect(ids(list.drainUnsavedMessages())).toEqual(['m1']);
  });

  it('returns a message whose tool invocation was updated after a drain', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [toolCall('c1', 't')]), 'response');
    list.drainUnsavedMessages();
    list.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 't', args: {}, result: 1 } });
    expect(ids(list.drainUnsavedMessages())).toEqual(['r1']);
  });

  it('never returns a removed message', () => {
    const list = createList();
    list.add([textMessage('i1', 'user', 'keep'), textMessage('i2', 'user', 'secret')], 'input');
    list.removeByIds(['i2']);
    expect(ids(list.drainUnsavedMessages())).toEqual(['i1']);
  });
});
