import { describe, expect, it } from 'vitest';
import { toModelMessages, toPrompt, toPromptMessage, type MastraDBMessage } from '../../src/message-list/index.js';
import { dbMessage, textMessage, toolCall } from './helpers.js';

const meta = { acme: { cache: true } };

/** A history with every kind of part `toPrompt` converts or drops. */
function history(): MastraDBMessage[] {
  return [
    textMessage('s1', 'system', 'stored system'),
    { ...textMessage('u1', 'user', 'hello'), content: { format: 2, parts: [{ type: 'text', text: 'hello', providerMetadata: meta }], providerMetadata: meta } },
    dbMessage('u2', 'user', [
      { type: 'text', text: '' },
      { type: 'file', mimeType: 'image/png', data: 'data:image/png;base64,AAAA', filename: 'a.png' },
      { type: 'file', mimeType: 'application/pdf', data: 'https://example.com/a.pdf', providerMetadata: meta },
      { type: 'file', mimeType: 'text/plain', data: 'QUJD', providerReference: { acme: 'file-1' } },
    ]),
    { id: 'u3', role: 'user', createdAt: new Date(0), content: { format: 2, parts: [], content: 'fallback text' } },
    dbMessage('a1', 'assistant', [
      { type: 'step-start' },
      { type: 'reasoning', reasoning: 'thinking', details: [{ type: 'text', text: 'thinking' }], providerMetadata: meta },
      { type: 'text', text: 'calling' },
      toolCall('c1', 'echo', { n: 1 }, { toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'echo', args: { n: 1 }, result: { n: 1 } }, providerMetadata: meta }),
      toolCall('c2', 'echo', undefined, { toolInvocation: { state: 'output-error', toolCallId: 'c2', toolName: 'echo', args: undefined, errorText: 'boom' } }),
      toolCall('c3', 'search', { q: 'x' }, { providerExecuted: true, toolInvocation: { state: 'result', toolCallId: 'c3', toolName: 'search', args: { q: 'x' }, result: 'found' } }),
      toolCall('c4', 'echo', { n: 4 }, { toolInvocation: { state: 'partial-call', toolCallId: 'c4', toolName: 'echo', args: {} } }),
      { type: 'text', text: 'after the calls' },
      { type: 'file', mimeType: 'image/png', data: 'AAAA' },
      { type: 'source', source: { sourceType: 'url', id: 's', url: 'https://example.com' } },
      { type: 'data-progress', data: { done: 1 } },
      { type: 'step-start' },
      toolCall('c5', 'echo', { n: 5 }),
    ]),
    { ...dbMessage('t1', 'tool', [toolCall('c6', 'echo', {}, { toolInvocation: { state: 'result', toolCallId: 'c6', toolName: 'echo', args: {}, result: 6 } }), toolCall('c7', 'echo')]), content: { format: 2, parts: [toolCall('c6', 'echo', {}, { toolInvocation: { state: 'result', toolCallId: 'c6', toolName: 'echo', args: {}, result: 6 } })], providerMetadata: meta } },
    { id: 'a2', role: 'assistant', createdAt: new Date(0), content: { format: 2, parts: [], content: 'assistant fallback', providerMetadata: meta } },
    textMessage('s2', 'system', ''),
  ] as MastraDBMessage[];
}

describe('toPrompt', () => {
  it('gives what toModelMessages then toPromptMessage give (one pass instead of two), keys in the same order', () => {
    const systemMessages = [{ role: 'system' as const, content: 'Be brief.', providerOptions: meta }];
    const twoPasses = [...systemMessages.map((system) => toPromptMessage(system)), ...toModelMessages(history()).map(toPromptMessage)];
    const prompt = toPrompt({ systemMessages, messages: history() });
    expect(prompt).toStrictEqual(twoPasses);
    expect(JSON.stringify(prompt)).toBe(JSON.stringify(twoPasses));
    expect(prompt.some((message) => Array.isArray(message.content) && message.content.some((part) => part.type === 'file'))).toBe(true);
  });

  it('builds fresh messages and parts on every call', () => {
    const messages = history();
    const first = toPrompt({ systemMessages: [], messages });
    const second = toPrompt({ systemMessages: [], messages });
    expect(second).toStrictEqual(first);
    for (let index = 0; index < first.length; index++) {
      expect(second[index]).not.toBe(first[index]);
      if (typeof first[index]!.content !== 'string') expect(second[index]!.content).not.toBe(first[index]!.content);
    }
  });
});
