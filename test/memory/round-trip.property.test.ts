/**
 * Memory by construction (docs/security.md, the memory row), on the in-memory store, a libSQL file
 * and PostgreSQL:
 *
 * - Generated histories — every part type the `MessageList` stores (text, reasoning with its
 *   details, tool calls and results and errors, files, sources, step starts, `data-*` parts),
 *   provider metadata, message metadata, unicode edge cases (astral, combining marks, bidi
 *   controls, NUL, lone surrogates), large texts — saved and loaded come back exactly: ids,
 *   order, roles, dates, and content as the JSON text it was saved as (key order included).
 * - Tenants: threads of generated resources whose ids look alike (prefixes, case, trailing space,
 *   NFC/NFD, zero-width, SQL and LIKE metacharacters `%` `_` `\`, quotes) each load their own
 *   messages only; a thread read as another resource is a `ThreadOwnershipError`; a resource lists
 *   its own threads only; an id with NUL is an `InvalidIdError` on every store alike.
 *
 * PostgreSQL is `DATABASE_URL`'s server (a schema of this file's own). Case counts are fixed per
 * property (each well under 10 s on a loaded 2-core machine).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MastraDBMessage, MastraMessagePart } from '../../src/message-list/types.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { LibSQLStorage } from '../../src/storage/libsql/libsql-storage.js';
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import type { MemoryStorage } from '../../src/storage/types.js';
import { InvalidIdError } from '../../src/storage/errors/invalid-id-error.js';
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';
import { ThreadOwnershipError } from '../../src/storage/errors/thread-ownership-error.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { checkProperty } from '../reliability/support/property.js';

const directory = mkdtempSync(join(tmpdir(), 'rxagent-round-trip-'));
const schema = `rxagent_round_trip_${randomUUID().slice(0, 8)}`;
let server: TestPostgres | undefined;
const stores: Array<[string, MemoryStorage]> = [];
/** Stores whose clock (`now`) a test sets: `clock.time` is what it returns. */
const clock = { time: 0 };
const clockedSchema = `${schema}_clocked`;
const clockedStores: Array<[string, MemoryStorage]> = [];

beforeAll(async () => {
  server = await startTestPostgres();
  stores.push(
    ['in memory', new InMemoryStorage()],
    ['libSQL file', new LibSQLStorage({ url: `file:${join(directory, 'memory.db')}` })],
    ['PostgreSQL', new PostgresStorage({ connectionString: server.connectionString, schema })],
  );
  const now = (): Date => new Date(clock.time);
  clockedStores.push(
    ['in memory', new InMemoryStorage({ now })],
    ['libSQL file', new LibSQLStorage({ url: `file:${join(directory, 'clocked.db')}`, now })],
    ['PostgreSQL', new PostgresStorage({ connectionString: server.connectionString, schema: clockedSchema, now })],
  );
});

afterAll(async () => {
  await Promise.all([...stores, ...clockedStores].map(([, storage]) => storage.close()));
  rmSync(directory, { recursive: true, force: true });
  if (server === undefined) return;
  if (!server.started) {
    const pool = new pg.Pool({ connectionString: server.connectionString });
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.query(`DROP SCHEMA IF EXISTS "${clockedSchema}" CASCADE`);
    await pool.end();
  }
  await server.stop();
});

/** Each case's ids are its own (one database across cases). */
let caseNumber = 0;

// ---------------------------------------------------------------------------------------------
// Histories
// ---------------------------------------------------------------------------------------------

/** Text with what breaks stores and encoders: astral, combining marks, bidi controls, NUL, lone surrogates, JSON and SQL syntax. */
const EDGE_TEXTS = ['', '\u0000', 'a\u0000b', '\ud800', 'x\udc00y', '\u{1F600}', 'e\u0301', '\u00e9', '\u202eevil\u202c', '\u200b', '\ufeff', '\r\n', '\\', '"', "'", '%', '_', '\\u0000', '</script>', '{"a":1}', 'NULL'];
const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40, unit: 'grapheme' }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20, unit: 'binary' }) },
  { weight: 2, arbitrary: fc.constantFrom(...EDGE_TEXTS) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...EDGE_TEXTS), { maxLength: 6 }).map((pieces) => pieces.join('')) },
  { weight: 1, arbitrary: fc.constantFrom(100_000, 300_000).map((length) => 'long \u{1F600} text '.repeat(Math.ceil(length / 16)).slice(0, length)) },
);
const json = fc.jsonValue({ maxDepth: 3 });
const metadata = fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'toString', '')), json, { maxKeys: 3 });
const providerMetadata = fc.dictionary(fc.constantFrom('openai', 'anthropic', 'mock'), fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 2 }), { maxKeys: 2 });
/** 4714-11-24 BC, 00:00 UTC: the earliest `timestamptz` of PostgreSQL. */
const EARLIEST_CREATED_AT_MS = -210_866_803_200_000;
const createdAt = fc.integer({ min: 0, max: 4_102_444_800_000 });

const base = { providerMetadata, createdAt };
const part: fc.Arbitrary<MastraMessagePart> = fc.oneof(
  fc.record({ type: fc.constant('text' as const), text, ...base }, { requiredKeys: ['type', 'text'] }),
  fc.record(
    {
      type: fc.constant('reasoning' as const),
      reasoning: text,
      details: fc.array(fc.oneof(fc.record({ type: fc.constant('text' as const), text, signature: fc.string({ maxLength: 8 }) }, { requiredKeys: ['type', 'text'] }), fc.record({ type: fc.constant('redacted' as const), data: fc.base64String({ maxLength: 12 }) })), { maxLength: 2 }),
      ...base,
    },
    { requiredKeys: ['type', 'reasoning', 'details'] },
  ),
  fc.record(
    {
      type: fc.constant('tool-invocation' as const),
      toolInvocation: fc.record(
        {
          state: fc.constantFrom('partial-call' as const, 'call' as const, 'result' as const, 'output-error' as const),
          toolCallId: fc.string({ minLength: 1, maxLength: 10 }),
          toolName: fc.string({ minLength: 1, maxLength: 10 }),
          args: json,
          result: json,
          isError: fc.boolean(),
          errorText: text,
          modelOutput: json.map((value) => ({ type: 'json' as const, value })),
        },
        { requiredKeys: ['state', 'toolCallId', 'toolName', 'args'] },
      ),
      providerExecuted: fc.boolean(),
      title: text,
      dynamic: fc.boolean(),
      ...base,
    },
    { requiredKeys: ['type', 'toolInvocation'] },
  ) as fc.Arbitrary<MastraMessagePart>,
  fc.record(
    { type: fc.constant('file' as const), mimeType: fc.constantFrom('image/png', 'text/plain', 'application/pdf'), data: fc.oneof(fc.base64String({ maxLength: 40 }), fc.constant('https://example.com/a.png')), filename: text, providerReference: fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 8 }), { maxKeys: 2 }), ...base },
    { requiredKeys: ['type', 'mimeType', 'data'] },
  ),
  fc.record(
    {
      type: fc.constant('source' as const),
      source: fc.record({ sourceType: fc.constantFrom('url' as const, 'document' as const), id: fc.string({ maxLength: 8 }), url: fc.webUrl(), title: text, mediaType: fc.constant('text/html'), filename: text }, { requiredKeys: ['sourceType', 'id'] }),
      ...base,
    },
    { requiredKeys: ['type', 'source'] },
  ),
  fc.record({ type: fc.constant('step-start' as const), model: fc.string({ maxLength: 8 }), createdAt }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constantFrom('data-weather', 'data-x', 'data-%_\\'), data: json, id: fc.string({ maxLength: 8 }), createdAt }, { requiredKeys: ['type', 'data'] }) as fc.Arbitrary<MastraMessagePart>,
);

/** A message without its id (given by the history). */
const message = fc.record(
  {
    role: fc.constantFrom('user' as const, 'assistant' as const, 'system' as const, 'tool' as const),
    // years 1 to 9999, and the edges: of a Date, and of what PostgreSQL holds
    createdAt: fc
      .oneof({ weight: 9, arbitrary: fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }) }, { weight: 1, arbitrary: fc.constantFrom(-8.64e15, 8.64e15, EARLIEST_CREATED_AT_MS - 1, EARLIEST_CREATED_AT_MS) })
      .map((time) => new Date(time)),
    type: fc.constantFrom('v2', 'text', 'tool-call'),
    content: fc.record({ format: fc.constant(2 as const), parts: fc.array(part, { maxLength: 4 }), content: text, metadata, providerMetadata }, { requiredKeys: ['format', 'parts'] }),
  },
  { requiredKeys: ['role', 'createdAt', 'content'] },
);

/** Message ids that look alike, or like SQL. */
const ID_PIECES = ['m', 'M', 'm ', 'm1', 'm10', '%', '_', '\\', "'", '"', '\u00e9', 'e\u0301', '\u200b', '\u{1F600}', '--', ';'];
const messageId = fc.array(fc.constantFrom(...ID_PIECES), { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join(''));

const history = fc.uniqueArray(fc.tuple(messageId, message), { minLength: 1, maxLength: 6, selector: ([id]) => id });

/** What a store gives back for `saved` in `threadId` of `resourceId`: the thread and resource set, content in its JSON form. */
function expectedOf(saved: MastraDBMessage, threadId: string, resourceId: string): MastraDBMessage {
  return {
    id: saved.id,
    role: saved.role,
    createdAt: saved.createdAt,
    threadId,
    resourceId,
    ...(saved.type === undefined ? {} : { type: saved.type }),
    content: JSON.parse(JSON.stringify(saved.content)) as MastraDBMessage['content'],
  };
}

describe('memory: a saved history loads back exactly', () => {
  it('generated histories of every part type, on the in-memory store, a libSQL file and PostgreSQL', async () => {
    await checkProperty(
      'memory: histories round-trip on every store',
      fc.tuple(history, fc.integer({ min: 1, max: 3 })),
      async ([generated, batches]) => {
        const number = ++caseNumber;
        const threadId = `round-trip-${number}`;
        const resourceId = `tenant-${number}`;
        const messages: MastraDBMessage[] = generated.map(([id, fields]) => ({ id: `${number}:${id}`, ...fields }) as MastraDBMessage);
        const tooEarly = messages.findIndex((saved) => saved.createdAt.getTime() < EARLIEST_CREATED_AT_MS);
        for (const [name, storage] of stores) {
          if (tooEarly >= 0) {
            // a date PostgreSQL cannot hold: refused on every store alike, nothing stored (PostgreSQL failed alone, with a StorageError)
            const save = storage.saveMessages({ threadId, resourceId, messages, ensureThread: true, replaceable: [] });
            await expect(save, name).rejects.toSatisfy((error: unknown) => InvalidMessageError.isInstance(error) && error.issues.some((issue) => isDeepStrictEqual(issue.path, [tooEarly, 'createdAt'])));
            expect(await storage.getMessages({ threadId }), name).toStrictEqual([]);
            continue;
          }
          // saved in one or more batches (each one transaction), in order
          const size = Math.ceil(messages.length / batches);
          for (let start = 0; start < messages.length; start += size) {
            await storage.saveMessages({ threadId, resourceId, messages: messages.slice(start, start + size), ensureThread: true, replaceable: [] });
          }
          const loaded = await storage.getMessages({ threadId, resourceId });
          const expected = messages.map((saved) => expectedOf(saved, threadId, resourceId));
          expect(loaded.map((item) => item.id), name).toStrictEqual(expected.map((item) => item.id));
          expect(loaded, name).toStrictEqual(expected);
          // the content's JSON text, key order included
          expect(loaded.map((item) => JSON.stringify(item.content)), name).toStrictEqual(messages.map((saved) => JSON.stringify(saved.content)));
          // the newest n, oldest first
          const last = await storage.getMessages({ threadId, resourceId, last: 2 });
          expect(last.map((item) => item.id), name).toStrictEqual(expected.slice(-2).map((item) => item.id));
        }
      },
      100,
    );
  }, 120_000);

  it('the fault the property found (seed 941980549): a message dated at the earliest Date is refused on every store alike (PostgreSQL failed alone, with a StorageError, the others stored it)', async () => {
    const number = ++caseNumber;
    for (const [name, storage] of stores) {
      for (const time of [-8.64e15, EARLIEST_CREATED_AT_MS - 1]) {
        const threadId = `early-${number}-${time}`;
        const messages: MastraDBMessage[] = [
          { id: `${name}:early:${number}:${time}:0`, role: 'user', createdAt: new Date(0), content: { format: 2, parts: [] } },
          { id: `${name}:early:${number}:${time}:1`, role: 'user', createdAt: new Date(time), content: { format: 2, parts: [] } },
        ];
        await expect(storage.saveMessages({ threadId, resourceId: 'r', messages, ensureThread: true }), name).rejects.toSatisfy(
          (error: unknown) => InvalidMessageError.isInstance(error) && isDeepStrictEqual(error.issues.map((issue) => issue.path), [[1, 'createdAt']]),
        );
        expect(await storage.getMessages({ threadId }), name).toStrictEqual([]);
      }
      // the earliest date every store holds comes back as it was
      const threadId = `earliest-${number}`;
      await storage.saveMessages({ threadId, resourceId: 'r', messages: [{ id: `${name}:earliest:${number}`, role: 'user', createdAt: new Date(EARLIEST_CREATED_AT_MS), content: { format: 2, parts: [] } }], ensureThread: true });
      expect((await storage.getMessages({ threadId })).map((item) => item.createdAt.getTime()), name).toStrictEqual([EARLIEST_CREATED_AT_MS]);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Dates of threads and resources
// ---------------------------------------------------------------------------------------------

/** A date a caller or a clock may give: mostly in range, often at or past the edges, sometimes no valid `Date`. */
const anyDate = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: EARLIEST_CREATED_AT_MS, max: 8.64e15 }).map((time) => new Date(time)) },
  { weight: 3, arbitrary: fc.integer({ min: -8.64e15, max: EARLIEST_CREATED_AT_MS - 1 }).map((time) => new Date(time)) },
  { weight: 2, arbitrary: fc.constantFrom(-8.64e15, EARLIEST_CREATED_AT_MS - 1, EARLIEST_CREATED_AT_MS, 0, 8.64e15).map((time) => new Date(time)) },
  { weight: 1, arbitrary: fc.constant(new Date(Number.NaN)) },
);
const storable = (date: Date): boolean => date.getTime() >= EARLIEST_CREATED_AT_MS;
/** A refusal naming the date: a `RangeError` (a bad date, as `getMessages`' `after`/`before`). */
const refusedDate = (field: string) => (error: unknown): boolean => error instanceof RangeError && error.message.includes(field);

describe('memory: a date a store cannot hold is refused on every store alike, before anything is written', () => {
  it('createThread with generated createdAt / updatedAt (PostgreSQL failed alone with a StorageError 22008, the others stored it)', async () => {
    await checkProperty(
      'memory: thread dates are refused alike',
      fc.record({ createdAt: fc.option(anyDate, { nil: undefined }), updatedAt: fc.option(anyDate, { nil: undefined }) }),
      async ({ createdAt, updatedAt }) => {
        const number = ++caseNumber;
        const bad = [createdAt, updatedAt].find((date) => date !== undefined && !storable(date));
        for (const [name, storage] of stores) {
          const threadId = `dated-${number}`;
          const create = storage.createThread({ id: threadId, resourceId: 'r', ...(createdAt === undefined ? {} : { createdAt }), ...(updatedAt === undefined ? {} : { updatedAt }) });
          if (bad !== undefined) {
            await expect(create, name).rejects.toSatisfy(refusedDate(bad === createdAt ? 'createdAt' : 'updatedAt'));
            expect(await storage.getThread(threadId), name).toBeNull();
          } else {
            const thread = await create;
            if (createdAt !== undefined) expect(thread.createdAt.getTime(), name).toBe(createdAt.getTime());
            if (updatedAt !== undefined) expect(thread.updatedAt.getTime(), name).toBe(updatedAt.getTime());
            expect((await storage.getThread(threadId))?.updatedAt.getTime(), name).toBe(thread.updatedAt.getTime());
          }
        }
      },
      60,
    );
  }, 120_000);

  it("the store's clock: createThread, saveResource and saveMessages with ensureThread on a clock out of range (PostgreSQL failed alone, the others stored it)", async () => {
    await checkProperty(
      'memory: clock dates are refused alike',
      anyDate,
      async (now) => {
        const number = ++caseNumber;
        clock.time = now.getTime();
        for (const [name, storage] of clockedStores) {
          const threadId = `clocked-${number}`;
          const resourceId = `clocked-r-${number}`;
          const writes = [
            () => storage.createThread({ id: threadId, resourceId }),
            () => storage.saveResource({ id: resourceId, workingMemory: 'w' }),
            () => storage.saveMessages({ threadId: `${threadId}-m`, resourceId, messages: [{ id: `${name}:clocked:${number}`, role: 'user', createdAt: new Date(0), content: { format: 2, parts: [] } }], ensureThread: true }),
          ];
          for (const write of writes) {
            if (storable(now)) await write();
            else await expect(write(), name).rejects.toSatisfy(refusedDate('clock'));
          }
          const thread = await storage.getThread(threadId);
          const resource = await storage.getResource(resourceId);
          if (storable(now)) {
            expect([thread?.createdAt.getTime(), resource?.updatedAt.getTime()], name).toStrictEqual([clock.time, clock.time]);
          } else {
            expect([thread, resource, await storage.getThread(`${threadId}-m`), await storage.getMessages({ threadId: `${threadId}-m` })], name).toStrictEqual([null, null, null, []]);
          }
        }
      },
      40,
    );
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// Tenants
// ---------------------------------------------------------------------------------------------

/** Id pieces that look alike, prefix each other, or mean something to SQL's LIKE and quoting. */
const TENANT_PIECES = ['t', 'T', 't1', 't10', 't ', ' t', '%', '_', '\\', '\\%', "'", "''", '"', '\u00e9', 'e\u0301', '\u200b', '\u0130', 'i\u0307', '*', '?', '[a]', ';--'];
const tenantId = fc.array(fc.constantFrom(...TENANT_PIECES), { minLength: 1, maxLength: 3 }).map((pieces) => pieces.join(''));

/** Threads (id, owning resource) with look-alike ids: a thread id given twice keeps its first owner. */
const tenants = fc.uniqueArray(fc.tuple(tenantId, tenantId), { minLength: 2, maxLength: 6, selector: ([thread]) => thread });

describe('memory: a tenant loads its own messages only', () => {
  it('threads and resources with look-alike ids (prefixes, case, NFC/NFD, %, _, \\, quotes)', async () => {
    await checkProperty(
      'memory: look-alike thread and resource ids never share messages',
      tenants,
      async (generated) => {
        const number = ++caseNumber;
        const scoped = generated.map(([thread, resource]): [string, string] => [`${number}${thread}`, `${number}${resource}`]);
        const owner = new Map(scoped);
        const resources = [...new Set(scoped.map(([, resource]) => resource))];
        for (const [name, storage] of stores) {
          const saved = new Map<string, string[]>();
          for (const [index, [threadId, resourceId]] of scoped.entries()) {
            const id = `${name}:${number}:${index}`;
            await storage.saveMessages({ threadId, resourceId, messages: [{ id, role: 'user', createdAt: new Date(index), content: { format: 2, parts: [{ type: 'text', text: `${threadId} of ${resourceId}` }] } }], ensureThread: true });
            saved.set(threadId, [id]);
          }
          for (const [threadId] of scoped) {
            // without a resource: the thread's own messages
            expect((await storage.getMessages({ threadId })).map((item) => item.id), `${name}: ${threadId}`).toStrictEqual(saved.get(threadId));
            for (const resourceId of resources) {
              const read = storage.getMessages({ threadId, resourceId });
              if (owner.get(threadId) === resourceId) {
                const loaded = await read;
                expect(loaded.map((item) => item.id), `${name}: ${threadId} of ${resourceId}`).toStrictEqual(saved.get(threadId));
                expect(loaded.every((item) => item.threadId === threadId && item.resourceId === resourceId), name).toBe(true);
              } else {
                await expect(read, `${name}: ${threadId} read as ${resourceId}`).rejects.toSatisfy((error: unknown) => ThreadOwnershipError.isInstance(error));
              }
            }
          }
          for (const resourceId of resources) {
            const listed = (await storage.listThreads({ resourceId })).map((thread) => thread.id).sort();
            expect(listed, `${name}: threads of ${resourceId}`).toStrictEqual(scoped.filter(([, resource]) => resource === resourceId).map(([thread]) => thread).sort());
          }
          // a look-alike of a thread that was never saved loads nothing
          for (const [threadId] of scoped) {
            for (const alike of [`${threadId} `, threadId.toUpperCase(), threadId.normalize('NFD'), `${threadId}%`, threadId.slice(0, -1)]) {
              if (owner.has(alike)) continue;
              expect(await storage.getMessages({ threadId: alike }), `${name}: ${JSON.stringify(alike)}`).toStrictEqual([]);
            }
          }
        }
      },
      60,
    );
  }, 120_000);

  it('an id with NUL is an InvalidIdError on every store alike, and nothing is stored', async () => {
    await checkProperty(
      'memory: ids with NUL are refused alike',
      fc.tuple(tenantId, tenantId, fc.constantFrom<'thread' | 'resource'>('thread', 'resource')),
      async ([left, right, where]) => {
        const number = ++caseNumber;
        const withNul = `${number}${left}\u0000${right}`;
        const clean = `${number}${left}`;
        for (const [name, storage] of stores) {
          const threadId = where === 'thread' ? withNul : clean;
          const resourceId = where === 'resource' ? withNul : clean;
          const save = storage.saveMessages({ threadId, resourceId, messages: [{ id: `${name}:nul:${number}`, role: 'user', createdAt: new Date(0), content: { format: 2, parts: [] } }], ensureThread: true });
          await expect(save, name).rejects.toSatisfy((error: unknown) => InvalidIdError.isInstance(error));
          await expect(storage.getMessages({ threadId: withNul }), name).rejects.toSatisfy((error: unknown) => InvalidIdError.isInstance(error));
          expect(await storage.getMessages({ threadId: clean }), name).toStrictEqual([]);
        }
      },
      50,
    );
  }, 60_000);
});
