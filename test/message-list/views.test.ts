import { describe, expect, it } from 'vitest';
import { createList, dbMessage, ids, textMessage, toolCall } from './helpers.js';

describe('views by source', () => {
  it('get.input / get.response / get.remembered / get.all hold the right messages in every format', () => {
    const list = createList();
    list.add(textMessage('m1', 'user', 'before'), 'memory');
    list.add(textMessage('i1', 'user', 'question'), 'input');
    list.add(textMessage('r1', 'assistant', 'answer'), 'response');
    expect(ids(list.get.remembered.db())).toEqual(['m1']);
    expect(ids(list.get.input.db())).toEqual(['i1']);
    expect(ids(list.get.response.db())).toEqual(['r1']);
    expect(ids(list.get.all.db())).toEqual(['m1', 'i1', 'r1']);
    expect(list.get.response.ui()).toEqual([{ id: 'r1', role: 'assistant', parts: [{ type: 'text', text: 'answer' }] }]);
    expect(list.get.input.model()).toEqual([{ role: 'user', content: [{ type: 'text', text: 'question' }] }]);
    expect(list.get.remembered.core()).toEqual(list.get.remembered.model());
    expect(list.get.all.ui().map((message) => message.id)).toEqual(['m1', 'i1', 'r1']);
  });

  it('db() returns the stored objects, so in-place edits are seen; the array itself is a copy', () => {
    const list = createList();
    list.add('secret', 'input');
    const view = list.get.input.db();
    const part = view[0]!.content.parts[0]!;
    if (part.type === 'text') part.text = '[redacted]';
    view.pop();
    expect(list.get.input.model()).toEqual([{ role: 'user', content: [{ type: 'text', text: '[redacted]' }] }]);
  });
});

describe('model and prompt conversion', () => {
  it('turns tool invocations into tool-call parts followed by a tool message', () => {
    const list = createList();
    list.add(
      dbMessage('r1', 'assistant', [
        { type: 'step-start' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'weather', args: { city: 'Paris' }, result: { celsius: 21 } } },
        { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c2', toolName: 'echo', args: {}, result: 'plain text' } },
        { type: 'tool-invocation', toolInvocation: { state: 'output-error', toolCallId: 'c3', toolName: 'fail', args: {}, errorText: 'boom' } },
        { type: 'tool-invocation', toolInvocation: { state: 'partial-call', toolCallId: 'c4', toolName: 'half', args: undefined } },
        { type: 'step-start' },
        { type: 'text', text: 'It is 21 degrees.' },
      ]),
      'response',
    );
    expect(list.get.all.prompt()).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Paris' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'echo', input: {} },
          { type: 'tool-call', toolCallId: 'c3', toolName: 'fail', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'json', value: { celsius: 21 } } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'echo', output: { type: 'text', value: 'plain text' } },
          { type: 'tool-result', toolCallId: 'c3', toolName: 'fail', output: { type: 'error-text', value: 'boom' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'It is 21 degrees.' }] },
    ]);
  });

  it('starts a new step when content follows tool calls even without step-start', () => {
    const list = createList();
    list.add(
      dbMessage('r1', 'assistant', [
        { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 't', args: {}, result: 1 } },
        { type: 'text', text: 'after' },
      ]),
      'response',
    );
    expect(list.get.all.model().map((message) => message.role)).toEqual(['assistant', 'tool', 'assistant']);
  });

  it('keeps a pending call without a result (no tool message)', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [toolCall('c1', 't', { a: 1 })]), 'response');
    expect(list.get.all.model()).toEqual([{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 't', input: { a: 1 } }] }]);
  });

  it('keeps provider-executed results in the assistant message', () => {
    const list = createList();
    list.add(
      dbMessage('r1', 'assistant', [
        { type: 'tool-invocation', providerExecuted: true, toolInvocation: { state: 'result', toolCallId: 'ws', toolName: 'web_search', args: { q: 'x' }, result: ['hit'] } },
      ]),
      'response',
    );
    expect(list.get.all.prompt()).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'ws', toolName: 'web_search', input: { q: 'x' }, providerExecuted: true },
          { type: 'tool-result', toolCallId: 'ws', toolName: 'web_search', output: { type: 'json', value: ['hit'] } },
        ],
      },
    ]);
  });

  it('sends reasoning with its provider metadata as providerOptions', () => {
    const list = createList();
    list.add(
      dbMessage('r1', 'assistant', [
        { type: 'reasoning', reasoning: 'Let me think.', details: [{ type: 'text', text: 'Let me think.', signature: 'sig' }], providerMetadata: { anthropic: { signature: 'sig' } } },
        { type: 'text', text: 'Done.' },
      ]),
      'response',
    );
    expect(list.get.all.prompt()).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Let me think.', providerOptions: { anthropic: { signature: 'sig' } } },
          { type: 'text', text: 'Done.' },
        ],
      },
    ]);
  });

  it('sends files as tagged file data: base64 and data URLs as data, other URLs as url', () => {
    const list = createList();
    list.add(
      dbMessage('u1', 'user', [
        { type: 'file', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'file', mimeType: 'image/png', data: 'data:image/png;base64,AAAA' },
        { type: 'file', mimeType: 'application/pdf', data: 'https://example.com/a.pdf', filename: 'a.pdf' },
        { type: 'text', text: 'Describe these.' },
      ]),
      'input',
    );
    expect(list.get.all.prompt()).toEqual([
      {
        role: 'user',
        content: [
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'AAAA' } },
          { type: 'file', mediaType: 'application/pdf', data: { type: 'url', url: new URL('https://example.com/a.pdf') }, filename: 'a.pdf' },
          { type: 'text', text: 'Describe these.' },
        ],
      },
    ]);
  });

  it('does not send data-*, step-start or source parts, nor messages left empty', () => {
    const list = createList();
    list.add(dbMessage('u1', 'user', [{ type: 'data-note', data: { x: 1 } }]), 'input');
    list.add(
      dbMessage('r1', 'assistant', [
        { type: 'step-start' },
        { type: 'data-progress', data: { percent: 50 } },
        { type: 'source', source: { sourceType: 'url', id: 's1', url: 'https://example.com' } },
        { type: 'text', text: 'Answer.' },
      ]),
      'response',
    );
    expect(list.get.all.prompt()).toEqual([{ role: 'assistant', content: [{ type: 'text', text: 'Answer.' }] }]);
  });

  it('passes message-level provider metadata as providerOptions', () => {
    const list = createList();
    list.add({ role: 'user', content: 'cache me', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }, 'input');
    expect(list.get.all.prompt()).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'cache me' }], providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } },
    ]);
  });

  it('sends a stored result with isError as error-json, and undefined results as json null', () => {
    const list = createList();
    list.add(
      dbMessage('r1', 'assistant', [
        { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'a', toolName: 't', args: {}, result: { reason: 'x' }, isError: true } },
        { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'b', toolName: 't', args: {}, result: undefined } },
      ]),
      'response',
    );
    const tool = list.get.all.prompt()[1];
    expect(tool?.role === 'tool' && tool.content.map((part) => part.type === 'tool-result' && part.output)).toEqual([
      { type: 'error-json', value: { reason: 'x' } },
      { type: 'json', value: null },
    ]);
  });
});
