import { describe, expect, it } from 'vitest';
import type { ToolInvocationPart } from '../../src/message-list/index.js';
import { createList, dbMessage, ids, toolCall } from './helpers.js';

function invocations(list: ReturnType<typeof createList>): ToolInvocationPart['toolInvocation'][] {
  return list.get.all
    .db()
    .flatMap((message) => message.content.parts)
    .flatMap((part) => (part.type === 'tool-invocation' ? [part.toolInvocation] : []));
}

describe('folding tool model messages', () => {
  it('folds a json result into the matching call of the earlier assistant message', () => {
    const list = createList();
    list.add({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Paris' } }] }, 'response');
    list.add({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'json', value: { celsius: 21 } } }] }, 'response');
    expect(list.get.all.db()).toHaveLength(1);
    expect(invocations(list)).toEqual([{ state: 'result', toolCallId: 'c1', toolName: 'weather', args: { city: 'Paris' }, result: { celsius: 21 } }]);
  });

  it('folds text, error-text and error-json outputs', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [toolCall('a', 't'), toolCall('b', 't'), toolCall('c', 't')]), 'response');
    list.add(
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'a', toolName: 't', output: { type: 'text', value: 'plain' } },
          { type: 'tool-result', toolCallId: 'b', toolName: 't', output: { type: 'error-text', value: 'boom' } },
          { type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'error-json', value: { code: 7 } } },
        ],
      },
      'response',
    );
    expect(invocations(list)).toEqual([
      { state: 'result', toolCallId: 'a', toolName: 't', args: {}, result: 'plain' },
      { state: 'output-error', toolCallId: 'b', toolName: 't', args: {}, errorText: 'boom' },
      { state: 'output-error', toolCallId: 'c', toolName: 't', args: {}, result: { code: 7 }, isError: true, errorText: '{"code":7}' },
    ]);
  });

  it('keeps a content output exactly, for the model', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [toolCall('a', 'screenshot')]), 'response');
    const output = { type: 'content' as const, value: [{ type: 'text' as const, text: 'see image' }] };
    list.add({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'screenshot', output }] }, 'response');
    expect(invocations(list)[0]?.modelOutput).toEqual(output);
    expect(list.get.all.model()[1]).toEqual({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'screenshot', output }] });
  });

  it('folds into the most recent call when providers reuse tool call ids', () => {
    const list = createList();
    list.add(dbMessage('old', 'assistant', [{ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'call_0', toolName: 't', args: {}, result: 'old' } }]), 'memory');
    list.add(dbMessage('new', 'assistant', [toolCall('call_0', 't')]), 'response');
    list.add({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_0', toolName: 't', output: { type: 'text', value: 'new' } }] }, 'response');
    expect(invocations(list).map((invocation) => invocation.result)).toEqual(['old', 'new']);
  });

  it('marks the message it folded into as unsaved, even a remembered one', () => {
    const list = createList();
    list.add(dbMessage('m1', 'assistant', [toolCall('c1', 'client-tool')]), 'memory');
    expect(list.getUnsavedIds()).toEqual([]);
    list.add({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'client-tool', output: { type: 'json', value: 1 } }] }, 'input');
    expect(list.getUnsavedIds()).toEqual(['m1']);
    expect(list.getSource('m1')).toBe('memory');
  });

  it('adds unmatched results as an assistant message (merged into a preceding assistant of the same source)', () => {
    const list = createList();
    list.add({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'x', toolName: 'lost', output: { type: 'text', value: 'r' } }] }, 'input');
    expect(list.get.all.db()).toEqual([
      {
        id: 'id-1',
        role: 'assistant',
        createdAt: new Date('2025-01-01T00:00:00.000Z'),
        content: { format: 2, parts: [{ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'x', toolName: 'lost', args: {}, result: 'r' } }] },
      },
    ]);
  });

  it('folds a provider-executed result inside the same assistant model message', () => {
    const list = createList();
    list.add(
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'ws', toolName: 'web_search', input: { query: 'rx' }, providerExecuted: true },
          { type: 'tool-result', toolCallId: 'ws', toolName: 'web_search', output: { type: 'json', value: ['hit'] } },
          { type: 'text', text: 'found it' },
        ],
      },
      'response',
    );
    const parts = list.get.all.db()[0]?.content.parts;
    expect(parts).toEqual([
      { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'ws', toolName: 'web_search', args: { query: 'rx' }, result: ['hit'] }, providerExecuted: true },
      { type: 'text', text: 'found it' },
    ]);
  });
});

describe('updateToolInvocation', () => {
  it('merges a result into the call with the same toolCallId, keeping args when not given', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [toolCall('c1', 'lookup', { id: 7 })]), 'response');
    list.drainUnsavedMessages();
    const updated = list.updateToolInvocation({
      type: 'tool-invocation',
      toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'lookup', args: undefined, result: { ssn: '[REDACTED]' } },
    });
    expect(updated).toBe(true);
    expect(invocations(list)).toEqual([{ state: 'result', toolCallId: 'c1', toolName: 'lookup', args: { id: 7 }, result: { ssn: '[REDACTED]' } }]);
    expect(list.getUnsavedIds()).toEqual(['r1']);
  });

  it('replaces an earlier result and drops stale error fields and model output', () => {
    const list = createList();
    list.add(
      dbMessage('r1', 'assistant', [
        { type: 'tool-invocation', toolInvocation: { state: 'output-error', toolCallId: 'c1', toolName: 't', args: {}, errorText: 'x', modelOutput: { type: 'error-text', value: 'x' } } },
      ]),
      'response',
    );
    list.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 't', args: {}, result: 'ok' } });
    expect(invocations(list)).toEqual([{ state: 'result', toolCallId: 'c1', toolName: 't', args: {}, result: 'ok' }]);
  });

  it('records an output-error', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [toolCall('c1', 't', { q: 1 })]), 'response');
    list.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'output-error', toolCallId: 'c1', toolName: 't', args: { q: 1 }, errorText: 'timeout' } });
    expect(invocations(list)[0]).toEqual({ state: 'output-error', toolCallId: 'c1', toolName: 't', args: { q: 1 }, errorText: 'timeout' });
  });

  it('falls back to the earliest pending provider-executed call with the same tool name and rewrites its id', () => {
    const list = createList();
    list.add(
      dbMessage('r1', 'assistant', [
        toolCall('p1', 'web_search', { q: 'a' }, { providerExecuted: true }),
        toolCall('p2', 'web_search', { q: 'b' }, { providerExecuted: true }),
        toolCall('local', 'web_search', { q: 'c' }),
      ]),
      'response',
    );
    const updated = list.updateToolInvocation({
      type: 'tool-invocation',
      toolInvocation: { state: 'result', toolCallId: 'srvtoolu_1', toolName: 'web_search', args: undefined, result: ['r'] },
      providerExecuted: true,
    });
    expect(updated).toBe(true);
    expect(invocations(list).map((invocation) => [invocation.toolCallId, invocation.state, invocation.args])).toEqual([
      ['srvtoolu_1', 'result', { q: 'a' }],
      ['p2', 'call', { q: 'b' }],
      ['local', 'call', { q: 'c' }],
    ]);
  });

  it('does not fall back to a call that is not provider-executed, nor to remembered calls', () => {
    const list = createList();
    list.add(dbMessage('m1', 'assistant', [toolCall('p0', 'web_search', {}, { providerExecuted: true })]), 'memory');
    list.add(dbMessage('r1', 'assistant', [toolCall('local', 'web_search')]), 'response');
    const updated = list.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'other', toolName: 'web_search', args: {}, result: 1 } });
    expect(updated).toBe(false);
    expect(invocations(list).every((invocation) => invocation.state === 'call')).toBe(true);
    expect(list.getUnsavedIds()).toEqual(['r1']);
  });

  it('returns false when nothing matches', () => {
    const list = createList();
    list.add('hi', 'input');
    expect(list.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'nope', toolName: 'x', args: {}, result: 1 } })).toBe(false);
  });

  it('merges part-level provider metadata', () => {
    const list = createList();
    list.add(dbMessage('r1', 'assistant', [toolCall('c1', 't', {}, { providerMetadata: { anthropic: { a: 1 } } })]), 'response');
    list.updateToolInvocation({
      type: 'tool-invocation',
      toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 't', args: {}, result: 1 },
      providerMetadata: { anthropic: { b: 2 } },
    });
    const part = list.get.all.db()[0]?.content.parts[0];
    expect(part?.type === 'tool-invocation' && part.providerMetadata).toEqual({ anthropic: { a: 1, b: 2 } });
    expect(ids(list.get.all.db())).toEqual(['r1']);
  });
});
