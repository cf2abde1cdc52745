/**
 * The inspector's HTTP routes, on `node:http`: the page (plain HTML/JS/CSS from
 * `inspector-page/`), the chat (`POST /api/chat`, an AI SDK UI message stream of the traced run),
 * the recorded runs (`/api/runs…`) and the live feed of events (`GET /api/events`, server-sent
 * events of transient `data-rxagent-inspector` UI parts).
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
  /** Host names the server answers to (loopback names and the one it listens on). */
  hosts: ReadonlySet<string>;
  /** The journal whose runs the page lists and opens, if any. */
  journal?: InspectableJournal;
}

/** The UI part type the live feed sends events as. */
export const INSPECTOR_PART_TYPE = 'data-rxagent-inspector';

const MAX_BODY = 2_000_000;

function send(response: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  response.end(body);
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, JSON.stringify(value), 'application/json; charset=utf-8');
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

/** The live feed as a UI message stream of transient data parts, until the client goes away. */
function events(context: InspectorRoutesContext, response: ServerResponse): Promise<void> {
  let subscription: Subscription | undefined;
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      controller.enqueue({ type: INSPECTOR_PART_TYPE, data: { type: 'hello', runs: context.inspector.runs() }, transient: true });
      subscription = context.inspector.events().subscribe((event) => {
        controller.enqueue({ type: INSPECTOR_PART_TYPE, data: event, transient: true });
      });
    },
    cancel() {
      subscription?.unsubscribe();
    },
  });
  response.once('close', () => subscription?.unsubscribe());
  return pipeUIMessageStreamToResponse({ response, stream, keepAliveMs: 15_000 });
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
    if (runId === undefined) return sendJson(response, 200, { runs: await inspector.journalRuns(journal) });
    return sendJson(response, 200, await inspector.openJournalRun(journal, runId));
  } catch (error) {
    if (!InspectorError.isInstance(error)) throw error;
    sendJson(response, error.reason === 'unknown-run' ? 404 : 409, { error: error.reason, message: error.message });
  }
}

/** Handles one request. */
export async function handleRequest(context: InspectorRoutesContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const host = (request.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  if (!context.hosts.has(host)) {
    // another site's name resolving to this machine (DNS rebinding) reaches nothing
    send(response, 403, `The inspector answers to ${[...context.hosts].join(', ')} only.`);
    return;
  }
  const url = new URL(request.url ?? '/', 'http://inspector.local');
  const path = url.pathname;
  if (request.method === 'GET') {
    const asset = context.assets.get(path === '/' ? '/index.html' : path);
    if (asset !== undefined) return send(response, 200, asset.body, asset.type);
    if (path === '/api/info') {
      return sendJson(response, 200, { agentId: context.agent.id, agentName: context.agent.name ?? context.agent.id, suggestions: context.suggestions, journal: context.journal !== undefined });
    }
    if (path === '/api/journal') return journalRoute(context, response, undefined);
    const opened = /^\/api\/journal\/runs\/([^/]+)$/.exec(path);
    if (opened !== null) return journalRoute(context, response, decodeURIComponent(opened[1] as string));
    if (path === '/api/runs') return sendJson(response, 200, context.inspector.runs());
    if (path === '/api/events') return events(context, response);
    const match = /^\/api\/runs\/([^/]+)(?:\/([a-z]+))?$/.exec(path);
    if (match !== null) return runRoute(context, response, decodeURIComponent(match[1] as string), match[2], url.searchParams);
  } else if (request.method === 'POST' && path === '/api/chat') {
    return chat(context, request, response);
  }
  send(response, 404, 'Not found');
}
