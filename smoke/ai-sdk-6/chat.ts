// An AI SDK 6 app (`npm run smoke:install` copies it into an app outside the repository, with
// ai@6, @ai-sdk/openai@3, @ai-sdk/react@3 and the packed rxagent): the provider package's model (a
// LanguageModelV3) in an rxagent Agent, a route answering with rxagent's toUIMessageStreamResponse,
// and a three-turn chat read the way the browser does (the Response body's SSE, parsed, folded by
// ai@6's readUIMessageStream); useChat with rxagent's transports is type-checked.
import { createOpenAI } from '@ai-sdk/openai';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { Agent } from 'rxagent';
import { DurableChatTransport, fromUIMessages, toUIMessageStreamResponse } from 'rxagent/ai-sdk';

// An OpenAI-compatible server, answering with the number of messages it was sent.
const sse = (events: unknown[]) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('') + 'data: [DONE]\n\n';
const openai = createOpenAI({
  apiKey: 'sk-offline',
  fetch: async (_input, init) => {
    const body = JSON.parse(String(init?.body)) as { messages: unknown[] };
    const words = ['Turn', ' with', ` ${body.messages.length}`, ' messages.'];
    const chunk = (delta: object, finish: string | null) => ({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] });
    return new Response(sse([chunk({ role: 'assistant', content: '' }, null), ...words.map((content) => chunk({ content }, null)), chunk({}, 'stop')]), { headers: { 'content-type': 'text/event-stream' } });
  },
});
const agent = new Agent({ id: 'ai6', instructions: 'Be brief.', model: openai.chat('gpt-4o') });

// the route: POST { messages } → the UI message stream
export async function POST(request: Request): Promise<Response> {
  const { messages } = (await request.json()) as { messages: UIMessage[] };
  return toUIMessageStreamResponse(agent.stream$(fromUIMessages(messages), { abortSignal: request.signal }));
}

// the client's side: the Response body's SSE, parsed into UI message chunks, folded by ai@6
async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
      buffer = buffer.slice(end + 2);
      if (data !== undefined) yield data;
    }
  }
}
async function turn(messages: UIMessage[]): Promise<UIMessage> {
  const response = await POST(new Request('http://app/api/chat', { method: 'POST', body: JSON.stringify({ messages }) }));
  if (response.headers.get('x-vercel-ai-ui-message-stream') !== 'v1') throw new Error('not a UI message stream response');
  let done = false;
  const chunks = new ReadableStream<UIMessageChunk>({
    async start(controller) {
      for await (const data of events(response.body!)) {
        if (data === '[DONE]') done = true;
        else controller.enqueue(JSON.parse(data) as UIMessageChunk);
      }
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream: chunks })) last = message;
  if (!done || last === undefined) throw new Error('the stream did not end with [DONE] and a message');
  return last;
}
const text = (message: UIMessage) => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

const history: UIMessage[] = [];
for (const [n, question] of ['Hello', 'And again?', 'One more'].entries()) {
  history.push({ id: `u${n}`, role: 'user', parts: [{ type: 'text', text: question }] });
  const answer = await turn(history);
  const expected = `Turn with ${2 * n + 2} messages.`; // instructions, then the history
  if (text(answer) !== expected) throw new Error(`turn ${n + 1}: ${JSON.stringify(text(answer))}, expected ${JSON.stringify(expected)}`);
  history.push(answer);
}
console.log(history.map((message) => `${message.role}: ${text(message)}`).join(' | '));

// What ai@6 cannot read: `reset-step`, a UI chunk of ai@7. rxagent's UI stream sends it in its
// default live release when a tripwire ends a run (and when a step is retried, or a durable run
// taken over); with `release: 'accepted'` it never does. Read through DefaultChatTransport, as
// useChat reads it: the README's AI SDK 6 paragraph says the same.
const guarded = new Agent({
  id: 'ai6-guarded',
  instructions: 'Be brief.',
  model: openai.chat('gpt-4o'),
  outputProcessors: [{ id: 'no-turns', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' && part.payload.text.includes('Turn') ? abort('no turns here') : part) }],
});
async function tripwired(release: 'live' | 'accepted'): Promise<string> {
  const transport = new DefaultChatTransport<UIMessage>({
    api: 'http://app/api/chat',
    fetch: async (_input, init) => {
      const { messages } = JSON.parse(String(init?.body)) as { messages: UIMessage[] };
      return toUIMessageStreamResponse(guarded.stream$(fromUIMessages(messages)), { release });
    },
  });
  const stream = await transport.sendMessages({ chatId: 'c', messages: [history[0]!], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
  const errors: string[] = [];
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, onError: (error) => errors.push(error instanceof Error && error.name !== 'Error' ? error.name : String((error as Error).message ?? error)) })) last = message;
  return `${release}: parts [${last?.parts.map((part) => part.type).join(', ') ?? ''}], errors [${errors.join(', ')}]`;
}
console.log(await tripwired('live'));
console.log(await tripwired('accepted'));

// type-checked only (a hook runs inside a React component): useChat with rxagent's transport
export function useSupportChat() {
  const durable = useChat({ transport: new DurableChatTransport<UIMessage>({ api: '/api/chat' }), resume: true });
  const plain = useChat({ transport: new DefaultChatTransport<UIMessage>({ api: '/api/chat' }) });
  return { durable, plain };
}
