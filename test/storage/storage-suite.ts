/**
 * The one test suite every `MemoryStorage` passes. Each test uses fresh random ids, so a
 * store may be shared across tests (a SQL database lives for the whole test file).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';
import type { MastraDBMessage, MastraMessagePart } from '../../src/message-list/types.js';
import { StorageError } from '../../src/storage/errors/storage-error.js';
import { ThreadNotFoundError } from '../../src/storage/errors/thread-not-found-error.js';
import { ThreadOwnershipError } from '../../src/storage/errors/thread-ownership-error.js';
import type { MemoryStorage } from '../../src/storage/types.js';
import { InvalidIdError, MAX_STORAGE_ID_LENGTH, type InvalidIdReason } from '../../src/storage/errors/invalid-id-error.js';

/** A unique prefix for one test's ids. */
function fresh(): (name: string) => string {
  const prefix = randomUUID().slice(0, 8);
  return (name) => `${prefix}-${name}`;
}

/** A format-2 text message. */
export function textMessage(
  id: string,
  text: string,
  overrides: Partial<Omit<MastraDBMessage, 'content'>> & { parts?: MastraMessagePart[] } = {},
): MastraDBMessage {
  const { parts, ...rest } = overrides;
  return {
    id,
    role: 'user',
    createdAt: new Date('2026-01-01T10:00:00.000Z'),
    content: { format: 2, parts: parts ?? [{ type: 'text', text }], content: text },
    ...rest,
  };
}

/** The text of a message's first text part. */
function textOf(message: MastraDBMessage | undefined): string | undefined {
  const part = message?.content.parts.find((candidate) => candidate.type === 'text');
  return part?.type === 'text' ? part.text : undefined;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/**
 * Registers the shared storage suite under `name`. `makeStorage` is called before every test;
 * the store it returns is closed after it.
 */
export function describeStorage(name: string, makeStorage: () => MemoryStorage | Promise<MemoryStorage>): void {
  describe(name, () => {
    let storage: MemoryStorage;
    let opened: MemoryStorage | undefined;
    let id: (name: string) => string;

    beforeEach(async () => {
      id = fresh();
      storage = await makeStorage();
      opened = storage;
    });
    afterEach(async () => {
      await opened?.close();
      opened = undefined;
    });

    describe('threads', () => {
      it('creates, reads and round-trips title, metadata and dates', async () => {
        expect(await storage.getThread(id('t'))).toBeNull();
        const createdAt = new Date('2026-02-03T04:05:06.789Z');
        const created = await storage.createThread({
          id: id('t'),
          resourceId: id('r'),
          title: 'Trip',
          metadata: { tags: ['a'], nested: { n: 1 } },
          createdAt,
        });
        expect(created).toEqual({
          id: id('t'),
          resourceId: id('r'),
          title: 'Trip',
          metadata: { tags: ['a'], nested: { n: 1 } },
          createdAt,
          updatedAt: createdAt,
        });
        const read = await storage.getThread(id('t'));
        expect(read).toEqual(created);
        expect(read?.createdAt).toBeInstanceOf(Date);
      });

      it('createThread is idempotent for the same resource and keeps the stored thread', async () => {
        const first = await storage.createThread({ id: id('t'), resourceId: id('r'), title: 'first' });
        const again = await storage.createThread({ id: id('t'), resourceId: id('r'), title: 'second' });
        expect(again).toEqual(first);
        const concurrent = await Promise.all(
          Array.from({ length: 10 }, () => storage.createThread({ id: id('t2'), resourceId: id('r') })),
        );
        expect(new Set(concurrent.map((thread) => thread.createdAt.getTime())).size).toBe(1);
      });

      it('refuses a thread of another resource (ThreadOwnershipError)', async () => {
        await storage.createThread({ id: id('t'), resourceId: id('owner') });
        const error = await rejection(storage.createThread({ id: id('t'), resourceId: id('intruder') }));
        expect(ThreadOwnershipError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ name: 'ThreadOwnershipError', threadId: id('t'), resourceId: id('intruder') });
        expect((await storage.getThread(id('t')))?.resourceId).toBe(id('owner'));
      });

      it('lists a resource’s threads, most recently updated first, with limit/offset', async () => {
        for (let index = 0; index < 5; index++) {
          const at = new Date(Date.UTC(2000, 0, 1 + index));
          await storage.createThread({ id: id(`t${index}`), resourceId: id('r'), createdAt: at, updatedAt: at });
        }
        await storage.createThread({ id: id('other'), resourceId: id('someone-else') });
        const all = await storage.listThreads({ resourceId: id('r') });
        expect(all.map((thread) => thread.id)).toEqual([4, 3, 2, 1, 0].map((index) => id(`t${index}`)));
        const page = await storage.listThreads({ resourceId: id('r'), limit: 2, offset: 1 });
        expect(page.map((thread) => thread.id)).toEqual([id('t3'), id('t2')]);
        expect(await storage.listThreads({ resourceId: id('r'), offset: 5 })).toEqual([]);
        expect(await storage.listThreads({ resourceId: id('nobody') })).toEqual([]);

        // Saving into the oldest thread makes it the most recently updated.
        await storage.saveMessages({ threadId: id('t0'), resourceId: id('r'), messages: [textMessage(id('m'), 'hi')] });
        const [latest] = await storage.listThreads({ resourceId: id('r'), limit: 1 });
        expect(latest?.id).toBe(id('t0'));
        expect(latest!.updatedAt.getTime()).toBeGreaterThan(latest!.createdAt.getTime());
      });

      it('deleteThread removes the thread and its messages; deleting a missing thread is a no-op', async () => {
        await storage.saveMessages({
          threadId: id('t'),
          resourceId: id('r'),
          messages: [textMessage(id('m1'), 'a'), textMessage(id('m2'), 'b')],
          ensureThread: true,
        });
        await storage.deleteThread(id('t'));
        expect(await storage.getThread(id('t'))).toBeNull();
        expect(await storage.getMessages({ threadId: id('t') })).toEqual([]);
        await expect(storage.deleteThread(id('t'))).resolves.toBeUndefined();
        // The message ids are free again: a new thread may use them.
        await storage.saveMessages({ threadId: id('t-new'), resourceId: id('r'), messages: [textMessage(id('m1'), 'again')], ensureThread: true });
        expect((await storage.getMessages({ threadId: id('t-new') })).map(textOf)).toEqual(['again']);
      });
    });

    describe('messages', () => {
      it('round-trips a message: Date, parts, type, thread and resource', async () => {
        const createdAt = new Date('2026-03-04T05:06:07.891Z');
        const message: MastraDBMessage = {
          id: id('m'),
          role: 'assistant',
          createdAt,
          type: 'text',
          content: {
            format: 2,
            parts: [
              { type: 'step-start' },
              { type: 'reasoning', reasoning: 'think', details: [{ type: 'text', text: 'think' }] },
              { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'weather', args: { city: 'Zürich' }, result: { temp: 21.5 } } },
              { type: 'text', text: 'NUL \u0000, lone surrogate \ud800, emoji 🌍, quotes "\'\\' },
              { type: 'data-progress', data: { percent: 50 } },
            ],
            metadata: { source: 'test' },
          },
        };
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [message], ensureThread: true });
        const [stored] = await storage.getMessages({ threadId: id('t') });
        expect(stored).toEqual({ ...message, threadId: id('t'), resourceId: id('r') });
        expect(stored?.createdAt).toBeInstanceOf(Date);
        expect(stored?.createdAt.getTime()).toBe(createdAt.getTime());
      });

      it('returns messages in insertion order, not createdAt order', async () => {
        const late = new Date('2026-05-01T00:00:00Z');
        const early = new Date('2026-01-01T00:00:00Z');
        await storage.saveMessages({
          threadId: id('t'),
          resourceId: id('r'),
          messages: [textMessage(id('a'), 'a', { createdAt: late }), textMessage(id('b'), 'b', { createdAt: early })],
          ensureThread: true,
        });
        // Many messages with one identical timestamp keep their order too.
        const same = Array.from({ length: 20 }, (_, index) => textMessage(id(`s${index}`), `s${index}`));
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: same });
        const all = await storage.getMessages({ threadId: id('t') });
        expect(all.map(textOf)).toEqual(['a', 'b', ...same.map(textOf)]);
      });

      it('pages with last, limit/offset, last+offset and after/before', async () => {
        const messages = Array.from({ length: 10 }, (_, index) =>
          textMessage(id(`m${index}`), `${index}`, { createdAt: new Date(Date.UTC(2026, 0, 1, 0, index)) }),
        );
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages, ensureThread: true });
        const texts = async (options: Omit<Parameters<MemoryStorage['getMessages']>[0], 'threadId'>) =>
          (await storage.getMessages({ threadId: id('t'), ...options })).map(textOf);

        expect(await texts({ last: 3 })).toEqual(['7', '8', '9']);
        expect(await texts({ last: 3, offset: 3 })).toEqual(['4', '5', '6']);
        expect(await texts({ last: 5, offset: 8 })).toEqual(['0', '1']);
        expect(await texts({ last: 20 })).toHaveLength(10);
        expect(await texts({ last: 0 })).toEqual([]);
        expect(await texts({ limit: 3 })).toEqual(['0', '1', '2']);
        expect(await texts({ limit: 3, offset: 8 })).toEqual(['8', '9']);
        expect(await texts({ offset: 7 })).toEqual(['7', '8', '9']);
        expect(await texts({ limit: 0 })).toEqual([]);
        const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
        expect(await texts({ after: at(6) })).toEqual(['7', '8', '9']);
        expect(await texts({ before: at(2) })).toEqual(['0', '1']);
        expect(await texts({ after: at(2), before: at(6), last: 2 })).toEqual(['4', '5']);
        expect(await texts({ after: at(2), before: at(6), limit: 2, offset: 1 })).toEqual(['4', '5']);
      });

      it('rejects bad paging options with RangeError', async () => {
        await expect(storage.getMessages({ threadId: id('t'), last: 2, limit: 2 })).rejects.toBeInstanceOf(RangeError);
        await expect(storage.getMessages({ threadId: id('t'), limit: -1 })).rejects.toBeInstanceOf(RangeError);
        await expect(storage.getMessages({ threadId: id('t'), offset: 1.5 })).rejects.toBeInstanceOf(RangeError);
        await expect(storage.getMessages({ threadId: id('t'), after: new Date(Number.NaN) })).rejects.toBeInstanceOf(RangeError);
        await expect(storage.listThreads({ resourceId: id('r'), limit: -1 })).rejects.toBeInstanceOf(RangeError);
      });

      it('returns [] for a missing thread and checks ownership when a resourceId is given', async () => {
        expect(await storage.getMessages({ threadId: id('missing') })).toEqual([]);
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('m'), 'x')], ensureThread: true });
        expect(await storage.getMessages({ threadId: id('t'), resourceId: id('r') })).toHaveLength(1);
        const error = await rejection(storage.getMessages({ threadId: id('t'), resourceId: id('other') }));
        expect(ThreadOwnershipError.isInstance(error)).toBe(true);
      });
    });

    describe('saveMessages', () => {
      it('needs an existing thread unless ensureThread is set', async () => {
        const error = await rejection(storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('m'), 'x')] }));
        expect(ThreadNotFoundError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ name: 'ThreadNotFoundError', threadId: id('t') });
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('m'), 'x')], ensureThread: true });
        expect(await storage.getThread(id('t'))).toMatchObject({ id: id('t'), resourceId: id('r') });
        // An empty batch into an existing thread is fine.
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [] });
      });

      it('refuses to save into another resource’s thread and writes nothing', async () => {
        await storage.saveMessages({ threadId: id('t'), resourceId: id('owner'), messages: [textMessage(id('m1'), 'mine')], ensureThread: true });
        for (const ensureThread of [false, true]) {
          const error = await rejection(
            storage.saveMessages({ threadId: id('t'), resourceId: id('intruder'), messages: [textMessage(id('m2'), 'theirs')], ensureThread }),
          );
          expect(ThreadOwnershipError.isInstance(error)).toBe(true);
        }
        expect((await storage.getMessages({ threadId: id('t') })).map(textOf)).toEqual(['mine']);
      });

      it('upserts by id: new content, original position (the growing assistant message)', async () => {
        const assistant = (text: string) => textMessage(id('a'), text, { role: 'assistant' });
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('u1'), 'question'), assistant('step 1')], ensureThread: true });
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('u2'), 'follow-up')] });
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [assistant('step 1 + step 2')] });
        const all = await storage.getMessages({ threadId: id('t') });
        expect(all.map((message) => message.id)).toEqual([id('u1'), id('a'), id('u2')]);
        expect(textOf(all[1])).toBe('step 1 + step 2');
        expect(all[1]?.role).toBe('assistant');
      });

      it('keeps the first position and the last content of an id repeated in one batch', async () => {
        await storage.saveMessages({
          threadId: id('t'),
          resourceId: id('r'),
          messages: [textMessage(id('x'), 'v1'), textMessage(id('y'), 'y'), textMessage(id('x'), 'v2')],
          ensureThread: true,
        });
        const all = await storage.getMessages({ threadId: id('t') });
        expect(all.map((message) => [message.id, textOf(message)])).toEqual([
          [id('x'), 'v2'],
          [id('y'), 'y'],
        ]);
      });
    });

    describe('atomicity and bad input', () => {
      async function seed(): Promise<void> {
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('keep'), 'original')], ensureThread: true });
      }
      async function expectUntouched(): Promise<void> {
        const all = await storage.getMessages({ threadId: id('t') });
        expect(all.map((message) => [message.id, textOf(message)])).toEqual([[id('keep'), 'original']]);
      }

      it.each([
        ['content format 1', (m: MastraDBMessage) => ({ ...m, content: { ...m.content, format: 1 } }), [2, 'content', 'format']],
        ['parts not an array', (m: MastraDBMessage) => ({ ...m, content: { ...m.content, parts: 'text' } }), [2, 'content', 'parts']],
        ['createdAt a string', (m: MastraDBMessage) => ({ ...m, createdAt: '2026-01-01' }), [2, 'createdAt']],
        ['an unknown role', (m: MastraDBMessage) => ({ ...m, role: 'robot' }), [2, 'role']],
        ['a numeric id', (m: MastraDBMessage) => ({ ...m, id: 42 }), [2, 'id']],
        ['content a string', (m: MastraDBMessage) => ({ ...m, content: 'hello' }), [2, 'content']],
      ])('rejects a batch with %s before writing anything (InvalidMessageError names the path)', async (_, corrupt, path) => {
        await seed();
        const batch = [textMessage(id('keep'), 'overwritten?'), textMessage(id('n1'), 'n1'), corrupt(textMessage(id('bad'), 'bad')) as MastraDBMessage];
        const error = await rejection(storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: batch }));
        expect(InvalidMessageError.isInstance(error)).toBe(true);
        expect((error as InvalidMessageError).path).toEqual(path);
        await expectUntouched();
      });

      it('rejects a message naming another thread or resource', async () => {
        await seed();
        const error = await rejection(
          storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('n1'), 'x', { threadId: id('elsewhere') })] }),
        );
        expect((error as InvalidMessageError).path).toEqual([0, 'threadId']);
        await expectUntouched();
      });

      it('rolls back when a message fails mid-transaction (content JSON cannot hold: BigInt)', async () => {
        await seed();
        const poisoned = textMessage(id('bad'), 'bad', { parts: [{ type: 'data-big', data: { value: 10n } }] });
        const batch = [textMessage(id('keep'), 'overwritten?'), textMessage(id('n1'), 'n1'), poisoned, textMessage(id('n2'), 'n2')];
        const error = await rejection(storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: batch }));
        expect(InvalidMessageError.isInstance(error)).toBe(true);
        expect((error as InvalidMessageError).path).toEqual([2, 'content']);
        expect((error as InvalidMessageError).message).toMatch(/BigInt/);
        await expectUntouched();

        // A thread the failed save would have created does not exist either.
        const created = await rejection(storage.saveMessages({ threadId: id('t-new'), resourceId: id('r'), messages: [textMessage(id('n3'), 'x'), poisoned], ensureThread: true }));
        expect(InvalidMessageError.isInstance(created)).toBe(true);
        expect(await storage.getThread(id('t-new'))).toBeNull();
      });

      it('rolls back when a message id already lives in another thread', async () => {
        await seed();
        await storage.saveMessages({ threadId: id('t-other'), resourceId: id('r'), messages: [textMessage(id('taken'), 'other thread')], ensureThread: true });
        const batch = [textMessage(id('keep'), 'overwritten?'), textMessage(id('taken'), 'hijack'), textMessage(id('n1'), 'n1')];
        const error = await rejection(storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: batch }));
        expect(InvalidMessageError.isInstance(error)).toBe(true);
        expect((error as InvalidMessageError).path).toEqual([1, 'id']);
        await expectUntouched();
        expect((await storage.getMessages({ threadId: id('t-other') })).map(textOf)).toEqual(['other thread']);
      });
    });

    describe('concurrency', () => {
      it('50 concurrent saves on one thread all land, each batch contiguous and in order', async () => {
        await storage.createThread({ id: id('t'), resourceId: id('r') });
        await Promise.all(
          Array.from({ length: 50 }, (_, run) =>
            storage.saveMessages({
              threadId: id('t'),
              resourceId: id('r'),
              messages: [textMessage(id(`u${run}`), `u${run}`), textMessage(id(`a${run}`), `a${run}`, { role: 'assistant' })],
            }),
          ),
        );
        const all = await storage.getMessages({ threadId: id('t') });
        expect(all).toHaveLength(100);
        expect(new Set(all.map((message) => message.id)).size).toBe(100);
        for (let index = 0; index < all.length; index += 2) {
          const run = textOf(all[index])!.slice(1);
          expect([textOf(all[index]), textOf(all[index + 1])]).toEqual([`u${run}`, `a${run}`]);
        }
      });

      it('50 concurrent saves on 50 new threads all land', async () => {
        await Promise.all(
          Array.from({ length: 50 }, (_, run) =>
            storage.saveMessages({
              threadId: id(`t${run}`),
              resourceId: id('r'),
              messages: [textMessage(id(`u${run}`), `u${run}`), textMessage(id(`a${run}`), `a${run}`, { role: 'assistant' })],
              ensureThread: true,
            }),
          ),
        );
        const threads = await storage.listThreads({ resourceId: id('r') });
        expect(threads).toHaveLength(50);
        const counts = await Promise.all(threads.map(async (thread) => (await storage.getMessages({ threadId: thread.id })).length));
        expect(counts).toEqual(Array.from({ length: 50 }, () => 2));
      });

      it('concurrent upserts of one message id leave exactly one message', async () => {
        await storage.createThread({ id: id('t'), resourceId: id('r') });
        await Promise.all(
          Array.from({ length: 20 }, (_, step) =>
            storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('a'), `step ${step}`, { role: 'assistant' })] }),
          ),
        );
        const all = await storage.getMessages({ threadId: id('t') });
        expect(all).toHaveLength(1);
        expect(textOf(all[0])).toMatch(/^step \d+$/);
      });
    });

    describe('resources', () => {
      it('creates and updates a resource, keeping fields not given', async () => {
        expect(await storage.getResource(id('r'))).toBeNull();
        const created = await storage.saveResource({ id: id('r'), workingMemory: '# Name: Ada' });
        expect(created).toMatchObject({ id: id('r'), workingMemory: '# Name: Ada' });
        expect(created.metadata).toBeUndefined();
        const withMetadata = await storage.saveResource({ id: id('r'), metadata: { plan: 'pro' } });
        expect(withMetadata).toMatchObject({ workingMemory: '# Name: Ada', metadata: { plan: 'pro' } });
        const updated = await storage.saveResource({ id: id('r'), workingMemory: '# Name: Ada L.' });
        expect(updated).toMatchObject({ workingMemory: '# Name: Ada L.', metadata: { plan: 'pro' } });
        expect(updated.createdAt.getTime()).toBe(created.createdAt.getTime());
        expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());
        expect(await storage.getResource(id('r'))).toEqual(updated);
      });
    });

    describe('abortSignal', () => {
      it('an aborted signal: saveMessages rejects with its reason and writes nothing', async () => {
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('m1'), 'one')], ensureThread: true });
        const controller = new AbortController();
        const reason = new Error('user left');
        controller.abort(reason);
        const error = await rejection(
          storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('m2'), 'two')], abortSignal: controller.signal }),
        );
        expect(error).toBe(reason);
        const onNewThread = await rejection(
          storage.saveMessages({ threadId: id('t2'), resourceId: id('r'), messages: [textMessage(id('m3'), 'x')], ensureThread: true, abortSignal: controller.signal }),
        );
        expect(onNewThread).toBe(reason);
        expect((await storage.getMessages({ threadId: id('t') })).map(textOf)).toEqual(['one']);
        expect(await storage.getThread(id('t2'))).toBeNull();
      });

      it('a signal aborted after the save resolved changes nothing: the save is complete', async () => {
        const controller = new AbortController();
        await storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('m1'), 'one')], ensureThread: true, abortSignal: controller.signal });
        controller.abort();
        expect((await storage.getMessages({ threadId: id('t') })).map(textOf)).toEqual(['one']);
      });
    });

    describe('ids', () => {
      const badIds: Array<[string, string, InvalidIdReason]> = [
        ['a lone high surrogate', 'thread-\ud800', 'lone-surrogate'],
        ['a lone low surrogate', '\udc00-thread', 'lone-surrogate'],
        ['a reversed pair', 'x\udc00\ud800', 'lone-surrogate'],
        ['a NUL', 'thread\u0000x', 'nul'],
        ['too long', 'x'.repeat(MAX_STORAGE_ID_LENGTH + 1), 'too-long'],
        ['empty', '', 'empty'],
      ];

      it.each(badIds)('rejects a thread id with %s in every method, writing nothing', async (_label, bad, reason) => {
        const message = textMessage(id('m'), 'x');
        const attempts: Array<() => Promise<unknown>> = [
          () => storage.getThread(bad),
          () => storage.createThread({ id: bad, resourceId: id('r') }),
          () => storage.deleteThread(bad),
          () => storage.getMessages({ threadId: bad }),
          () => storage.saveMessages({ threadId: bad, resourceId: id('r'), messages: [message], ensureThread: true }),
        ];
        for (const attempt of attempts) {
          const error = await rejection(attempt());
          expect(InvalidIdError.isInstance(error)).toBe(true);
          expect(error).toMatchObject({ name: 'InvalidIdError', field: 'threadId', reason });
        }
        expect(await storage.listThreads({ resourceId: id('r') })).toEqual([]);
      });

      it.each(badIds)('rejects a resource id with %s in every method, writing nothing', async (_label, bad, reason) => {
        await storage.createThread({ id: id('t'), resourceId: id('r') });
        const attempts: Array<() => Promise<unknown>> = [
          () => storage.createThread({ id: id('t2'), resourceId: bad }),
          () => storage.listThreads({ resourceId: bad }),
          () => storage.getMessages({ threadId: id('t'), resourceId: bad }),
          () => storage.saveMessages({ threadId: id('t3'), resourceId: bad, messages: [textMessage(id('m'), 'x')], ensureThread: true }),
          () => storage.getResource(bad),
          () => storage.saveResource({ id: bad, workingMemory: 'w' }),
        ];
        for (const attempt of attempts) {
          const error = await rejection(attempt());
          expect(InvalidIdError.isInstance(error)).toBe(true);
          expect(error).toMatchObject({ name: 'InvalidIdError', field: 'resourceId', reason });
        }
        expect(await storage.getThread(id('t2'))).toBeNull();
        expect(await storage.getThread(id('t3'))).toBeNull();
        expect(await storage.getMessages({ threadId: id('t') })).toEqual([]);
      });

      it('two ids differing only in a lone surrogate never share a thread (the SQL stores would read both as U+FFFD)', async () => {
        const first = await rejection(storage.saveMessages({ threadId: id('t\ud800'), resourceId: id('a'), messages: [textMessage(id('m1'), 'a')], ensureThread: true }));
        const second = await rejection(storage.saveMessages({ threadId: id('t\udbff'), resourceId: id('b'), messages: [textMessage(id('m2'), 'b')], ensureThread: true }));
        expect([InvalidIdError.isInstance(first), InvalidIdError.isInstance(second)]).toEqual([true, true]);
        expect(await storage.getThread(id('t\ufffd'))).toBeNull();
        // The resource whose id would have collided can still use its own thread.
        await storage.saveMessages({ threadId: id('t\ufffd'), resourceId: id('b'), messages: [textMessage(id('m3'), 'ok')], ensureThread: true });
        expect((await storage.getMessages({ threadId: id('t\ufffd'), resourceId: id('b') })).map(textOf)).toEqual(['ok']);
      });

      it('accepts ids up to the maximum length, with surrogate pairs and any other text', async () => {
        const longest = `${id('')}${'y'.repeat(MAX_STORAGE_ID_LENGTH - id('').length)}`;
        expect(longest).toHaveLength(MAX_STORAGE_ID_LENGTH);
        const odd = id('🌍 "quoted" \\ \t ünïcødé \ufffd');
        for (const threadId of [longest, odd]) {
          await storage.saveMessages({ threadId, resourceId: longest, messages: [textMessage(id(`m-${threadId.length}`), threadId)], ensureThread: true });
          expect((await storage.getMessages({ threadId, resourceId: longest })).map(textOf)).toEqual([threadId]);
          expect((await storage.getThread(threadId))?.resourceId).toBe(longest);
        }
        expect((await storage.listThreads({ resourceId: longest })).map((thread) => thread.id).sort()).toEqual([longest, odd].sort());
      });

      it('a message id that is not well-formed, holds NUL or is too long is an InvalidMessageError at [index, "id"]', async () => {
        for (const bad of [id('m\ud800'), id('m\u0000'), 'm'.repeat(MAX_STORAGE_ID_LENGTH + 1)]) {
          const error = await rejection(
            storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [textMessage(id('ok'), 'ok'), textMessage(bad, 'bad')], ensureThread: true }),
          );
          expect(InvalidMessageError.isInstance(error)).toBe(true);
          expect((error as InvalidMessageError).issues[0]?.path).toEqual([1, 'id']);
        }
        expect(await storage.getThread(id('t'))).toBeNull();
      });
    });

    describe('close', () => {
      it('is idempotent; a closed store rejects with StorageError', async () => {
        await storage.close();
        await storage.close();
        const error = await rejection(storage.getThread(id('t')));
        expect(StorageError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ name: 'StorageError', operation: 'getThread' });
        const saveError = await rejection(storage.saveMessages({ threadId: id('t'), resourceId: id('r'), messages: [], ensureThread: true }));
        expect(StorageError.isInstance(saveError)).toBe(true);
      });
    });
  });
}
