/**
 * `npm run example:durable`: a chat whose answers survive their server. Run two (or more)
 * instances on one PostgreSQL: any of them takes a message, any of them runs it, and any of them
 * streams it — a client whose instance dies mid-answer reconnects (`DurableChatTransport`, or
 * `useChat({ resume: true })` after a reload) and the answer goes on, from the journal, while
 * another instance takes the run over from its last commit.
 *
 *   POST /api/chat               { id, messages } → submits the run, streams it (UI message stream)
 *   GET  /api/chat/:id/stream    the chat's run from `Last-Event-ID` (or all of it); 204 when none
 *   POST /api/chat/:id/stop      stops the chat's run itself, wherever it runs
 *
 * Only the run's owner reads or stops it: each visitor is a user (cookie `demo_user`, made on the
 * first message; a real app takes its session), runs belong to their user (`resource`), and every
 * response carries a signed run token (`x-rxagent-run-token`, one hour) that
 * `DurableChatTransport` sends back on reconnects and stops. A request with neither the owner's
 * cookie nor a valid token for that run gets 404, as an unknown run does.
 *
 * DATABASE_URL (required), RUN_TOKEN_SECRET (≥ 32 bytes, the same on every instance; unset: a dev
 * secret derived from DATABASE_URL, with a warning), PORT (3211; 0 picks one), HOST (127.0.0.1),
 * WORKER_ID, WORD_DELAY_MS, RXAGENT_SCHEMA (the journal's and memory's, default rxagent),
 * PGBOSS_SCHEMA (default pgboss). Offline: the model is rxagent's scripted model.
 *
 * Each instance logs what its worker does with each run (`worker.events$`), so two terminals show
 * which instance claimed a run and which one finished it:
 *
 *   [instance-a] claimed run 3f2c… (epoch 1)
 *   [instance-b] claimed run 3f2c… (epoch 2)        after instance-a died: a takeover
 *   [instance-b] finished run 3f2c…: completed
 */
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import type { UIMessage } from 'ai';
import { PgBoss } from 'pg-boss';
import { Agent } from 'rxagent';
import { fromUIMessages, resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
import { RUN_ID_HEADER, RUN_TOKEN_HEADER, RunNotFoundError, createRunToken, createRunWorker, decodeRunIdHeader, runTokenAuthorization, type RunAuthorize, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { Memory } from 'rxagent/memory';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';

/** The assistant: answers order questions through an (idempotent) lookup tool, at a readable pace. */
export function createDurableChatAgent(storage: PostgresStorage, wordDelayMs: number): Agent {
  return new Agent({
    id: 'support',
    instructions: 'You are a patient support assistant.',
    model: scriptedModel({
      wordDelayMs,
      rules: [
        {
          match: ({ toolResults }) => toolResults.length > 0,
          reply: ({ toolResults }) => {
            const order = toolResults[0]?.output as { id: string; status: string; eta: string };
            return { text: `Order ${order.id} is ${order.status}. It left our warehouse this morning and the carrier expects to deliver it ${order.eta}; you will get a message with a tracking link as soon as it is out for delivery, and you can ask me again any time.` };
          },
        },
        { match: /order\s*#?(\d+)/i, reply: ({ userText }) => ({ toolCalls: [{ toolName: 'lookupOrder', args: { orderId: /order\s*#?(\d+)/i.exec(userText)?.[1] ?? '' } }] }) },
      ],
      fallback: {
        text: 'Happy to help. I can look up any order for you: tell me its number, for example "Where is order 1234?", and I will check where it is, when it should arrive and whether anything held it up on the way.',
      },
    }),
    memory: new Memory({ storage }),
    tools: {
      lookupOrder: {
        description: 'Looks an order up by its number',
        inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        // reads only: running it again after a takeover is harmless
        idempotent: true,
        execute: async ({ orderId }: { orderId: string }) => ({ id: orderId, status: 'shipped', eta: 'on Thursday' }),
      },
    },
  });
}

/** A running instance. */
export interface DurableChatServer {
  url: string;
  worker: RunWorker;
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
  return chunks.length === 0 ? {} : (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

/** Writes a fetch `Response` (status, headers, streamed body) to a node response; stops reading when the client goes. */
async function send(from: Response, to: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  from.headers.forEach((value, name) => (headers[name] = value));
  to.writeHead(from.status, headers);
  if (from.body === null) return void to.end();
  const reader = from.body.getReader();
  to.on('close', () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) break;
    if (!to.write(value)) await new Promise((resolve) => to.once('drain', resolve));
  }
  to.end();
}

/** The visitor's user id from the `demo_user` cookie (a real app reads its session), or `undefined`. */
function userOf(headers: Headers): string | undefined {
  const match = /(?:^|;\s*)demo_user=([\w-]{8,64})(?:;|$)/.exec(headers.get('cookie') ?? '');
  return match?.[1];
}

/** A fetch `Request` view of a node request (what the readers' `authorize` looks at). */
function webRequest(request: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value);
  return new Request(new URL(request.url ?? '/', 'http://localhost'), { headers });
}

/**
 * The run-token secret: RUN_TOKEN_SECRET, else (development only) one derived from the database
 * URL, so that every instance on the same database agrees, with a warning.
 */
export function runTokenSecret(connectionString: string, configured = process.env['RUN_TOKEN_SECRET']): string {
  if (configured !== undefined && configured !== '') return configured;
  console.warn('durable-chat: RUN_TOKEN_SECRET is not set; using a development secret derived from DATABASE_URL. Set a random secret of 32+ bytes in production.');
  return createHash('sha256').update(`rxagent durable-chat dev secret\0${connectionString}`).digest('hex');
}

/** The log line of a worker event (`undefined`: not logged), e.g. `[instance-a] claimed run r1 (epoch 1)`. */
export function describeWorkerEvent(workerId: string, event: RunWorkerEvent): string | undefined {
  const run = `run ${event.runId}`;
  switch (event.type) {
    case 'claimed':
      return `[${workerId}] claimed ${run} (epoch ${event.epoch})`;
    case 'completed':
      return `[${workerId}] finished ${run}: ${event.status}`;
    case 'released':
      return `[${workerId}] handed ${run} over (epoch ${event.epoch}): another instance goes on with it`;
    case 'fenced':
      return `[${workerId}] lost ${run} (epoch ${event.epoch}): another instance owns it now`;
    case 'failed':
      return `[${workerId}] could not go on with ${run} (epoch ${event.epoch}): ${event.error instanceof Error ? event.error.message : String(event.error)}`;
    default:
      return undefined; // committed: one per checkpoint, too many to log
  }
}

/** Starts one instance: a worker (runs any chat's run) and the three routes; logs each run it claims and ends. */
export async function startDurableChat(options: { connectionString: string; schema?: string; bossSchema?: string; port?: number; host?: string; workerId?: string; wordDelayMs?: number; concurrency?: number; tokenSecret?: string; log?: (line: string) => void }): Promise<DurableChatServer> {
  const { connectionString } = options;
  const workerId = options.workerId ?? `${hostname()}:${process.pid}`;
  const log = options.log ?? ((line: string) => console.log(line));
  const secret = options.tokenSecret ?? runTokenSecret(connectionString);
  const byToken = runTokenAuthorization({ secret });
  // the owner's cookie, or a valid run token for this run and owner
  const authorize: RunAuthorize = (run, request) => (request !== undefined && run.resourceId !== undefined && userOf(request.headers) === run.resourceId) || byToken(run, request);
  const tokenHeaders = (runId: string, resourceId: string): Record<string, string> => ({
    [RUN_TOKEN_HEADER]: createRunToken({ runId, resourceId, expiresInSeconds: 3600, secret }),
  });
  const schema = options.schema ?? 'rxagent';
  const journal = new PostgresRunJournal({ connectionString, schema });
  const storage = new PostgresStorage({ connectionString, schema }); // the journal's schema: memory's saves are fenced
  const boss = new PgBoss({ connectionString, schema: options.bossSchema ?? 'pgboss', useListenNotify: true, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', (error) => console.error('pg-boss:', error.message));
  await boss.start();
  const worker = createRunWorker({
    journal,
    boss,
    agents: [createDurableChatAgent(storage, options.wordDelayMs ?? 60)],
    workerId,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    queue: { pollingIntervalSeconds: 0.5 },
  });
  const logging = worker.events$.subscribe((event) => {
    const line = describeWorkerEvent(workerId, event);
    if (line !== undefined) log(line);
  });
  await worker.start();

  const chat = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = (await readJson(request)) as { id?: string; messages?: UIMessage[] };
    const last = body.messages?.at(-1);
    if (typeof body.id !== 'string' || last?.role !== 'user') return sendJson(response, 400, { error: { name: 'BadRequest', message: 'expected { id, messages } ending with a user message' } });
    const incoming = webRequest(request);
    const user = userOf(incoming.headers) ?? randomUUID();
    // a chat (thread) belongs to the user who started it
    const active = await journal.activeRun(body.id);
    if (active !== null && active.resourceId !== user) return sendJson(response, 404, { error: { name: 'RunNotFoundError', message: 'no such chat' } });
    // memory holds the history: the run takes the new message only
    const { runId } = await worker.submit('support', fromUIMessages([last]), { memory: { thread: body.id, resource: user } });
    const headers = { ...tokenHeaders(runId, user), 'set-cookie': `demo_user=${user}; Path=/; HttpOnly; SameSite=Lax` };
    // the submitter is the owner: reading its own run needs no check
    await send(await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true, headers }), response);
  };
  const resume = async (chatId: string, request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const header = request.headers[RUN_ID_HEADER];
    const runId = decodeRunIdHeader(typeof header === 'string' ? header : undefined) ?? (await journal.activeRun(chatId))?.runId;
    if (runId === undefined) return void response.writeHead(204).end();
    const after = request.headers['last-event-id'];
    await send(await resumeUIMessageStreamResponse(journal, runId, { request: webRequest(request), authorize, after: typeof after === 'string' ? after : null }), response);
  };
  const stop = async (chatId: string, request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const header = request.headers[RUN_ID_HEADER];
    const runId = decodeRunIdHeader(typeof header === 'string' ? header : undefined) ?? (await journal.activeRun(chatId))?.runId;
    if (runId === undefined) return sendJson(response, 404, { error: { name: 'RunNotFoundError', message: 'no run to stop' } });
    try {
      await worker.cancel(runId, { request: webRequest(request), authorize, reason: 'stopped by the user' });
    } catch (error) {
      if (RunNotFoundError.isInstance(error)) return sendJson(response, 404, { error: { name: error.name, message: error.message } });
      throw error;
    }
    sendJson(response, 200, { stopped: runId });
  };

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const match = /^\/api\/chat\/([^/]+)\/(stream|stop)$/.exec(url.pathname);
    const handled =
      request.method === 'POST' && url.pathname === '/api/chat'
        ? chat(request, response)
        : request.method === 'GET' && match?.[2] === 'stream'
          ? resume(decodeURIComponent(match[1]!), request, response)
          : request.method === 'POST' && match?.[2] === 'stop'
            ? stop(decodeURIComponent(match[1]!), request, response)
            : Promise.resolve(sendJson(response, 404, { error: { name: 'NotFound', message: url.pathname } }));
    handled.catch((error: unknown) => {
      console.error('durable-chat:', error);
      if (!response.headersSent) sendJson(response, 500, { error: { name: 'Error', message: 'An error occurred.' } });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3211, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    worker,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await worker.close({ handover: true });
      logging.unsubscribe();
      await boss.stop();
      await Promise.all([journal.close(), storage.close()]);
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const connectionString = process.env['DATABASE_URL'];
  if (connectionString === undefined || connectionString === '') {
    console.error('Set DATABASE_URL to a PostgreSQL database (both instances use the same one).');
    process.exit(1);
  }
  const instance = await startDurableChat({
    connectionString,
    port: Number(process.env['PORT'] ?? 3211),
    ...(process.env['HOST'] ? { host: process.env['HOST'] } : {}),
    ...(process.env['WORKER_ID'] ? { workerId: process.env['WORKER_ID'] } : {}),
    ...(process.env['WORD_DELAY_MS'] ? { wordDelayMs: Number(process.env['WORD_DELAY_MS']) } : {}),
    ...(process.env['RXAGENT_SCHEMA'] ? { schema: process.env['RXAGENT_SCHEMA'] } : {}),
    ...(process.env['PGBOSS_SCHEMA'] ? { bossSchema: process.env['PGBOSS_SCHEMA'] } : {}),
  });
  console.log(`durable chat listening on ${instance.url}`);
  const shutdown = (): void => void instance.close().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
