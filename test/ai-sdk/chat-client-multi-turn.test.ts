/**
 * A multi-turn chat driven by the AI SDK's own client-side functions: `DefaultChatTransport`
 * (request and SSE parsing, with a custom fetch that calls our handler) and `readUIMessageStream`.
 * The reply history goes back for turn 2.
 */
import { describe, expect, it } from 'vitest';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { fromUIMessages, toUIMessageStream, toUIMessageStreamResponse } from '../../src/ai-sdk/index.js';
import { Agent } from '../../src/index.js';
import { finishPart, mockModel, textParts } from '../../src/testing/index.js';

function chatServer(options: { messageId?: string } = {}) {
  let turn = 0;
  const model = mockModel({ parts: () => [...textParts(`Reply ${++turn}`), finishPart()] });
  const agent = new Agent({ id: 'chat', instructions: 'Be brief.', model });
  const received: UIMessage[][] = [];
  const handler = async (request: Request): Promise<Response> => {
    const { messages } = (await request.json()) as { messages: UIMessage[] };
    received.push(messages);
    return toUIMessageStreamResponse(agent.stream$(fromUIMessages(messages), { abortSignal: request.signal }), options);
  };
  const transport = new DefaultChatTransport<UIMessage>({
    api: 'http://chat.test/api/chat',
    fetch: async (input, init) => handler(new Request(input, init)),
  });
  return { model, received, transport };
}

async function send(transport: DefaultChatTransport<UIMessage>, messages: UIMessage[]): Promise<UIMessage> {
  const stream = await transport.sendMessages({ trigger: 'submit-message', chatId: 'chat-1', messageId: undefined, messages, abortSignal: undefined });
  let reply: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) reply = message;
  if (reply === undefined) throw new Error('no reply');
  return reply;
}

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const textOf = (message: UIMessage): string => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('a chat continued with the AI SDK client', () => {
  it('turn 2 sends the reply back and succeeds; each reply has its own non-empty id', async () => {
    const { model, received, transport } = chatServer();
    const history: UIMessage[] = [user('u1', 'Hi')];
    const first = await send(transport, history);
    expect(first.id).not.toBe('');
    expect(textOf(first)).toBe('Reply 1');
    history.push(first, user('u2', 'And again?'));
    const second = await send(transport, history);
    expect(textOf(second)).toBe('Reply 2');
    expect(second.id).not.toBe('');
    expect(second.id).not.toBe(first.id);
    // the server got the first reply back, with its id, and the model saw it in turn 2's prompt
    expect(received[1]?.map((message) => message.id)).toEqual(['u1', first.id, 'u2']);
    const prompt = JSON.stringify(model.calls[1]?.prompt);
    expect(prompt).toContain('Reply 1');
    expect(prompt).toContain('And again?');
  });

  it('the server can choose the message id (messageId option)', async () => {
    const { transport } = chatServer({ messageId: 'reply-fixed' });
    const reply = await send(transport, [user('u1', 'Hi')]);
    expect(reply.id).toBe('reply-fixed');
  });

  it('toUIMessageStream: the start chunk has a generated messageId, or one from generateMessageId', async () => {
    const agent = new Agent({ id: 'a', instructions: 'x', model: mockModel({ parts: [...textParts('ok'), finishPart()] }) });
    const ids: string[] = [];
    for (const options of [{}, {}, { generateMessageId: () => 'made-here' }]) {
      const reader = toUIMessageStream(agent.stream$('Hi'), options).getReader();
      const { value } = await reader.read();
      await reader.cancel();
      expect(value?.type).toBe('start');
      ids.push((value as { messageId?: string }).messageId ?? '');
    }
    expect(ids[0]).toMatch(/^\w{8,}$/);
    expect(ids[1]).not.toBe(ids[0]);
    expect(ids[2]).toBe('made-here');
  });
});
