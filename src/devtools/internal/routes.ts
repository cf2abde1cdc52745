/**
 * The inspector's HTTP routes, on `node:http`: the page (plain HTML/JS/CSS from
 * `inspector-page/`), the chat (`POST /api/chat`, an AI SDK UI message stream of the traced run),
 * the recorded runs (`/api/runs…`, and `/api/run?id=…` as the page names them) and the live feed
 * of events (`GET /api/events`, server-sent events of transient `data-rxagent-inspector` UI parts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeUIMessageStreamToResponse, type UIMessage, type UIMessageChunk } from 'ai';
import type { Observable, Subscription } from 'rxjs';
import { DemandGate, type ChunkType } from '../../contract/index.js';
import type { AgentCallOptions, AgentInput, StreamCallOptions } from '../../loop/index.js';
import { fromUIMessages, toUIMessageStream } from '../../ai-sdk/index.js';
import { InspectorError } from '../errors/inspector-error.js';
import type { InspectableJournal, Inspector } from '../inspector.js';
import type { PageAssets } from '../page-assets.js';

/** What the routes serve. */
export interface InspectorRoutesContext {
  agent: { id: string; name?: string; stream$(input: AgentInput, options?: StreamCallOptions): Observable<ChunkType> };
  inspector: Inspector;
  assets: PageAssets;
  callOptions: Omit<AgentCallOptions, 'tracingContext' | 'runId'>;
  suggestions: readonly string[];
  /** Host names the server answers to (loopback names and the one it listens on), lowercase. */
  hosts: ReadonlySet<string>;
  /** The journal whose runs the page lists and opens, if any. */
  journal?: InspectableJournal;
  /** The open live feeds (one per server). */
  feeds: FeedHub;
}

/** The UI part type the live feed sends events as. */
export const INSPECTOR_PART_TYPE = 'data-rxagent-inspector';

const MAX_BODY = 2_000_000;

/**
 * Bytes a feed client may have waiting in the server's buffers (not yet taken by the socket). A
 * client past it (one that stopped reading, or a burst bigger than it can take) is dropped: its
 * page reconnects and reloads what it missed, and the server never queues every event of every
 * run for it.
 */
export const MAX_FEED_BACKLOG_BYTES = 8 * 1024 * 1024;

/** How often an idle feed gets a comment, so proxies and the browser keep it open. */
const FEED_KEEP_ALIVE_MS = 15_000;

/**
 * Live feeds open at once. Past it the oldest is dropped (its page reconnects within a second and
 * reloads what it missed): a client opening feed after feed holds at most this many backlogs of
 * {@link MAX_FEED_BACKLOG_BYTES}.
 */
export const MAX_FEEDS = 16;

/** One feed frame: a transient `data-rxagent-inspector` UI part; `undefined` for a value that is not JSON. */
function feedFrame(data: unknown): string | undefined {
  try {
    return `data: ${JSON.stringify({ type: INSPECTOR_PART_TYPE, data, transient: true } satisfies UIMessageChunk)}\n\n`;
  } catch {
    return undefined; // events are JSON-safe copies; one that is not is left out, never the feed
  }
}

/**
 * The server's live feeds: at most {@link MAX_FEEDS} (the oldest dropped past it), each event
 * serialised once for all of them, and one subscription to the inspector while any is open.
 */
export class FeedHub {
  readonly #inspector: Inspector;
  readonly #feeds = new Set<ServerResponse>();
  #subscription: Subscription | undefined;

  constructor(inspector: Inspector) {
    this.#inspector = inspector;
  }

  /** Sends `frame` to `feed`; a feed more than {@link MAX_FEED_BACKLOG_BYTES} behind is dropped. */
  #write(feed: ServerResponse, frame: string): void {
    feed.write(frame);
    if (feed.writableLength > MAX_FEED_BACKLOG_BYTES) this.#drop(feed);
  }

  #drop(feed: ServerResponse): void {
    this.#feeds.delete(feed);
    feed.destroy();
    if (this.#feeds.size === 0) {
      this.#subscription?.unsubscribe();
      this.#subscription = undefined;
    }
  }

  /** Starts a feed on `response` (headers written): its hello, then every event until it closes or is dropped. */
  open(response: ServerResponse): void {
    while (this.#feeds.size >= MAX_FEEDS) this.#drop(this.#feeds.values().next().value as ServerResponse);
    const hello = feedFrame({ type: 'hello', runs: this.#inspector.runs() });
    if (hello !== undefined) response.write(hello);
    this.#feeds.add(response);
    this.#subscription ??= this.#inspector.events().subscribe((event) => {
      const frame = feedFrame(event);
      if (frame === undefined) return;
      for (const feed of this.#feeds) this.#write(feed, frame); // a feed dropped meanwhile is not visited
    });
    const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), FEED_KEEP_ALIVE_MS);
    keepAlive.unref();
    response.once('close', () => {
      clearInterval(keepAlive);
      if (this.#feeds.has(response)) this.#drop(response);
    });
  }
}

function send(response: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  response.end(body);
}

/** Characters of an answer handed to the socket at a time (a slice is ≤ 4 × this in UTF-8). */
export const RESPONSE_SLICE_CHARS = 64 * 1024;

/**
 * How long an answer waits for its client to take a slice (`drain`) before the connection is
 * closed: a client that never reads holds at most one slice in the server, and not for ever.
 */
export const RESPONSE_DRAIN_TIMEOUT_MS = 30_000;

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  if (body.length <= RESPONSE_SLICE_CHARS) return send(response, status, body, 'application/json; charset=utf-8');
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body, 'utf8'),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  writeSliced(response, body);
}

/**
 * Writes `body` a slice at a time: the next only once the socket took the last (`write` returned
 * true, or `drain`), so a client that does not read holds at most one slice in the server (a run's
 * record is up to `maxBytesPerRun`, 16 MiB). No `drain` within {@link RESPONSE_DRAIN_TIMEOUT_MS}:
 * the connection is closed. A slice never ends between the two halves of a surrogate pair
 * (`JSON.stringify` leaves no lone one, and each slice is encoded on its own).
 */
function writeSliced(response: ServerResponse, body: string): void {
  let offset = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stopWaiting = (): void => {
    clearTimeout(timer);
    timer = undefined;
    response.off('drain', next);
  };
  const next = (): void => {
    stopWaiting();
    while (offset < body.length) {
      let end = Math.min(offset + RESPONSE_SLICE_CHARS, body.length);
      const last = body.charCodeAt(end - 1);
      if (end < body.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
      const slice = body.slice(offset, end);
      offset = end;
      if (offset === body.length) {
        response.end(slice);
        return;
      }
      if (!response.write(slice)) {
        response.once('drain', next);
        timer = setTimeout(() => {
          stopWaiting();
          response.destroy();
        }, RESPONSE_DRAIN_TIMEOUT_MS);
        (timer as { unref?: () => void }).unref?.();
        return;
      }
    }
  };
  response.once('close', stopWaiting);
  next();
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of request) {
    size += (part as Buffer).length;
    if (size > MAX_BODY) throw new RangeError(`request body over ${MAX_BODY} bytes`);
    parts.push(part as Buffer);
  }
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
}

function lastUserText(messages: readonly UIMessage[]): string {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return (last?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

async function chat(context: InspectorRoutesContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
    // a JSON content type makes a cross-site request preflighted (and so refused): no drive-by runs
    send(response, 415, 'POST /api/chat takes application/json: { "messages": UIMessage[] }');
    return;
  }
  let input: AgentInput;
  let title: string;
  let messages: UIMessage[];
  try {
    const body = (await readJson(request)) as { messages?: unknown };
    if (!Array.isArray(body?.messages)) throw new TypeError('expected { "messages": UIMessage[] }');
    messages = body.messages as UIMessage[];
    title = lastUserText(messages);
    input = fromUIMessages(body.messages as UIMessage[]) as AgentInput;
  } catch (error) {
    send(response, 400, `Bad request: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  const { agent, inspector, callOptions } = context;
  // the trace's operators stand between the run and the stream: one gate, given to both, paces the provider
  const demand = new DemandGate();
  const run$ = inspector.trace(({ tracingContext, runId }) => agent.stream$(input, { ...callOptions, tracingContext, runId, demand }), {
    agentId: agent.id,
    title,
    messages, // the page's chat shows the selected run's conversation, after a reload too
  });
  // the browser going away cancels the stream, which unsubscribes the run
  const stream = toUIMessageStream(run$, { demand, onError: (error) => (error instanceof Error ? error.message : String(error)) });
  await pipeUIMessageStreamToResponse({ response, stream });
}

/**
 * The live feed: server-sent events of transient `data-rxagent-inspector` UI parts (the UI message
 * stream's framing), until the client goes away — or falls more than
 * {@link MAX_FEED_BACKLOG_BYTES} behind, when it is dropped (its page reconnects and reloads).
 */
function events(context: InspectorRoutesContext, response: ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-vercel-ai-ui-message-stream': 'v1',
    'x-accel-buffering': 'no',
    'x-content-type-options': 'nosniff',
  });
  // a dropped feed comes back within a second (the page reloads what it missed on its next hello)
  response.write(': stream-open\nretry: 1000\n\n');
  context.feeds.open(response);
}

function runRoute(context: InspectorRoutesContext, response: ServerResponse, runId: string, what: string | undefined, query: URLSearchParams): void {
  try {
    if (what === undefined) sendJson(response, 200, context.inspector.run(runId));
    else if (what === 'marbles') {
      const { diagram, code, exact } = context.inspector.exportMarbles(runId, { test: query.get('test') === '1' });
      sendJson(response, 200, { diagram, code, exact });
    } else send(response, 404, 'Not found');
  } catch (error) {
    if (!InspectorError.isInstance(error)) throw error;
    sendJson(response, error.reason === 'unknown-run' ? 404 : 409, { error: error.reason, message: error.message });
  }
}

/** The journal's recent runs, and one opened by id (its record, kept by the inspector from then on). */
async function journalRoute(context: InspectorRoutesContext, response: ServerResponse, runId: string | undefined): Promise<void> {
  const { journal, inspector } = context;
  if (journal === undefined) return sendJson(response, 404, { error: 'no-journal', message: 'This inspector was started without a journal (inspect(agent, { journal })).' });
  try {
    if (runId === undefined) return sendJson(response, 200, await inspector.journalListing(journal));
    return sendJson(response, 200, await inspector.openJournalRun(journal, runId));
  } catch (error) {
    if (!InspectorError.isInstance(error)) throw error;
    sendJson(response, error.reason === 'unknown-run' ? 404 : 409, { error: error.reason, message: error.message });
  }
}

/** A Host header's name (`[::1]:3211` → `::1`), or `undefined` when it is not `name` or `name:port`. */
function hostName(header: string | undefined): string | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/.exec(header ?? '');
  return match === null ? undefined : (match[1] ?? match[2]);
}

/**
 * Whether a browser says another site's page (or another port's) made the request: Fetch Metadata
 * (`Sec-Fetch-Site` other than `same-origin`, or `none` for an address typed or bookmarked), or an
 * `Origin` that is not this server's own.
 */
function fromAnotherSite(request: IncomingMessage): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const origin = request.headers.origin;
  return origin !== undefined && origin !== `http://${request.headers.host ?? ''}`;
}

/** A path segment decoded, or `undefined` when it is not valid percent-encoding. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function badSegment(response: ServerResponse, path: string): void {
  sendJson(response, 400, { error: 'bad-request', message: `The run id in ${JSON.stringify(path)} is not valid percent-encoding.` });
}

/**
 * The run a query names (`?id=…`, percent-encoded as `encodeURIComponent` writes it: `+` is a
 * plus), or why it names none. The page names runs here, not in the path: a URL parser removes the
 * dot segments `.` and `..`, so `/api/runs/..` is `/api/`.
 */
function queryRunId(search: string): { runId: string } | { problem: string } {
  const values = search
    .slice(1)
    .split('&')
    .filter((part) => part.startsWith('id='))
    .map((part) => part.slice('id='.length));
  if (values.length !== 1) return { problem: values.length === 0 ? 'it names no run (?id=…)' : 'it names more than one run (id= twice)' };
  const runId = decodeSegment(values[0] as string);
  if (runId === undefined) return { problem: 'its id= is not valid percent-encoding (an encoded lone surrogate is not: no journal stores one)' };
  if (runId === '') return { problem: 'its id= is empty' };
  return { runId };
}

/** A 400 for a query that names no run. */
function badQuery(response: ServerResponse, path: string, problem: string): void {
  sendJson(response, 400, { error: 'bad-request', message: `GET ${path}?id=<run id>: ${problem}.` });
}

/** Handles one request. */
export async function handleRequest(context: InspectorRoutesContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const host = hostName(request.headers.host)?.toLowerCase();
  if (host === undefined || !context.hosts.has(host)) {
    // another site's name resolving to this machine (DNS rebinding) reaches nothing
    send(response, 403, `The inspector answers to ${[...context.hosts].join(', ')} only.`);
    return;
  }
  const url = new URL(request.url ?? '/', 'http://inspector.local');
  const path = url.pathname;
  const asset = request.method === 'GET' ? context.assets.get(path === '/' ? '/index.html' : path) : undefined;
  // the page itself may be linked to from anywhere; what it reads and does is for its own page only
  if (asset !== undefined) return send(response, 200, asset.body, asset.type);
  if (fromAnotherSite(request)) {
    send(response, 403, "The inspector's API answers its own page only (this request came from another site's page).");
    return;
  }
  if (request.method === 'GET') {
    if (path === '/api/info') {
      return sendJson(response, 200, { agentId: context.agent.id, agentName: context.agent.name ?? context.agent.id, suggestions: context.suggestions, journal: context.journal !== undefined });
    }
    if (path === '/api/journal') return journalRoute(context, response, undefined);
    const opened = /^\/api\/journal\/runs\/([^/]+)$/.exec(path);
    if (opened !== null) {
      const runId = decodeSegment(opened[1] as string);
      return runId === undefined ? badSegment(response, path) : journalRoute(context, response, runId);
    }
    if (path === '/api/run' || path === '/api/run/marbles' || path === '/api/journal/run') {
      const named = queryRunId(url.search);
      if ('problem' in named) return badQuery(response, path, named.problem);
      if (path === '/api/journal/run') return journalRoute(context, response, named.runId);
      return runRoute(context, response, named.runId, path === '/api/run' ? undefined : 'marbles', url.searchParams);
    }
    if (path === '/api/runs') return sendJson(response, 200, context.inspector.runs());
    if (path === '/api/events') return events(context, response);
    const match = /^\/api\/runs\/([^/]+)(?:\/([a-z]+))?$/.exec(path);
    if (match !== null) {
      const runId = decodeSegment(match[1] as string);
      return runId === undefined ? badSegment(response, path) : runRoute(context, response, runId, match[2], url.searchParams);
    }
  } else if (request.method === 'POST' && path === '/api/chat') {
    return chat(context, request, response);
  }
  send(response, 404, 'Not found');
}

/** Handles one request; a failure is a plain-text 500 (or, once the answer has begun, a cut connection). */
export function serveRequest(context: InspectorRoutesContext, request: IncomingMessage, response: ServerResponse): void {
  handleRequest(context, request, response).catch((error: unknown) => {
    if (response.headersSent) {
      response.destroy();
      return;
    }
    send(response, 500, `The inspector failed: ${error instanceof Error ? error.message : String(error)}`);
  });
}
