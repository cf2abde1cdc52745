/**
 * A plain `node:http` server that streams an agent run as server-sent events and stops it when the
 * client disconnects: `takeUntil(disconnect$)`. Unsubscribing aborts the provider request, so a
 * closed browser tab costs no more tokens.
 *
 * Run it: `npx tsx examples/rx/disconnect.ts`, then `curl -N 'http://127.0.0.1:3211/chat?q=story'`
 * and press Ctrl+C in curl (the server logs that the run was cut short).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { filter, fromEvent, takeUntil, tap, type Observable } from 'rxjs';
import { Agent, type ChunkType } from 'rxagent';
import { scriptedModel } from 'rxagent/testing';

/** How each request ended, for logs (and tests). */
export type RunEnd = 'completed' | 'disconnected' | 'failed';

/** A running SSE server. */
export interface SseServer {
  url: string;
  close(): Promise<void>;
}

/** Streams `run$` to `response` as SSE until it ends or the client goes away. */
export function streamToClient(run$: Observable<ChunkType>, request: IncomingMessage, response: ServerResponse, onEnd: (end: RunEnd) => void): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
  // The response closed before we ended it: the client went away.
  const disconnect$ = fromEvent(response, 'close').pipe(filter(() => !response.writableEnded));
  let clientLeft = false;
  const subscription = run$
    .pipe(
      takeUntil(disconnect$.pipe(tap(() => (clientLeft = true)))),
    )
    .subscribe({
      next: (chunk) => response.write(`event: ${chunk.type}\ndata: ${JSON.stringify('payload' in chunk ? chunk.payload : chunk.data)}\n\n`),
      error: () => {
        onEnd('failed');
        response.end();
      },
      complete: () => {
        onEnd(clientLeft ? 'disconnected' : 'completed');
        response.end();
      },
    });
  request.once('error', () => subscription.unsubscribe());
}

/** Starts the server: `GET /chat?q=…` streams one run. `port: 0` picks a free port. */
export async function startSseServer(agent: Agent, options: { port?: number; onEnd?: (end: RunEnd) => void } = {}): Promise<SseServer> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.method !== 'GET' || url.pathname !== '/chat') {
      response.writeHead(404).end();
      return;
    }
    streamToClient(agent.stream$(url.searchParams.get('q') ?? 'hello'), request, response, options.onEnd ?? (() => undefined));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3211, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const agent = new Agent({
    id: 'sse',
    model: scriptedModel({ wordDelayMs: 150, rules: [], fallback: { text: 'A slow answer, one word at a time, so there is time to hang up before it ends.' } }),
  });
  const server = await startSseServer(agent, { onEnd: (end) => console.log(`run ended: ${end}`) });
  console.log(`SSE on ${server.url}/chat?q=hello (Ctrl+C to stop)`);
  process.once('SIGINT', () => void server.close().then(() => process.exit(0)));
}
