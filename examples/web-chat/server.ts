/**
 * `npm run example:web`: a chat page served by `node:http` (no framework) and one
 * `POST /api/chat` endpoint that streams an rxagent run as an AI SDK UI message stream — the
 * protocol `useChat` reads; the page reads it with a few lines of plain JavaScript.
 *
 * Offline by default (a scripted model); PORT / HOST choose where it listens (127.0.0.1:3210).
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pipeUIMessageStreamToResponse, type UIMessage } from 'ai';
import { fromUIMessages, toUIMessageStream } from 'rxagent/ai-sdk';
import type { Agent } from 'rxagent';
import { createChatAgent } from './chat-agent.js';

const pagePath = fileURLToPath(new URL('./page.html', import.meta.url));

/** A running chat server. */
export interface WebChatServer {
  url: string;
  close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

function sendText(response: ServerResponse, status: number, text: string, type = 'text/plain; charset=utf-8'): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(text);
}

async function handleChat(agent: Agent, request: IncomingMessage, response: ServerResponse): Promise<void> {
  let messages: UIMessage[];
  try {
    const body = (await readJson(request)) as { messages?: UIMessage[] };
    messages = fromUIMessages(body.messages ?? []);
  } catch (error) {
    sendText(response, 400, `Bad request: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  // Cancelling the stream (the browser went away) unsubscribes the run: the model call stops.
  const stream = toUIMessageStream(agent.stream$(messages), {
    onError: (error) => (error instanceof Error ? error.message : 'Something went wrong.'),
  });
  await pipeUIMessageStreamToResponse({ response, stream });
}

/** Starts the chat server; `port: 0` picks a free port. */
export async function startWebChat(options: { port?: number; host?: string; wordDelayMs?: number } = {}): Promise<WebChatServer> {
  const agent = await createChatAgent(options.wordDelayMs === undefined ? {} : { wordDelayMs: options.wordDelayMs });
  const page = await readFile(pagePath, 'utf8');
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.method === 'GET' && (url.pathname === '/' || url.pathname === '/index.html')) {
      sendText(response, 200, page, 'text/html; charset=utf-8');
    } else if (request.method === 'POST' && url.pathname === '/api/chat') {
      handleChat(agent, request, response).catch((error: unknown) => {
        if (!response.headersSent) sendText(response, 500, error instanceof Error ? error.message : 'error');
        else response.destroy();
      });
    } else {
      sendText(response, 404, 'Not found');
    }
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3210, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = await startWebChat({
    port: process.env.PORT === undefined ? 3210 : Number(process.env.PORT),
    host: process.env.HOST ?? '127.0.0.1',
  });
  console.log(`rxagent web chat: ${server.url}  (${process.env.OPENAI_API_KEY ? 'OpenAI' : 'offline scripted model'}; Ctrl+C to stop)`);
  console.log('Try: "hello", "Where is order 123?", "Can I get a refund?", "What is the admin password?"');
  const stop = (): void => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
