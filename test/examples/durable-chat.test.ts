/**
 * examples/durable-chat: two instances on one PostgreSQL behind a failover proxy (what a load
 * balancer does). A client (the AI SDK's transport machinery, as `useChat` drives it:
 * `DurableChatTransport.sendMessages` read with `readUIMessageStream`) asks the first instance;
 * whichever instance claimed the run (pg-boss decides) is SIGKILLed mid-answer; the survivor takes
 * the run over — the client's stream goes on (reconnected to the survivor when its own instance
 * died, else read live from the journal) and ends with the whole answer once; memory holds the
 * exchange once. Each instance's log says which one claimed the run and which one finished it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { readUIMessageStream, type UIMessage } from 'ai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableChatTransport } from 'rxagent/ai-sdk';
import { PostgresStorage } from 'rxagent/storage/postgres';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

const ANSWER =
  'Happy to help. I can look up any order for you: tell me its number, for example "Where is order 1234?", and I will check where it is, when it should arrive and whether anything held it up on the way.';
const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_chat_${suffix}`;
const bossSchema = `pgboss_chat_${suffix}`;

interface Instance {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
  /** What the instance printed so far. */
  stdout(): string;
}

let server: TestPostgres;
const instances: Instance[] = [];
let proxy: Server;

function startInstance(workerId: string): Promise<Instance> {
  const child = fork(join(import.meta.dirname, '../../examples/durable-chat/server.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, DATABASE_URL: server.connectionString, PORT: '0', WORKER_ID: workerId, WORD_DELAY_MS: '100', RXAGENT_SCHEMA: schema, PGBOSS_SCHEMA: bossSchema },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout?.on('data', (data: Buffer) => {
      stdout += data.toString();
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url !== undefined && !instances.some((known) => known.child === child)) {
        const instance = { child, url, exited, stdout: () => stdout };
        instances.push(instance);
        resolve(instance);
      }
    });
    child.once('exit', (code) => reject(new Error(`instance ${workerId} exited (${code}) before listening\n${stderr}`)));
  });
}

/** Forwards each request to the first live instance (a refused connection tries the next). */
function startProxy(): Promise<string> {
  proxy = createServer((request, response) => {
    const body: Buffer[] = [];
    request.on('data', (chunk: Buffer) => body.push(chunk));
    request.on('end', () => {
      const live = instances.filter((instance) => instance.child.exitCode === null && instance.child.signalCode === null);
      const attempt = (index: number): void => {
        const target = live[index];
        if (target === undefined) return void response.writeHead(502).end();
        const upstream = httpRequest(new URL(request.url ?? '/', target.url), { method: request.method, headers: request.headers }, (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
          answer.on('error', () => response.destroy());
          answer.on('aborted', () => response.destroy());
        });
        upstream.on('error', (error: NodeJS.ErrnoException) => (response.headersSent ? response.destroy() : error.code === 'ECONNREFUSED' ? attempt(index + 1) : response.destroy()));
        upstream.end(Buffer.concat(body));
      };
      attempt(0);
    });
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);

afterAll(async () => {
  for (const instance of instances) instance.child.kill('SIGKILL');
  await Promise.all(instances.map((instance) => instance.exited));
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await server?.stop();
}, 60_000);

describe('examples/durable-chat', () => {
  it('two instances: the one answering is killed mid-answer, the client’s stream goes on and ends with the whole answer once', async () => {
    const both = await Promise.all([startInstance('instance-a'), startInstance('instance-b')]);
    const api = `${await startProxy()}/api/chat`;
    const transport = new DurableChatTransport<UIMessage>({ api, maxReconnects: 12 });
    const chatId = `chat-${suffix}`;
    const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What can you do for me?' }] };
    const stream = await transport.sendMessages({ chatId, messages: [user], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
    const watch = new pg.Pool({ connectionString: server.connectionString, max: 1 });
    let killed: string | undefined;
    let last: UIMessage | undefined;
    try {
      for await (const message of readUIMessageStream({ stream })) {
        last = message;
        const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
        if (killed === undefined && text.split(' ').length >= 6) {
          // the instance running the answer dies
          const { rows } = await watch.query<{ owner: string }>(`SELECT owner FROM "${schema}".runs WHERE thread_id = $1`, [chatId]);
          killed = rows[0]!.owner;
          const owner = both[killed === 'instance-a' ? 0 : 1]!;
          owner.child.kill('SIGKILL');
          await owner.exited;
        }
      }
    } finally {
      await watch.end();
    }
    expect(killed).toMatch(/^instance-[ab]$/);
    const survivor = killed === 'instance-a' ? 'instance-b' : 'instance-a';
    const texts = last?.parts.filter((part) => part.type === 'text').map((part) => (part.type === 'text' ? part.text : ''));
    expect(texts).toEqual([ANSWER]);
    // the journal says who finished it (the survivor, the second owner); memory holds the exchange once
    const storage = new PostgresStorage({ connectionString: server.connectionString, schema });
    const db = new pg.Pool({ connectionString: server.connectionString, max: 1 });
    try {
      const { rows } = await db.query<{ id: string; status: string; epoch: number; owner: string }>(`SELECT id, status, epoch, owner FROM "${schema}".runs WHERE thread_id = $1`, [chatId]);
      expect(rows).toEqual([{ id: expect.any(String), status: 'completed', epoch: 2, owner: survivor }]);
      // the logs tell the same story: the killed instance claimed the run, the survivor took it over and finished it
      const runId = rows[0]!.id;
      const logOf = (workerId: string) => both[workerId === 'instance-a' ? 0 : 1]!.stdout();
      expect(logOf(killed!)).toContain(`[${killed}] claimed run ${runId} (epoch 1)`);
      expect(logOf(killed!)).not.toContain(`finished run ${runId}`);
      expect(logOf(survivor)).toContain(`[${survivor}] claimed run ${runId} (epoch 2)\n`);
      expect(logOf(survivor)).toContain(`[${survivor}] finished run ${runId}: completed\n`);
      const thread = await storage.getMessages({ threadId: chatId });
      expect(thread.map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(thread[1]?.content.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual([ANSWER]);
    } finally {
      await Promise.all([storage.close(), db.end()]);
    }
  }, 180_000);
});
