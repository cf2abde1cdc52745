import { describe, expect, it } from 'vitest';
import type { ModelMessage, UIMessage } from 'ai';
import { MessageList, fromModelMessage, fromUIMessage, toModelMessages, toUIMessage, type MastraDBMessage } from '../../src/message-list/index.js';

const options = { generateId: () => 'generated', now: () => new Date('2025-01-01T00:00:00.000Z') };

const uiAssistant: UIMessage = {
  id: 'a1',
  role: 'assistant',
  metadata: { model: 'test-model' },
  parts: [
    { type: 'step-start' },
    { type: 'reasoning', text: 'Thinking about weather.', providerMetadata: { anthropic: { signature: 'sig-123' } } },
    { type: 'text', text: 'Let me check.', providerMetadata: { openai: { itemId: 'msg_1' } } },
    { type: 'tool-weather', toolCallId: 'c1', state: 'output-available', input: { city: 'Paris' }, output: { celsius: 21 }, callProviderMetadata: { openai: { itemId: 'fc_1' } } },
    { type: 'tool-search', toolCallId: 'c2', state: 'output-error', input: { q: 'x' }, errorText: 'timeout' },
    { type: 'tool-search', toolCallId: 'c3', state: 'input-available', input: { q: 'y' }, title: 'Search' },
    { type: 'tool-search', toolCallId: 'c4', state: 'input-streaming', input: { q: 'partial' } },
    { type: 'dynamic-tool', toolName: 'mcp_lookup', toolCallId: 'c5', state: 'output-available', input: {}, output: 'ok', providerExecuted: true },
    { type: 'source-url', sourceId: 's1', url: 'https://example.com', title: 'Example' },
    { type: 'source-document', sourceId: 's2', mediaType: 'application/pdf', title: 'Doc', filename: 'doc.pdf' },
    { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,iVBORw0KGgo=', filename: 'chart.png' },
    { type: 'data-weather', id: 'w1', data: { celsius: 21 } },
    { type: 'step-start' },
    { type: 'text', text: 'It is 21 degrees.' },
  ],
};

describe('UI ↔ DB', () => {
  it('round-trips every supported part exactly', () => {
    const stored = fromUIMessage(uiAssistant, options);
    expect(toUIMessage(stored)).toEqual(uiAssistant);
  });

  it('stores parts in the DB shape (text, reasoning with signature detail, tool-invocation, file, data)', () => {
    const stored = fromUIMessage(uiAssistant, options);
    expect(stored.id).toBe('a1');
    expect(stored.createdAt).toEqual(new Date('2025-01-01T00:00:00.000Z'));
    expect(stored.content.metadata).toEqual({ model: 'test-model' });
    const [, reasoning, , weather, failed, , streaming, dynamic, , , file, data] = stored.content.parts;
    expect(reasoning).toEqual({
      type: 'reasoning',
      reasoning: 'Thinking about weather.',
      details: [{ type: 'text', text: 'Thinking about weather.', signature: 'sig-123' }],
      providerMetadata: { anthropic: { signature: 'sig-123' } },
    });
    expect(weather).toEqual({
      type: 'tool-invocation',
      toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'weather', args: { city: 'Paris' }, result: { celsius: 21 } },
      providerMetadata: { openai: { itemId: 'fc_1' } },
    });
    expect(failed).toMatchObject({ toolInvocation: { state: 'output-error', errorText: 'timeout' } });
    expect(streaming).toMatchObject({ toolInvocation: { state: 'partial-call' } });
    expect(dynamic).toMatchObject({ dynamic: true, providerExecuted: true, toolInvocation: { toolName: 'mcp_lookup', state: 'result' } });
    expect(file).toEqual({ type: 'file', mimeType: 'image/png', data: 'data:image/png;base64,iVBORw0KGgo=', filename: 'chart.png' });
    expect(data).toEqual({ type: 'data-weather', id: 'w1', data: { celsius: 21 } });
  });

  it('maps output-denied to an output-error with an execution-denied model output', () => {
    const stored = fromUIMessage(
      { id: 'd', role: 'assistant', parts: [{ type: 'tool-rm', toolCallId: 'c', state: 'output-denied', input: {}, approval: { id: 'ap', approved: false, reason: 'no' } }] },
      options,
    );
    expect(stored.content.parts[0]).toEqual({
      type: 'tool-invocation',
      toolInvocation: { state: 'output-error', toolCallId: 'c', toolName: 'rm', args: {}, errorText: 'no', modelOutput: { type: 'execution-denied', reason: 'no' } },
    });
    expect(toModelMessages([stored])[1]).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'rm', output: { type: 'execution-denied', reason: 'no' } }],
    });
  });

  it('gives raw base64 file data a data URL in the UI', () => {
    const stored: MastraDBMessage = { id: 'f', role: 'user', createdAt: new Date(0), content: { format: 2, parts: [{ type: 'file', mimeType: 'image/png', data: 'AAAA' }] } };
    expect(toUIMessage(stored).parts).toEqual([{ type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,AAAA' }]);
  });
});

describe('DB ↔ model', () => {
  it('round-trips text, reasoning (with signature), tool call/result and files through model messages', () => {
    const stored: MastraDBMessage = {
      id: 'a1',
      role: 'assistant',
      createdAt: new Date(0),
      content: {
        format: 2,
        parts: [
          { type: 'reasoning', reasoning: 'hmm', details: [{ type: 'text', text: 'hmm', signature: 'sig' }], providerMetadata: { anthropic: { signature: 'sig' } } },
          { type: 'text', text: 'Here is a chart.' },
          { type: 'file', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
          { type: 'tool-invocation', toolInvocation: { state: 'call', toolCallId: 'c1', toolName: 'weather', args: { city: 'Paris' } } },
        ],
      },
    };
    const model = toModelMessages([stored]);
    expect(model).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm', providerOptions: { anthropic: { signature: 'sig' } } },
          { type: 'text', text: 'Here is a chart.' },
          { type: 'file', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Paris' } },
        ],
      },
    ]);
    const back = fromModelMessage({ ...model[0]!, id: 'a1' } as unknown as ModelMessage, { now: () => new Date(0) });
    expect(back).toEqual(stored);
  });

  it('round-trips a tool result through a tool message folded by the list semantics', () => {
    const model: ModelMessage[] = [
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Paris' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'json', value: { celsius: 21 } } }] },
    ];
    const tool = fromModelMessage(model[1]!, options);
    expect(tool.role).toBe('tool');
    expect(tool.content.parts).toEqual([
      { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'weather', args: {}, result: { celsius: 21 } } },
    ]);
    expect(toModelMessages([tool])).toEqual([model[1]]);
  });

  it('stores bytes, URLs and data URLs from model file parts as strings', () => {
    const stored = fromModelMessage(
      {
        role: 'user',
        content: [
          { type: 'image', image: new Uint8Array([1, 2, 3]), mediaType: 'image/png' },
          { type: 'image', image: 'data:image/jpeg;base64,/9j/' },
          { type: 'file', data: new URL('https://example.com/a.pdf'), mediaType: 'application/pdf' },
          { type: 'file', data: { type: 'text', text: 'hello' }, mediaType: 'text/plain' },
          { type: 'file', data: { type: 'reference', reference: { openai: 'file-123' } }, mediaType: 'application/pdf' },
        ],
      },
      options,
    );
    expect(stored.content.parts).toEqual([
      { type: 'file', mimeType: 'image/png', data: 'AQID' },
      { type: 'file', mimeType: 'image/jpeg', data: 'data:image/jpeg;base64,/9j/' },
      { type: 'file', mimeType: 'application/pdf', data: 'https://example.com/a.pdf' },
      { type: 'file', mimeType: 'text/plain', data: 'aGVsbG8=' },
      { type: 'file', mimeType: 'application/pdf', data: '', providerReference: { openai: 'file-123' } },
    ]);
    expect(toModelMessages([stored])[0]?.content).toEqual([
      { type: 'file', data: 'AQID', mediaType: 'image/png' },
      { type: 'file', data: '/9j/', mediaType: 'image/jpeg' },
      { type: 'file', data: new URL('https://example.com/a.pdf'), mediaType: 'application/pdf' },
      { type: 'file', data: 'aGVsbG8=', mediaType: 'text/plain' },
      { type: 'file', data: { type: 'reference', reference: { openai: 'file-123' } }, mediaType: 'application/pdf' },
    ]);
  });
});

describe('UI → DB → model → DB → UI', () => {
  it('keeps text, reasoning, tool call and result, and files; data-* parts are dropped in model messages', () => {
    const ui: UIMessage = {
      id: 'a1',
      role: 'assistant',
      parts: [
        { type: 'reasoning', text: 'plan', providerMetadata: { anthropic: { signature: 's' } } },
        { type: 'tool-weather', toolCallId: 'c1', state: 'output-available', input: { city: 'Oslo' }, output: { celsius: 3 } },
        { type: 'data-progress', data: { done: true } },
        { type: 'text', text: 'Cold.' },
        { type: 'file', mediaType: 'image/png', url: 'https://example.com/map.png' },
      ],
    };
    const model = toModelMessages([fromUIMessage(ui, options)]);
    expect(model.map((message) => message.role)).toEqual(['assistant', 'tool', 'assistant']);
    const generated = ['a1', 'tool-message', 'a2'];
    const list = new MessageList({ generateId: () => generated.shift() ?? 'extra' });
    list.add(model, 'response');
    expect(list.get.all.ui()).toEqual([{ ...ui, parts: ui.parts.filter((part) => part.type !== 'data-progress') }]);
  });
});
