/**
 * The inspector (`inspect()`, `rxagent/devtools`) against whoever wants it to fail: real HTTP
 * requests to the real server on port 0, and the page in Debian's Chromium when it is installed.
 *
 * - the HTTP surface: Host spellings a rebinding page or a typo can send (generated over the class:
 *   case, trailing dots, suffixes, userinfo, other spellings of loopback, ports), requests another
 *   site's page makes (a foreign `Origin`, `Sec-Fetch-Site: cross-site` on a state-changing GET),
 *   preflights, odd methods, traversal, malformed percent-encoding, huge URLs, an internal failure;
 * - a client of the live feed that never reads: its backlog is bounded, it is dropped, and the page
 *   catches up after a dropped feed;
 * - runs a model, a tool or a package can make: a shared structure (a DAG) that is small in memory
 *   and exponential as a tree, values that cannot be read or serialised (a Proxy that throws on
 *   every trap, BigInt, cycles, throwing getters, a judge model with odd ids), cuts inside a
 *   surrogate pair, trace labels that are not strings, 100,000 chunks, a journaled run of 300,000
 *   entries;
 * - closing the server with feeds, chats and half-sent requests open;
 * - hostile markup in every label the page shows (titles, agent, processor, tool, judge and journal
 *   ids, data chunk types, error messages): rendered as text, nothing runs.
 *
 * What `inspect-server.test.ts`, `payload-and-literal.test.ts` and the marble export's escaping
 * property already show is not repeated.
 */
import { existsSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import fc from 'fast-check';
import { chromium, type Browser } from 'playwright-core';
import { count, from, interval, lastValueFrom, map, Observable, of, take, toArray, concat } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type ChunkType } from 'rxagent';
import { inspect, Inspector, InspectorError, type InspectorRunRecord, type InspectorServer } from 'rxagent/devtools';
import { InMemoryRunJournal } from 'rxagent/durable';
import { scriptedModel } from 'rxagent/testing';
import { toPayload } from '../../src/devtools/internal/payload.js';
import { PROPERTY_RUNS, seedFor } from '../reliability/support/property.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

// ---- helpers ------------------------------------------------------------------------------------

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request with exactly these headers (node:http sets Host from the URL unless given). */
function send(server: InspectorServer, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port: server.port, path, method: options.method ?? 'GET', headers: options.headers ?? {} }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (part: string) => (body += part));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** The status line's code for a request written byte for byte (a Host header as a client may spell it). */
function statusWithHost(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let head = '';
    socket.setEncoding('latin1');
    socket.on('data', (part: string) => {
      head += part;
      const line = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (line !== null) {
        resolve(Number(line[1]));
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(0));
    socket.write(Buffer.from(`GET /api/info HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, 'utf8'));
  });
}

const chunkOf = (type: string, payload: Record<string, unknown> = {}): ChunkType => ({ type, runId: 'run-hostile', from: 'AGENT', payload }) as unknown as ChunkType;
const dataChunk = (type: string, data: unknown): ChunkType => ({ type, runId: 'run-hostile', from: 'AGENT', data }) as unknown as ChunkType;

/** A shared structure: `width` references to one array, `levels` deep — a few hundred objects, `width ** levels` leaves as a tree. */
function dag(width: number, levels: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < levels; level++) {
    const child = value;
    value = Array.from({ length: width }, () => child);
  }
  return value;
}

/** Whether `text` holds a surrogate without its pair. */
function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

const userMessage = (text: string) => ({ id: 'u1', role: 'user', parts: [{ type: 'text', text }] });
const quietAgent = (text = 'one two three', wordDelayMs?: number) =>
  new Agent({ id: 'quiet', model: scriptedModel({ rules: [], fallback: { text }, ...(wordDelayMs === undefined ? {} : { wordDelayMs }) }) });

// ---- the HTTP surface ---------------------------------------------------------------------------

describe('the HTTP surface', () => {
  let server: InspectorServer;
  const journal = new InMemoryRunJournal();

  beforeAll(async () => {
    await journal.createRun({ runId: 'jr-1', agentId: 'support', input: null });
    const { lease } = await journal.claim('jr-1', 'instance-a');
    await journal.append(lease, [{ type: 'start', runId: 'jr-1', from: 'AGENT', payload: { messageId: 'm1' } }] as ChunkType[]);
    server = await inspect(quietAgent(), { port: 0, journal });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers to loopback names only, however the Host header is spelled (property)', async () => {
    // a loopback name (any case, as DNS compares them), optionally with a port: nothing else
    const exact = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;
    const names = ['127.0.0.1', 'localhost', '[::1]', '::1', '0.0.0.0', '127.0.0.2', '127.1', '2130706433', '0x7f000001', '[::ffff:127.0.0.1]', '[0:0:0:0:0:0:0:1]', 'localhost.localdomain', 'evil.example', '127.0.0.1.nip.io', ''];
    const spelling = fc
      .tuple(
        fc.constantFrom(...names),
        fc.constantFrom('', '.', '.evil.example', ':', `:${server.port}`, ':80', ':0', `:${server.port}:${server.port}`, ':99999', ':abc', ' x', '%2e', '#', '/', '\\'),
        fc.constantFrom('', 'evil.example.', 'evil.example@', 'a.', ' ', 'user:pass@'),
        fc.constantFrom('as is', 'upper', 'capital', 'cyrillic o'),
      )
      .map(([name, suffix, prefix, casing]) => {
        const cased = casing === 'upper' ? name.toUpperCase() : casing === 'capital' ? name.charAt(0).toUpperCase() + name.slice(1) : casing === 'cyrillic o' ? name.replace('o', '\u043e') : name;
        return `${prefix}${cased}${suffix}`;
      });
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(spelling, async (host) => {
        const status = await statusWithHost(server.port, host);
        // what HTTP hands the server: the value without the optional whitespace around it
        const wanted = exact.test(host.replace(/^[ \t]+|[ \t]+$/g, '')) ? 200 : 'refused';
        if (wanted === 200) accepted += 1;
        expect(status === 200 ? 200 : 'refused', `Host: ${JSON.stringify(host)}`).toBe(wanted);
      }),
      { numRuns: Math.min(PROPERTY_RUNS, 400), seed: seedFor('inspector host spellings') },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('refuses a request another site made: a foreign Origin on the chat, a cross-site state-changing GET (nothing runs, nothing opens)', async () => {
    const before = server.inspector.runs().length;
    const body = JSON.stringify({ messages: [userMessage('run me')] });
    for (const origin of ['http://evil.example', 'null', `http://localhost:${server.port + 1}`, `https://127.0.0.1:${server.port}`]) {
      const posted = await send(server, '/api/chat', { method: 'POST', headers: { 'content-type': 'application/json', origin }, body });
      expect(posted.status, `Origin: ${origin}`).toBe(403);
    }
    for (const site of ['cross-site', 'same-site']) {
      const opened = await send(server, '/api/journal/runs/jr-1', { headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' } });
      expect(opened.status, `Sec-Fetch-Site: ${site}`).toBe(403);
      const listed = await send(server, '/api/runs', { headers: { 'sec-fetch-site': site } });
      expect(listed.status).toBe(403);
    }
    expect(server.inspector.runs().length).toBe(before);
    // its own page (same origin, or a typed address) still works; the page itself may be linked to
    const own = await send(server, '/api/chat', { method: 'POST', headers: { 'content-type': 'application/json', origin: `http://127.0.0.1:${server.port}`, 'sec-fetch-site': 'same-origin' }, body });
    expect(own.status).toBe(200);
    expect((await send(server, '/api/journal/runs/jr-1', { headers: { 'sec-fetch-site': 'none' } })).status).toBe(200);
    expect((await send(server, '/', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } })).status).toBe(200);
  });

  it('grants no preflight, echoes no TRACE, serves no file outside the page', async () => {
    const preflight = await send(server, '/api/chat', {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).toBeGreaterThanOrEqual(400);
    expect(Object.keys(preflight.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    const trace = await send(server, '/api/runs', { method: 'TRACE', headers: { 'x-secret': 'echo-me' } });
    expect(trace.status).toBe(404);
    expect(trace.body).not.toContain('echo-me');
    for (const path of ['/..%2f..%2fpackage.json', '/%2e%2e/package.json', '/inspector-page/index.html', '/page-assets.ts', '/..\\..\\package.json', '/inspector.js%00.html']) {
      const response = await send(server, path);
      expect(response.status, path).toBe(404);
      expect(response.body).not.toContain('"name": "rxagent"');
    }
    // past Node's 16 KB of request line and headers: a 414 that says why (it was Node's bare 431)
    const long = await send(server, `/api/runs/${'a'.repeat(100_000)}`);
    expect(long.status).toBe(414);
    expect(JSON.parse(long.body)).toMatchObject({ error: 'uri-too-long' });
  });

  it('answers malformed percent-encoding in a path with a 400 naming it, never a 500', async () => {
    for (const path of ['/api/runs/%E0%A4%A', '/api/runs/%', '/api/runs/%ZZ/marbles', '/api/journal/runs/%C0%AF', '/api/journal/runs/%uD800']) {
      const response = await send(server, path);
      expect(response.status, path).toBe(400);
      expect(response.headers['content-type']).toContain('application/json');
      expect(JSON.parse(response.body)).toMatchObject({ error: 'bad-request', message: expect.stringContaining('percent-encoding') });
    }
  });

  it('answers an internal failure with a plain-text 500 that no browser sniffs', async () => {
    const failing = {
      getRun: () => Promise.reject(new Error('<img src=x onerror=alert(1)> database is away')),
      read$: () => of(),
    };
    const broken = await inspect(quietAgent(), { port: 0, journal: failing as never });
    try {
      const response = await send(broken, '/api/journal/runs/jr-1');
      expect(response.status).toBe(500);
      expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    } finally {
      await broken.close();
    }
  });
});

// ---- a feed client that never reads -------------------------------------------------------------

/** A synchronous run of `size` text deltas of `width` characters each. */
function bigRun(inspector: Inspector, size: number, width: number, title: string): Observable<ChunkType> {
  const text = 'x'.repeat(width);
  const chunks = [chunkOf('start'), ...Array.from({ length: size }, (_, index) => chunkOf('text-delta', { id: 't0', text: `${index} ${text}` })), chunkOf('finish', {})];
  return inspector.trace(() => from(chunks), { title });
}

describe('the live feed under a client that never reads', () => {
  it('drops the client once its backlog passes the bound, instead of queueing every event of every run', async () => {
    const server = await inspect(quietAgent(), { port: 0, maxRuns: 2 });
    const socket: Socket = connect(server.port, '127.0.0.1');
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
      let received = '';
      await new Promise<void>((resolve) => {
        socket.once('data', (part: Buffer) => {
          received = part.toString('latin1');
          resolve();
        });
      });
      expect(received).toContain('200 OK');
      socket.pause();
      // 40 runs of 1,000 events of ~3 KB: ~120 MB the stalled client would be sent
      let produced = 0;
      for (let run = 0; run < 40; run++) {
        await lastValueFrom(bigRun(server.inspector, 1_000, 3_000, run === 39 ? 'the-last-run' : `run ${run}`));
        produced += 1_000 * 3_000;
        await new Promise((resolve) => setImmediate(resolve));
      }
      const lastRunId = server.inspector.runs().at(-1)!.runId;
      // now read what the server kept for it: the stream ends (dropped) before the last run's end arrives
      let bytes = 0;
      let tail = '';
      const outcome = await new Promise<'dropped' | 'all of it'>((resolve) => {
        socket.on('data', (part: Buffer) => {
          bytes += part.length;
          tail = (tail + part.toString('latin1')).slice(-100_000);
          if (tail.includes(`"runId":"${lastRunId}"`) && tail.includes('"type":"run-end"')) resolve('all of it');
        });
        socket.on('end', () => resolve('dropped'));
        socket.on('error', () => resolve('dropped'));
        socket.on('close', () => resolve('dropped'));
        socket.resume();
      });
      expect(outcome).toBe('dropped');
      expect(bytes).toBeLessThan(produced / 2);
    } finally {
      socket.destroy();
      await server.close();
    }
  }, 60_000);
});

// ---- hostile runs -------------------------------------------------------------------------------

describe('runs a model, a tool or a package can make', () => {
  let server: InspectorServer;
  beforeAll(async () => {
    server = await inspect(quietAgent(), { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  const record = async (runId: string): Promise<{ status: number; body: string }> => send(server, `/api/runs/${encodeURIComponent(runId)}`);

  it('copies a shared structure (small in memory, exponential as a tree) within a bound, and exports it without expanding it', async () => {
    const shared = dag(30, 4); // 121 objects; 810,000 leaves as a tree (dag(60, 5) exhausts a 4 GB heap)
    const chunks = [chunkOf('start'), dataChunk('data-shared', shared), chunkOf('finish', {})];
    const seen = await lastValueFrom(server.inspector.trace(() => from(chunks), { title: 'shared' }).pipe(toArray()));
    expect(seen.length).toBe(chunks.length);
    seen.forEach((chunk, index) => expect(chunk).toBe(chunks[index]));
    const runId = server.inspector.runs().at(-1)!.runId;
    const response = await record(runId);
    expect(response.status).toBe(200);
    expect(response.body.length).toBeLessThan(1_000_000);
    expect(response.body).toContain('values left out');
    const marbles = await send(server, `/api/runs/${runId}/marbles`);
    expect(marbles.status).toBe(200);
    const exported = JSON.parse(marbles.body) as { code: string; exact: boolean };
    expect(exported.code.length).toBeLessThan(2_000_000);
    expect(exported.exact).toBe(false);
    expect(exported.code).toContain('// Not exact');
  });

  it('records what cannot be read or serialised without touching the run, and still serves and exports it', async () => {
    const proxy = new Proxy(
      {},
      {
        get: () => {
          throw new Error('get trap');
        },
        has: () => {
          throw new Error('has trap');
        },
        ownKeys: () => {
          throw new Error('ownKeys trap');
        },
        getPrototypeOf: () => {
          throw new Error('getPrototypeOf trap');
        },
        getOwnPropertyDescriptor: () => {
          throw new Error('descriptor trap');
        },
      },
    ) as ChunkType;
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const getter = Object.defineProperty({ fine: 1 }, 'boom', {
      enumerable: true,
      get: () => {
        throw new Error('no peeking');
      },
    });
    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    const chunks: ChunkType[] = [
      chunkOf('start'),
      dataChunk('data-big', { count: 10n }),
      dataChunk('data-cycle', cyclic),
      dataChunk('data-getter', getter),
      proxy,
      dataChunk('data-revoked', revocable.proxy),
      chunkOf('finish', {}),
    ];
    const seen: ChunkType[] = [];
    const run$ = server.inspector.trace(
      ({ tracingContext }) =>
        new Observable<ChunkType>((subscriber) => {
          // a judge model from a package whose ids are not strings, and hook reports holding the same values
          const time = performance.now();
          tracingContext.onJudge?.({ processorId: 'judge', provider: 10n as never, modelId: Symbol('model') as never, outcome: 'ok', startTime: time, endTime: time, output: proxy });
          tracingContext.onHook?.({ processorId: 'p', hook: 'processInput', outcome: 'pass', startTime: time, endTime: time, input: { messages: [cyclic] }, output: revocable.proxy });
          for (const chunk of chunks) subscriber.next(chunk);
          subscriber.complete();
        }),
      { title: 'unreadable' },
    );
    await lastValueFrom(run$.pipe(map((chunk) => seen.push(chunk))));
    expect(seen.length).toBe(chunks.length);
    seen.forEach((chunk, index) => expect(chunk).toBe(chunks[index]));
    const runId = server.inspector.runs().at(-1)!.runId;
    const response = await record(runId);
    expect(response.status).toBe(200);
    const parsed = JSON.parse(response.body) as InspectorRunRecord;
    expect(parsed.status).toBe('finish');
    expect(parsed.events.find((event) => event.type === 'judge')).toMatchObject({ provider: '10', modelId: 'Symbol(model)' });
    const marbles = await send(server, `/api/runs/${runId}/marbles`);
    expect(marbles.status, marbles.body).toBe(200);
    expect((JSON.parse(marbles.body) as { exact: boolean }).exact).toBe(false);
  });

  it('never cuts a string inside a surrogate pair: payloads, titles and labels (property)', () => {
    const text = fc.tuple(fc.integer({ min: 0, max: 4_010 }), fc.string({ unit: 'grapheme', maxLength: 20 })).map(([pad, tail]) => 'x'.repeat(pad) + tail);
    fc.assert(
      fc.property(text, (value) => {
        const copied = toPayload(value) as string;
        expect(hasLoneSurrogate(copied)).toBe(false);
        if (value.length <= 4_000) expect(copied).toBe(value);
      }),
      { numRuns: PROPERTY_RUNS, seed: seedFor('inspector surrogate cut') },
    );
    const inspector = new Inspector();
    const emoji = '\u{1F600}';
    inspector.trace(() => of(chunkOf('start'), chunkOf('text-delta', { id: 't0', text: `${'y'.repeat(22)}${emoji}${emoji}` }), chunkOf('finish', {})), { title: `${'x'.repeat(199)}${emoji}` }).subscribe();
    const [summary] = inspector.runs();
    expect(hasLoneSurrogate(summary!.title)).toBe(false);
    const label = inspector.run(summary!.runId).events.find((event) => event.type === 'chunk' && event.chunkType === 'text-delta');
    expect(hasLoneSurrogate((label as { label: string }).label)).toBe(false);
  });

  it('round-trips any text through the record and the feed, lone surrogates and line separators included (property)', async () => {
    const inspector = new Inspector();
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 60 }), async (text) => {
        const chunks = [chunkOf('start'), chunkOf('text-delta', { id: 't0', text: `</script>${text}\u2028\u2029` }), chunkOf('finish', {})];
        const events: string[] = [];
        const subscription = inspector.events().subscribe((event) => events.push(JSON.stringify(event)));
        await lastValueFrom(inspector.trace(() => from(chunks)));
        subscription.unsubscribe();
        const delta = events.map((event) => JSON.parse(event) as { type: string; chunk?: { payload?: { text?: string } } }).find((event) => event.type === 'chunk' && event.chunk?.payload?.text !== undefined);
        expect(delta?.chunk?.payload?.text).toBe(`</script>${text}\u2028\u2029`);
      }),
      { numRuns: Math.min(PROPERTY_RUNS, 300), seed: seedFor('inspector text round trip') },
    );
    // and over the wire: one such record served as JSON, one such event on the feed
    const text = `</script><!--\u2028\u2029\uD800\r\n${'\u0000'}`;
    const feed = await fetch(new URL('/api/events', server.url));
    const reader = feed.body!.pipeThrough(new TextDecoderStream()).getReader();
    await lastValueFrom(server.inspector.trace(() => of(chunkOf('start'), chunkOf('text-delta', { id: 't0', text }), chunkOf('finish', {}))));
    let buffer = '';
    let found: string | undefined;
    while (found === undefined) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (const line of buffer.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        try {
          const event = JSON.parse(line.slice(6)) as { data?: { type?: string; chunk?: { payload?: { text?: string } } } };
          if (event.data?.type === 'chunk' && event.data.chunk?.payload?.text !== undefined) found = event.data.chunk.payload.text;
        } catch {
          // a line cut by the read: the next read completes it
        }
      }
    }
    await reader.cancel();
    expect(found).toBe(text);
    const runId = server.inspector.runs().at(-1)!.runId;
    const served = JSON.parse((await record(runId)).body) as InspectorRunRecord;
    expect(served.events.some((event) => event.type === 'chunk' && (event.chunk as { payload?: { text?: string } }).payload?.text === text)).toBe(true);
  });

  it('refuses trace labels that are not strings when trace() is called, never inside the run', () => {
    const inspector = new Inspector();
    for (const [index, options] of [{ title: 42 }, { agentId: {} }, { title: Symbol('t') }, null].entries()) {
      let thrown: unknown;
      try {
        inspector.trace(() => of(chunkOf('start')), options as never);
      } catch (error) {
        thrown = error;
      }
      expect(InspectorError.isInstance(thrown), `options #${index}`).toBe(true);
      expect((thrown as InspectorError).reason).toBe('invalid-option');
    }
    expect(inspector.runs()).toEqual([]);
  });

  it('refuses inspect() options of the wrong shape with an InspectorError naming the option', async () => {
    for (const [options, named] of [
      [{ suggestions: 'Hello!' }, 'options.suggestions'],
      [{ suggestions: [{ toString: null }] }, 'options.suggestions'],
      [{ callOptions: 'maxSteps=3' }, 'options.callOptions'],
      [{ host: 42 }, 'options.host'],
    ] as const) {
      let thrown: unknown;
      try {
        const started = await inspect(quietAgent(), { port: 0, ...(options as object) });
        await started.close();
      } catch (error) {
        thrown = error;
      }
      expect(InspectorError.isInstance(thrown), named).toBe(true);
      expect(thrown).toMatchObject({ reason: 'invalid-option', message: expect.stringContaining(named) });
    }
  });

  it('keeps within its caps through a run of 100,000 chunks, and hands the run every chunk', async () => {
    const inspector = new Inspector();
    const words = Array.from({ length: 100_000 }, (_, index) => `w${index}`).join(' ');
    const agent = new Agent({ id: 'long', model: scriptedModel({ rules: [], fallback: { text: words } }), outputProcessors: [{ id: 'pass', processOutputStream: ({ part }) => part }] });
    const delivered = await lastValueFrom(inspector.trace(({ tracingContext, runId }) => agent.stream$('go', { tracingContext, runId })).pipe(count()));
    expect(delivered).toBeGreaterThan(100_000);
    const [summary] = inspector.runs();
    expect(summary).toMatchObject({ status: 'finish', chunkCount: delivered, truncated: true });
    expect(summary!.eventCount).toBeLessThanOrEqual(20_001);
    let refused: unknown;
    try {
      inspector.exportMarbles(summary!.runId);
    } catch (error) {
      refused = error;
    }
    expect(InspectorError.isInstance(refused) && refused.reason).toBe('run-truncated');
  });

  it('opens a journaled run of 300,000 entries in time linear in its length', async () => {
    const journal = new InMemoryRunJournal();
    await journal.createRun({ runId: 'long', agentId: 'support', input: null });
    const { lease } = await journal.claim('long', 'instance-a');
    const chunks = [chunkOf('start'), ...Array.from({ length: 300_000 }, () => chunkOf('text-delta', { id: 't0', text: 'x' }))].map((chunk) => ({ ...chunk, runId: 'long' }) as ChunkType);
    for (let index = 0; index < chunks.length; index += 10_000) await journal.append(lease, chunks.slice(index, index + 10_000));
    const journaled = await inspect(quietAgent(), { port: 0, journal });
    try {
      const opened = await send(journaled, '/api/journal/runs/long');
      expect(opened.status).toBe(200);
      expect(JSON.parse(opened.body)).toMatchObject({ runId: 'long', chunkCount: 300_001, truncated: true, source: 'journal' });
    } finally {
      await journaled.close();
    }
  }, 20_000);
});

// ---- closing ------------------------------------------------------------------------------------

const handles = (): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) if (name.startsWith('TCP')) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
};

describe('closing the inspector', () => {
  it('with feeds, a streaming chat and half-sent requests open: every handle closes, the page run is cancelled, an app run goes on', async () => {
    const before = handles();
    const server = await inspect(quietAgent('word '.repeat(200), 30), { port: 0 });
    const feed = await fetch(new URL('/api/events', server.url));
    const feedReader = feed.body!.getReader();
    await feedReader.read();
    const chat = await fetch(new URL('/api/chat', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [userMessage('talk slowly')] }) });
    const chatReader = chat.body!.getReader();
    await chatReader.read();
    const stalled = connect(server.port, '127.0.0.1');
    stalled.on('error', () => undefined);
    await new Promise((resolve) => stalled.once('connect', resolve));
    stalled.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
    stalled.pause();
    const half = connect(server.port, '127.0.0.1');
    half.on('error', () => undefined);
    await new Promise((resolve) => half.once('connect', resolve));
    half.write('POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"mess');
    // an app's own traced run, not made by the page
    const appRun = lastValueFrom(
      server.inspector.trace(() => concat(interval(5).pipe(take(40), map((index) => chunkOf('text-delta', { id: 't0', text: String(index) }))), of(chunkOf('finish', {})))).pipe(toArray()),
    );
    await expect.poll(() => server.inspector.runs().length).toBe(2);

    await server.close();
    await server.close(); // twice is fine

    await Promise.allSettled([feedReader.read(), chatReader.read()]);
    expect((await appRun).length).toBe(41);
    await expect.poll(() => server.inspector.runs().map((run) => run.status)).toEqual(['cancelled', 'finish']);
    stalled.destroy();
    half.destroy();
    // sockets of earlier tests may close meanwhile: none of this server's is left
    await expect.poll(() => Object.entries(handles()).every(([name, open]) => open <= (before[name] ?? 0))).toBe(true);
  });
});

// ---- the page, in Chromium ----------------------------------------------------------------------

const chromiumPath = process.env.RXAGENT_CHROMIUM ?? '/usr/bin/chromium';
const launchArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Markup and script in every shape a label can smuggle: a script end, an attribute break, an event handler, line separators. */
const HOSTILE = `</script><script>window.__pwned='script'</script><img src=x onerror="window.__pwned='img'">"' onmouseover="window.__pwned='attr'" \u2028\u2029<b>bold</b>`;

describe.skipIf(!existsSync(chromiumPath))('the page in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath, args: launchArgs });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows hostile markup in every label as text: nothing runs, no element is made from it', async () => {
    const journal = new InMemoryRunJournal();
    const journalId = `jr-${HOSTILE}`;
    await journal.createRun({ runId: journalId, agentId: HOSTILE, input: null });
    const { lease } = await journal.claim(journalId, HOSTILE);
    await journal.append(lease, [{ type: 'start', runId: journalId, from: 'AGENT', payload: { messageId: HOSTILE } }] as ChunkType[]);
    const agent = new Agent({ id: 'hostile-agent', name: HOSTILE, model: scriptedModel({ rules: [], fallback: { text: HOSTILE } }) });
    const server = await inspect(agent, { port: 0, journal, suggestions: [HOSTILE] });
    const page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await page.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort());
      await page.goto(`${server.url}#run=${encodeURIComponent(HOSTILE)}`);
      await page.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
      // a run with hostile text in every field the page shows
      const time = performance.now();
      const chunks = [
        chunkOf('start', { messageId: HOSTILE }),
        chunkOf('step-start', { stepNumber: 0 }),
        chunkOf('text-start', { id: HOSTILE }),
        chunkOf('text-delta', { id: HOSTILE, text: HOSTILE }),
        chunkOf('tool-call', { toolCallId: HOSTILE, toolName: HOSTILE, args: { [HOSTILE]: HOSTILE } }),
        chunkOf('tool-result', { toolCallId: HOSTILE, toolName: HOSTILE, result: { [HOSTILE]: HOSTILE } }),
        dataChunk(`data-${HOSTILE}`, { [HOSTILE]: HOSTILE }),
        chunkOf('step-finish', { stepNumber: 0, stepResult: { reason: HOSTILE }, output: { text: HOSTILE } }),
        chunkOf('tripwire', { processorId: HOSTILE, reason: HOSTILE }),
      ];
      await lastValueFrom(
        server.inspector.trace(
          ({ tracingContext }) =>
            concat(
              new Observable<never>((subscriber) => {
                tracingContext.onHook?.({ processorId: HOSTILE, hook: 'processInput', outcome: 'pass', startTime: time, endTime: time + 1, input: { messages: [HOSTILE] }, output: [HOSTILE] });
                tracingContext.onJudge?.({ processorId: HOSTILE, provider: HOSTILE, modelId: HOSTILE, outcome: 'error', startTime: time, endTime: time + 1, input: { system: HOSTILE, prompt: HOSTILE }, output: new Error(HOSTILE) });
                tracingContext.onHook?.({ processorId: HOSTILE, hook: 'processOutputStream', outcome: 'abort', startTime: time, endTime: time + 1, input: chunks[3], error: new Error(HOSTILE) });
                subscriber.complete();
              }),
              from(chunks),
            ),
          { agentId: HOSTILE, title: HOSTILE },
        ),
        { defaultValue: undefined },
      );
      await page.getByTestId('run-status').filter({ hasText: 'tripwire' }).waitFor({ timeout: 15_000 });
      await expect.poll(() => page.locator('#run-header h2').textContent()).toBe(HOSTILE);
      // every marble's details, the chat's view of the run, the export, the journal's run
      const marbles = page.locator('[data-testid="marble"]');
      const total = await marbles.count();
      expect(total).toBeGreaterThan(8);
      for (let index = 0; index < total; index++) await marbles.nth(index).dispatchEvent('click');
      await page.getByTestId('run-item').first().click();
      await page.getByTestId('export-marbles').click();
      await page.getByTestId('export-code').filter({ hasText: 'createChunkBuilders' }).waitFor({ timeout: 15_000 });
      await page.locator('#close-export').click();
      await page.getByTestId('journal-item').first().click();
      await page.getByTestId('journal-note').waitFor({ timeout: 15_000 });
      await page.getByTestId('chat-input').fill(HOSTILE);
      await page.getByTestId('chat-input').press('Enter');
      await expect.poll(() => page.getByTestId('send').isEnabled(), { timeout: 15_000 }).toBe(true);

      const state = await page.evaluate((hostile) => ({
        pwned: (window as unknown as { __pwned?: string }).__pwned,
        scripts: document.querySelectorAll('script').length,
        made: document.querySelectorAll('img, b, iframe, object, embed, svg').length,
        handlers: Array.from(document.querySelectorAll('*')).filter((node) => Array.from(node.attributes).some((attribute) => attribute.name.startsWith('on'))).length,
        chips: Array.from(document.querySelectorAll('#suggestions button')).map((chip) => chip.textContent),
        agent: document.getElementById('agent-name')?.textContent,
        shown: document.body.textContent?.includes(hostile),
      }), HOSTILE);
      expect(state).toEqual({ pwned: undefined, scripts: 1, made: 0, handlers: 0, chips: [HOSTILE], agent: HOSTILE, shown: true });
      expect(dialogs).toEqual([]);
    } finally {
      await page.close();
      await server.close();
    }
  }, 90_000);

  it('catches up after the feed drops mid-run: the reconnected page reloads what it missed', async () => {
    const server = await inspect(quietAgent(), { port: 0 });
    const proxy = await startTcpProxy(server.url);
    const page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
    try {
      await page.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort());
      await page.goto(proxy.connectionString);
      await page.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
      const size = 120;
      const run = lastValueFrom(
        server.inspector.trace(() => concat(of(chunkOf('start')), interval(25).pipe(take(size), map((index) => chunkOf('text-delta', { id: 't0', text: `word ${index}` }))), of(chunkOf('finish', {}))), {
          title: 'dropped feed',
        }),
      );
      await page.getByTestId('run-status').filter({ hasText: 'running' }).waitFor({ timeout: 15_000 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      proxy.cut(); // the feed (and anything else in flight) is reset mid-run
      await run;
      await page.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
      const output = page.locator('[data-testid="marble"][data-lane="output"]');
      await expect.poll(() => output.count(), { timeout: 15_000 }).toBe(size + 2);
      await page.getByTestId('run-status').filter({ hasText: 'finish' }).waitFor({ timeout: 15_000 });
    } finally {
      await page.close();
      await proxy.close();
      await server.close();
    }
  }, 90_000);
});
