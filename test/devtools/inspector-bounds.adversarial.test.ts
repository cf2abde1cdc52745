/**
 * The inspector's memory against whoever wants it to grow: runs that never end (an app's, or a
 * hostile client's chats), one run with huge chunks, a long run past its caps (what is copied of
 * what is not kept), and hostile values and ids — payloads whose getters throw, huge Maps, 1 MB
 * strings and labels, terminal chunks that cannot be read, journaled runs with ids such as
 * `__proto__`, 20,000 characters or non-ASCII text.
 *
 * Sizes are asserted on what is kept and served (the record's JSON), never on timings.
 */
import { existsSync } from 'node:fs';
import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { chromium } from 'playwright-core';
import { from, lastValueFrom, Observable, of, toArray, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, type ChunkType } from 'rxagent';
import { inspect, Inspector, InspectorError, type InspectorEvent, type InspectorServer } from 'rxagent/devtools';
import { InMemoryRunJournal } from 'rxagent/durable';
import { scriptedModel } from 'rxagent/testing';
import { toPayload } from '../../src/devtools/internal/payload.js';
import { PROPERTY_RUNS, seedFor } from '../reliability/support/property.js';

const chunkOf = (type: string, payload: Record<string, unknown> = {}): ChunkType => ({ type, runId: 'run-bounds', from: 'AGENT', payload }) as unknown as ChunkType;

/** The thrown value of `action`. */
function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** A traced run that emits `start` and never ends (its subscription is kept in `open`). */
function neverEnding(inspector: Inspector, open: Subscription[], title: string): string {
  let runId = '';
  const run$ = inspector.trace(
    (context) => {
      runId = context.runId;
      return new Observable<ChunkType>((subscriber) => subscriber.next(chunkOf('start')));
    },
    { title },
  );
  open.push(run$.subscribe());
  return runId;
}

/** One GET with a Host the inspector answers to. */
function get(server: InspectorServer, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port: server.port, path }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (part: string) => (body += part));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

const open: Subscription[] = [];
afterEach(() => {
  for (const subscription of open.splice(0)) subscription.unsubscribe();
});

// ---- runs that never end ------------------------------------------------------------------------

describe('runs that never end', () => {
  it('keeps at most maxRuns runs, running or not, and says which it evicted (feed, errors)', () => {
    const inspector = new Inspector({ maxRuns: 3 });
    const feed: InspectorEvent[] = [];
    open.push(inspector.events().subscribe((event) => feed.push(event)));
    const ids = Array.from({ length: 10 }, (_, index) => neverEnding(inspector, open, `stuck ${index}`));
    expect(inspector.runs().map((run) => run.runId)).toEqual(ids.slice(-3));
    // not silently: the feed says which runs were evicted, and as what
    const evicted = feed.filter((event) => event.type === 'run-evicted');
    expect(evicted.map((event) => event.runId)).toEqual(ids.slice(0, 7));
    expect(evicted[0]).toMatchObject({ type: 'run-evicted', status: 'running', reason: 'max-runs' });
    // and asking for one says it was evicted (still an unknown-run: it is not kept)
    const error = thrownBy(() => inspector.run(ids[0]!));
    expect(InspectorError.isInstance(error) && error.reason).toBe('unknown-run');
    expect((error as Error).message).toMatch(/evicted/);
    expect((error as Error).message).toMatch(/running/);
  });

  it('stops recording a run it evicted (nothing more is kept or sent for it), and the run still gets every chunk', async () => {
    const inspector = new Inspector({ maxRuns: 1 });
    const feed: InspectorEvent[] = [];
    open.push(inspector.events().subscribe((event) => feed.push(event)));
    let emit: ((chunk: ChunkType) => void) | undefined;
    const seen: ChunkType[] = [];
    let firstId = '';
    const first$ = inspector.trace(({ runId }) => {
      firstId = runId;
      return new Observable<ChunkType>((subscriber) => {
        emit = (chunk) => subscriber.next(chunk);
      });
    });
    open.push(first$.subscribe((chunk) => seen.push(chunk)));
    neverEnding(inspector, open, 'newer'); // evicts the first
    const before = feed.length;
    for (let index = 0; index < 100; index++) emit!(chunkOf('text-delta', { id: 't0', text: `word ${index}` }));
    expect(seen).toHaveLength(100);
    expect(feed.slice(before).filter((event) => event.runId === firstId)).toEqual([]);
    expect(inspector.runs()).toHaveLength(1);
  });

  it('evicts the oldest ended run first, and a running one only when no ended run is left', async () => {
    const inspector = new Inspector({ maxRuns: 2 });
    const running = neverEnding(inspector, open, 'running');
    await lastValueFrom(inspector.trace(() => of(chunkOf('start'), chunkOf('finish'))));
    await lastValueFrom(inspector.trace(() => of(chunkOf('start'), chunkOf('finish'))));
    const kept = inspector.runs();
    expect(kept.map((run) => run.runId)[0]).toBe(running);
    expect(kept.map((run) => run.status)).toEqual(['running', 'finish']);
  });

  it('over any order of runs starting and ending, keeps the maxRuns a model of the rule keeps, and says so once for every other (property)', () => {
    const step = fc.oneof(fc.constant({ kind: 'start' as const }), fc.record({ kind: fc.constant('end' as const), which: fc.nat(40) }));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(step, { maxLength: 40 }), (maxRuns, steps) => {
        const inspector = new Inspector({ maxRuns });
        const evicted: string[] = [];
        const subscriptions: Subscription[] = [inspector.events().subscribe((event) => event.type === 'run-evicted' && evicted.push(event.runId))];
        const started: Array<{ runId: string; finish: () => void }> = [];
        // the rule, as a model: past maxRuns, the oldest ended run goes, else the oldest running one
        let model: Array<{ runId: string; ended: boolean }> = [];
        try {
          for (const action of steps) {
            if (action.kind === 'start') {
              let finish = (): void => undefined;
              let runId = '';
              subscriptions.push(
                inspector
                  .trace((context) => {
                    runId = context.runId;
                    return new Observable<ChunkType>((subscriber) => {
                      finish = () => subscriber.next(chunkOf('finish'));
                    });
                  })
                  .subscribe(),
              );
              started.push({ runId, finish: () => finish() });
              model.push({ runId, ended: false });
              while (model.length > maxRuns) {
                const candidates = model.slice(0, -1);
                const gone = candidates.find((run) => run.ended) ?? candidates[0]!;
                model = model.filter((run) => run !== gone);
              }
            } else if (started.length > 0) {
              const run = started[action.which % started.length]!;
              run.finish();
              const kept = model.find((candidate) => candidate.runId === run.runId);
              if (kept !== undefined) kept.ended = true;
            }
            expect(inspector.runs().map((run) => [run.runId, run.status !== 'running'])).toEqual(model.map((run) => [run.runId, run.ended]));
          }
          const kept = new Set(model.map((run) => run.runId));
          expect(evicted.length).toBe(new Set(evicted).size);
          expect(new Set(evicted)).toEqual(new Set(started.map((run) => run.runId).filter((runId) => !kept.has(runId))));
        } finally {
          for (const subscription of subscriptions) subscription.unsubscribe();
        }
      }),
      { numRuns: Math.min(PROPERTY_RUNS, 300), seed: seedFor('inspector eviction rule') },
    );
  });

  it('bounds a server a client floods with chats that never end: the 404 of an evicted run says so', async () => {
    const agent = new Agent({ id: 'slow', model: scriptedModel({ rules: [], fallback: { text: 'never done' }, wordDelayMs: 60_000 }) });
    const server = await inspect(agent, { port: 0, maxRuns: 2 });
    const requests: Array<ReturnType<typeof httpRequest>> = [];
    try {
      for (let index = 0; index < 6; index++) {
        const body = JSON.stringify({ messages: [{ id: `u${index}`, role: 'user', parts: [{ type: 'text', text: `flood ${index}` }] }] });
        const request = httpRequest({ host: '127.0.0.1', port: server.port, path: '/api/chat', method: 'POST', headers: { 'content-type': 'application/json' } });
        request.on('error', () => undefined);
        request.end(body);
        requests.push(request);
      }
      await expect.poll(() => server.inspector.runs().map((run) => run.title).at(-1), { timeout: 10_000 }).toBe('flood 5');
      expect(server.inspector.runs()).toHaveLength(2);
      expect(server.inspector.runs().every((run) => run.status === 'running')).toBe(true);
      const evictedId = server.inspector.runs()[0]!.runId.replace(/\d+$/, '1');
      const response = await get(server, `/api/runs/${encodeURIComponent(evictedId)}`);
      expect(response.status).toBe(404);
      expect(JSON.parse(response.body)).toMatchObject({ error: 'unknown-run', message: expect.stringMatching(/evicted/) });
    } finally {
      for (const request of requests) request.destroy();
      await server.close();
    }
  });
});

// ---- a byte budget per run ----------------------------------------------------------------------

describe('a byte budget per run', () => {
  it('keeps a run of 10,000 chunks of 100 KB within maxBytesPerRun: the rest is counted, not kept, and the run is truncated', async () => {
    const inspector = new Inspector({ maxBytesPerRun: 2_000_000 });
    const text = 'x'.repeat(100_000);
    const chunks = [chunkOf('start'), ...Array.from({ length: 10_000 }, (_, index) => chunkOf('text-delta', { id: 't0', text: `${index}${text}` })), chunkOf('finish')];
    const seen = await lastValueFrom(inspector.trace(() => from(chunks)).pipe(toArray()));
    expect(seen).toHaveLength(chunks.length);
    const [summary] = inspector.runs();
    expect(summary).toMatchObject({ status: 'finish', chunkCount: chunks.length, truncated: true });
    const record = inspector.run(summary!.runId);
    expect(JSON.stringify(record).length).toBeLessThan(2_500_000);
    const end = record.events.at(-1);
    expect(end).toMatchObject({ type: 'run-end', status: 'finish' });
    expect((end as { droppedEvents: number }).droppedEvents).toBeGreaterThan(9_000);
    // the kept chunks are within the budget too: the export is refused, naming the budget
    const refused = thrownBy(() => inspector.exportMarbles(summary!.runId));
    expect(InspectorError.isInstance(refused) && refused.reason).toBe('run-truncated');
    expect((refused as Error).message).toContain('maxBytesPerRun');
  });

  it('counts what a kept chunk holds, not only its cut copy: fifty 1 MB strings are past a 10 MB budget', async () => {
    const inspector = new Inspector({ maxBytesPerRun: 10_000_000 });
    const megabyte = 'y'.repeat(1_000_000);
    const chunks = [chunkOf('start'), ...Array.from({ length: 50 }, () => chunkOf('text-delta', { id: 't0', text: megabyte })), chunkOf('finish')];
    await lastValueFrom(inspector.trace(() => from(chunks)));
    const [summary] = inspector.runs();
    expect(summary!.truncated).toBe(true);
    const refused = thrownBy(() => inspector.exportMarbles(summary!.runId));
    expect(InspectorError.isInstance(refused) && refused.reason).toBe('run-truncated');
  });

  it('counts labels a package hands over (1 MB processor ids) and the run id each event carries', () => {
    const inspector = new Inspector({ maxBytesPerRun: 1_000_000 });
    const huge = 'p'.repeat(1_000_000);
    const run$ = inspector.trace(
      ({ tracingContext }) =>
        new Observable<ChunkType>((subscriber) => {
          const time = performance.now();
          for (let index = 0; index < 200; index++) tracingContext.onHook?.({ processorId: huge, hook: 'processInput', outcome: 'pass', startTime: time, endTime: time });
          subscriber.next(chunkOf('finish'));
          subscriber.complete();
        }),
    );
    run$.subscribe();
    const [summary] = inspector.runs();
    expect(summary!.truncated).toBe(true);
    expect(JSON.stringify(inspector.run(summary!.runId)).length).toBeLessThan(1_500_000);
  });

  it('documents its default and refuses a budget that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '10' as unknown as number]) {
      const error = thrownBy(() => new Inspector({ maxBytesPerRun: bad }));
      expect(InspectorError.isInstance(error) && error.reason).toBe('invalid-option');
      expect((error as Error).message).toContain('maxBytesPerRun');
    }
  });
});

// ---- what is copied of what is not kept ---------------------------------------------------------

describe('past the caps, nothing is copied', () => {
  it('reads no payload of a chunk or a hook report past maxEventsPerRun and maxChunksPerRun', async () => {
    const inspector = new Inspector({ maxEventsPerRun: 10, maxChunksPerRun: 10 });
    let reads = 0;
    const counted = (index: number): ChunkType =>
      ({
        type: 'text-delta',
        runId: 'run-bounds',
        from: 'AGENT',
        get payload() {
          reads += 1;
          return { id: 't0', text: `word ${index}` };
        },
      }) as unknown as ChunkType;
    const run$ = inspector.trace(
      ({ tracingContext }) =>
        new Observable<ChunkType>((subscriber) => {
          for (let index = 0; index < 1_000; index++) {
            const chunk = counted(index);
            const time = performance.now();
            tracingContext.onHook?.({ processorId: 'pass', hook: 'processOutputStream', outcome: 'pass', startTime: time, endTime: time, input: chunk, output: chunk });
            subscriber.next(chunk);
          }
          subscriber.next(chunkOf('finish'));
          subscriber.complete();
        }),
    );
    const chunks = await lastValueFrom(run$.pipe(toArray()));
    expect(chunks).toHaveLength(1_001);
    // the kept events read their payloads a few times each; the chunks and reports past the caps, never (4,000 reads before)
    expect(reads).toBeLessThan(100);
    expect(inspector.runs()[0]).toMatchObject({ status: 'finish', truncated: true });
  });
});

// ---- hostile values and ids ---------------------------------------------------------------------

describe('hostile values and ids', () => {
  it('ends a run as finished when its terminal chunk cannot be read', async () => {
    const inspector = new Inspector();
    const finish = Object.defineProperty({ type: 'finish', runId: 'run-bounds', from: 'AGENT' }, 'payload', {
      enumerable: true,
      get: () => {
        throw new Error('no payload for you');
      },
    }) as unknown as ChunkType;
    const seen = await lastValueFrom(inspector.trace(() => of(chunkOf('start'), finish)).pipe(toArray()));
    expect(seen[1]).toBe(finish);
    const [summary] = inspector.runs();
    expect(summary!.status).toBe('finish');
    const events = inspector.run(summary!.runId).events;
    expect(events.find((event) => event.type === 'chunk' && event.chunkType === 'finish')).toMatchObject({ chunk: { payload: expect.stringContaining('[unreadable') } });
  });

  it('serves the record of a run whose chunks and reports carry values JSON cannot write (a BigInt type, step, outcome)', async () => {
    const inspector = new Inspector();
    const chunks = [
      chunkOf('start'),
      { type: 10n, runId: 'run-bounds', from: 'AGENT', payload: {} } as unknown as ChunkType,
      chunkOf('step-start', { stepNumber: 5n }),
      { type: { toString: () => 'data-odd' }, runId: 'run-bounds', from: 'AGENT', payload: {} } as unknown as ChunkType,
      chunkOf('finish'),
    ];
    const run$ = inspector.trace(
      ({ tracingContext }) =>
        new Observable<ChunkType>((subscriber) => {
          const time = performance.now();
          tracingContext.onJudge?.({ processorId: 'judge', provider: 'p', modelId: 'm', outcome: 10n as never, startTime: time, endTime: time });
          tracingContext.onHook?.({ processorId: 'p', hook: 'processInput', outcome: Symbol('odd') as never, startTime: time, endTime: time });
          for (const chunk of chunks) subscriber.next(chunk);
          subscriber.complete();
        }),
    );
    expect(await lastValueFrom(run$.pipe(toArray()))).toHaveLength(chunks.length);
    const [summary] = inspector.runs();
    const record = inspector.run(summary!.runId);
    const served = JSON.parse(JSON.stringify(record)) as typeof record;
    expect(served.status).toBe('finish');
    expect(served.events.filter((event) => event.type === 'chunk').map((event) => event.chunkType)).toEqual(['start', '10', 'step-start', 'data-odd', 'finish']);
    expect(served.events.find((event) => event.type === 'judge')).toMatchObject({ outcome: 'error' });
    expect(served.events.find((event) => event.type === 'hook')).toMatchObject({ outcome: 'Symbol(odd)' });
  });

  it('copies a Map or Set of a million entries without walking all of it', () => {
    let walked = 0;
    class Walked<K, V> extends Map<K, V> {
      override *entries(): MapIterator<[K, V]> {
        for (const entry of super.entries()) {
          walked += 1;
          yield entry;
        }
      }
      override [Symbol.iterator](): MapIterator<[K, V]> {
        return this.entries();
      }
    }
    const big = new Walked<number, number>();
    for (let index = 0; index < 1_000_000; index++) big.set(index, index);
    const copy = toPayload({ big }) as { big: { entries: unknown[] } };
    expect(copy.big.entries.length).toBeLessThanOrEqual(201);
    expect(walked).toBeLessThan(1_000);
    const set = new Set(Array.from({ length: 1_000 }, (_, index) => index));
    expect((toPayload(set) as { values: unknown[] }).values.at(-1)).toMatch(/more/);
  });

  it('opens journaled runs with hostile ids: __proto__, constructor, non-ASCII, bidi', async () => {
    const journal = new InMemoryRunJournal();
    const ids = ['__proto__', 'constructor', 'hasOwnProperty', 'héllo-\u{1F600}-мир', '\u202Eevil', 'a/b?c#d'];
    for (const runId of ids) {
      await journal.createRun({ runId, agentId: 'support', input: null });
      const { lease } = await journal.claim(runId, 'instance-a');
      await journal.append(lease, [{ type: 'start', runId, from: 'AGENT', payload: {} }, { type: 'finish', runId, from: 'AGENT', payload: {} }] as unknown as ChunkType[], {
        kind: 'final',
        step: 0,
        attempt: 0,
        state: null,
      });
    }
    const server = await inspect(new Agent({ id: 'quiet', model: scriptedModel({ rules: [], fallback: { text: 'hi' } }) }), { port: 0, journal });
    try {
      for (const runId of ids) {
        const opened = await get(server, `/api/journal/runs/${encodeURIComponent(runId)}`);
        expect(opened.status, runId).toBe(200);
        expect(JSON.parse(opened.body)).toMatchObject({ runId, status: 'finish', source: 'journal' });
        const served = await get(server, `/api/runs/${encodeURIComponent(runId)}`);
        expect(JSON.parse(served.body)).toMatchObject({ runId });
        const marbles = await get(server, `/api/runs/${encodeURIComponent(runId)}/marbles`);
        expect(marbles.status, runId).toBe(200);
      }
      expect(server.inspector.runs().map((run) => run.runId)).toEqual(ids);
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'status')).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("keeps a journaled run with a 20,000-character id (an app's own journal) within the budget, and cuts the id in its title and errors", async () => {
    // the built-in journals refuse ids past 256 characters; an app's own journal may not
    const runId = `run-${'z'.repeat(20_000)}`;
    const entries = [chunkOf('start'), ...Array.from({ length: 2_000 }, () => chunkOf('text-delta', { id: 't0', text: 'x' }))].map((chunk, index) => ({ seq: index + 1, epoch: 1, chunk: { ...chunk, runId } as ChunkType }));
    const journal = {
      getRun: async (id: string) =>
        id === runId ? { runId, agentId: 'support', status: 'running', epoch: 1, lastSeq: entries.length, createdAt: new Date(0), updatedAt: new Date(0) } : null,
      read$: () => from(entries),
    };
    const inspector = new Inspector({ maxBytesPerRun: 1_000_000 });
    const record = await inspector.openJournalRun(journal as never, runId);
    expect(record.title.length).toBeLessThanOrEqual(220);
    expect(record.truncated).toBe(true);
    expect(JSON.stringify(inspector.run(runId)).length).toBeLessThan(1_500_000);
    const unknown = thrownBy(() => inspector.run(`${runId}-other`));
    expect(InspectorError.isInstance(unknown) && unknown.reason).toBe('unknown-run');
    expect((unknown as Error).message.length).toBeLessThan(1_000);
  });

  it("serves a run from an app's own journal that hands over BigInt seqs and epochs", async () => {
    const entries = [chunkOf('start'), chunkOf('finish')].map((chunk, index) => ({ seq: BigInt(index + 1), epoch: index === 0 ? 1n : 2n, chunk }));
    const journal = {
      getRun: async () => ({ runId: 'big', agentId: 'support', status: 'completed', epoch: 2n, lastSeq: 2n, terminal: 'finish', createdAt: new Date(0), updatedAt: new Date(1) }),
      read$: () => from(entries),
    };
    const inspector = new Inspector();
    const record = await inspector.openJournalRun(journal as never, 'big');
    const served = JSON.parse(JSON.stringify(inspector.run('big'))) as typeof record;
    expect(served).toMatchObject({ status: 'finish', journal: { epoch: 2, lastSeq: 2 } });
    expect(served.events.find((event) => event.type === 'takeover')).toMatchObject({ epoch: 2, previousEpoch: 1 });
  });

  it('a journaled run opened with the id of a running live run replaces it: the live one is evicted, not mixed in', async () => {
    const inspector = new Inspector();
    const feed: InspectorEvent[] = [];
    open.push(inspector.events().subscribe((event) => feed.push(event)));
    let emit: ((chunk: ChunkType) => void) | undefined;
    let liveId = '';
    open.push(
      inspector
        .trace(({ runId }) => {
          liveId = runId;
          return new Observable<ChunkType>((subscriber) => {
            emit = (chunk) => subscriber.next(chunk);
          });
        })
        .subscribe(),
    );
    const journal = new InMemoryRunJournal();
    await journal.createRun({ runId: liveId, agentId: 'support', input: null });
    const { lease } = await journal.claim(liveId, 'instance-a');
    await journal.append(lease, [{ type: 'start', runId: liveId, from: 'AGENT', payload: {} }] as unknown as ChunkType[]);
    await inspector.openJournalRun(journal, liveId);
    expect(feed.filter((event) => event.type === 'run-evicted')).toMatchObject([{ runId: liveId, reason: 'replaced' }]);
    const before = feed.length;
    emit!(chunkOf('text-delta', { id: 't0', text: 'late' }));
    expect(feed.length).toBe(before);
    expect(inspector.run(liveId)).toMatchObject({ source: 'journal' });
    expect(inspector.run(liveId).events.some((event) => event.type === 'chunk' && event.label === 'late')).toBe(false);
  });
});

// ---- the page -----------------------------------------------------------------------------------

const chromiumPath = process.env.RXAGENT_CHROMIUM ?? '/usr/bin/chromium';

describe.skipIf(!existsSync(chromiumPath))('the page in Chromium', () => {
  it('says which runs were evicted, keeps what it had of them, and offers no export for them', async () => {
    const server = await inspect(new Agent({ id: 'quiet', model: scriptedModel({ rules: [], fallback: { text: 'hi' } }) }), { port: 0, maxRuns: 2 });
    const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    const page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
    try {
      await page.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort());
      await page.goto(server.url);
      await page.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
      const first = neverEnding(server.inspector, open, 'the first, never ending');
      await page.locator(`[data-testid="run-item"][data-run-id="${first}"]`).waitFor({ timeout: 15_000 });
      neverEnding(server.inspector, open, 'the second');
      neverEnding(server.inspector, open, 'the third'); // evicts the first
      const evicted = page.locator(`[data-testid="run-item"][data-run-id="${first}"]`);
      await expect.poll(() => evicted.getAttribute('data-evicted'), { timeout: 15_000 }).toBe('max-runs');
      await evicted.click();
      await expect.poll(() => page.locator('#run-header .run-meta').textContent(), { timeout: 15_000 }).toContain('evicted');
      expect(await page.getByTestId('export-marbles').isDisabled()).toBe(true);
      // a page that connects later lists the kept runs only
      const later = await browser.newPage();
      await later.goto(server.url);
      await later.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
      await expect.poll(() => later.getByTestId('run-item').count(), { timeout: 15_000 }).toBe(2);
      await later.close();
    } finally {
      await page.close();
      await browser.close();
      await server.close();
    }
  }, 90_000);
});
