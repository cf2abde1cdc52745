/**
 * `inspect(agent)`: a local page to chat with an agent and watch each run as a marble timeline.
 */
import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { AgentCallOptions } from '../loop/index.js';
import { InspectorError } from './errors/inspector-error.js';
import { Inspector, type InspectableJournal, type InspectorOptions } from './inspector.js';
import { FeedHub, serveRequest, type InspectorRoutesContext } from './internal/routes.js';
import { clientErrorAnswer } from './internal/client-error.js';
import { loadPageAssets } from './page-assets.js';

/**
 * Options of {@link inspect}: where it listens, what it keeps (see {@link InspectorOptions}), and
 * the options of every run it starts.
 *
 * @example
 * ```ts
 * import type { InspectOptions } from 'rxagent/devtools';
 * const options: InspectOptions = { port: 0, maxRuns: 20, callOptions: { maxSteps: 3 } };
 * ```
 */
export interface InspectOptions extends InspectorOptions {
  /** Default 3211; `0` picks a free port (read it from `url`). */
  port?: number;
  /** Default `'127.0.0.1'`. The page runs the agent for whoever reaches it: keep it on loopback. */
  host?: string;
  /** Options given to every run the page starts (the inspector sets `tracingContext` and `runId`). */
  callOptions?: Omit<AgentCallOptions, 'tracingContext' | 'runId'>;
  /** Prompts the page offers as one-click chips. */
  suggestions?: readonly string[];
  /** Record into this inspector (e.g. one that also traces your app's runs); default: a new one. */
  inspector?: Inspector;
  /**
   * A `RunJournal` (`PostgresRunJournal`, `InMemoryRunJournal`) whose runs the page lists and opens
   * after the fact (see `Inspector.openJournalRun`). Default: none.
   */
  journal?: InspectableJournal;
}

/**
 * A running inspector page.
 *
 * @example
 * ```ts
 * import { inspect, type InspectorServer } from 'rxagent/devtools';
 * const server: InspectorServer = await inspect(agent);
 * console.log(server.url); // http://127.0.0.1:3211/
 * ```
 */
export interface InspectorServer {
  /** The page's address. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** The runs it recorded; trace more with `inspector.trace(…)`. */
  readonly inspector: Inspector;
  /** Stops listening and closes open streams. */
  close(): Promise<void>;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return `${typeof value} ${String(value).slice(0, 40)}`;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  const id = (value as { id?: unknown }).id;
  const kind = typeof name === 'string' && name !== '' && name !== 'Object' ? `a ${name}` : 'an object';
  return `${kind}${typeof id === 'string' ? ` with id "${id}"` : ''} (no stream$ method)`;
}

function isAgentLike(value: unknown): value is InspectorRoutesContext['agent'] {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { stream$?: unknown }).stream$ === 'function' &&
    typeof (value as { id?: unknown }).id === 'string'
  );
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): InspectorError {
  if (error.code === 'EADDRINUSE') {
    return new InspectorError('port-in-use', `inspect(): port ${port} on ${host} is in use. Pass another port, or port: 0 for any free one.`, { cause: error });
  }
  return new InspectorError('listen-failed', `inspect(): could not listen on ${host}:${port} (${error.code ?? error.message}).`, { cause: error });
}

/**
 * Serves a local page to chat with `agent` and watch each run as a marble timeline: one lane
 * per processor and hook with the chunks going in and out (passed, rewritten, dropped, held),
 * tripwires, retried attempts, judge calls, tool calls and timings; click a marble for its
 * payload; export an ended run as a marble diagram for a `TestScheduler` test. Runs stream into
 * the page live. Plain `node:http`, the page is static HTML/JS/CSS; the chat is the AI SDK UI
 * message stream of `rxagent/ai-sdk`. Rejects with an `InspectorError` for a non-agent
 * (`not-an-agent`), a taken port (`port-in-use`) or bad options (`invalid-option`).
 *
 * @example
 * ```ts
 * import { inspect } from 'rxagent/devtools';
 * const server = await inspect(agent, { port: 3211 });
 * console.log(`inspector: ${server.url}`);
 * ```
 */
export async function inspect(agent: unknown, options: InspectOptions = {}): Promise<InspectorServer> {
  if (!isAgentLike(agent)) {
    throw new InspectorError('not-an-agent', `inspect(agent): expected an rxagent Agent (new Agent({ … })), got ${describe(agent)}.`);
  }
  const { port = 3211, host = '127.0.0.1', callOptions = {}, inspector: given, suggestions = [], journal, ...caps } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InspectorError('invalid-option', `inspect(): options.port must be an integer from 0 to 65535 (got ${String(port)}).`);
  }
  if (typeof host !== 'string' || host === '') {
    throw new InspectorError('invalid-option', `inspect(): options.host must be a host name or address such as '127.0.0.1' (got ${typeof host}).`);
  }
  if (!Array.isArray(suggestions) || !suggestions.every((suggestion) => typeof suggestion === 'string')) {
    throw new InspectorError('invalid-option', 'inspect(): options.suggestions must be an array of strings (prompts the page offers).');
  }
  if (typeof callOptions !== 'object' || callOptions === null) {
    throw new InspectorError('invalid-option', `inspect(): options.callOptions must be an object of run options (got ${callOptions === null ? 'null' : typeof callOptions}).`);
  }
  if (given !== undefined && !(given instanceof Inspector)) {
    throw new InspectorError('invalid-option', 'inspect(): options.inspector must be an Inspector (new Inspector()).');
  }
  if (journal !== undefined && (typeof journal !== 'object' || journal === null || typeof journal.getRun !== 'function' || typeof journal.read$ !== 'function')) {
    throw new InspectorError('invalid-option', 'inspect(): options.journal must be a RunJournal (e.g. new PostgresRunJournal({ connectionString })).');
  }
  const inspector = given ?? new Inspector(caps);
  const context: InspectorRoutesContext = {
    agent,
    inspector,
    assets: await loadPageAssets(),
    callOptions,
    suggestions: [...suggestions],
    ...(journal === undefined ? {} : { journal }),
    feeds: new FeedHub(inspector),
    // host names compare as DNS does, without case
    hosts: new Set(['127.0.0.1', 'localhost', '::1', host.toLowerCase()]),
  };
  const server: Server = createServer((request, response) => serveRequest(context, request, response));
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port)));
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${bound}/`,
    port: bound,
    inspector,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Node's `clientError`: the answer of `clientErrorAnswer` on the socket, or the socket destroyed when it cannot be written. */
function answerClientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, body] = clientErrorAnswer(error);
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(json)}\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${json}`,
  );
}
