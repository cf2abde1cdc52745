/**
 * LibSQLStorage while another process holds the file's write lock (test/storage/fixtures/
 * libsql-lock-holder.ts): the wait must leave this process's event loop free, reads go on
 * (WAL), and a lock held past `busyTimeoutMs` ends the operation (and a run) with a
 * `StorageError`, nothing written.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { createClient } from '@libsql/client';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { StorageError } from '../../src/storage/errors/storage-error.js';
import { LibSQLStorage } from '../../src/storage/libsql/libsql-storage.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { textMessage } from './storage-suite.js';

const directory = mkdtempSync(join(tmpdir(), 'rxagent-libsql-locks-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

type Holder = ChildProcessByStdio<Writable, Readable, null>;
const holders: Holder[] = [];
afterEach(() => {
  for (const holder of holders.splice(0)) holder.stdin.end();
});

let files = 0;
const newUrl = (): string => `file:${join(directory, `locks-${++files}.db`)}`;
const textOf = (message: MastraDBMessage): string => message.content.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

/** Another process holding the write lock until `release()` (closing its stdin). */
async function holdWriteLock(url: string): Promise<{ release(): Promise<void> }> {
  const holder = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'libsql-lock-holder.ts'), url, '0'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  holders.push(holder);
  await new Promise<void>((resolve, reject) => {
    holder.stdout.on('data', (data: Buffer) => {
      if (String(data).includes('locked')) resolve();
    });
    holder.once('exit', (code) => reject(new Error(`lock holder exited early (${String(code)})`)));
  });
  const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
  return {
    release: async () => {
      holder.stdin.end();
      await exited;
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

describe('LibSQLStorage: another process holds the write lock', () => {
  it('a save waits without blocking the event loop: a timer of this process releases the lock and the save lands', async () => {
    const url = newUrl();
    const storage = new LibSQLStorage({ url, busyTimeoutMs: 20_000 });
    await storage.createThread({ id: 't', resourceId: 'r' });
    const lock = await holdWriteLock(url);
    // Counted by a 10 ms interval while the save waits: a blocked loop counts nothing.
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    // Only this process's event loop can release the lock. With a synchronous busy wait the
    // timer would not fire before the driver gave up, and the save would fail SQLITE_BUSY.
    const releasing = new Promise<void>((resolve) => setTimeout(() => void lock.release().then(resolve), 300));
    try {
      await storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage('m1', 'after the lock')] });
    } finally {
      clearInterval(ticker);
    }
    await releasing;
    expect(ticks).toBeGreaterThanOrEqual(5);
    expect((await storage.getMessages({ threadId: 't' })).map(textOf)).toEqual(['after the lock']);
    await storage.close();
  });

  it('the same holds for a write transaction of another connection in this process', async () => {
    const url = newUrl();
    const storage = new LibSQLStorage({ url, busyTimeoutMs: 20_000 });
    await storage.createThread({ id: 't', resourceId: 'r' });
    const other = createClient({ url });
    const transaction = await other.transaction('write');
    await transaction.execute('CREATE TABLE IF NOT EXISTS other_app (n INTEGER)');
    // It commits from a timer: possible only while the save's wait leaves the loop free.
    setTimeout(() => void transaction.commit(), 200);
    await storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage('m1', 'after the other commit')] });
    expect(transaction.closed).toBe(true);
    expect((await storage.getMessages({ threadId: 't' })).map(textOf)).toEqual(['after the other commit']);
    other.close();
    await storage.close();
  });

  it('reads go on while the lock is held (WAL)', async () => {
    const url = newUrl();
    const storage = new LibSQLStorage({ url, busyTimeoutMs: 200 });
    await storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage('m1', 'one')], ensureThread: true });
    const lock = await holdWriteLock(url);
    try {
      expect((await storage.getMessages({ threadId: 't' })).map(textOf)).toEqual(['one']);
      expect(await storage.getThread('t')).toMatchObject({ id: 't', resourceId: 'r' });
    } finally {
      await lock.release();
    }
    await storage.close();
  });

  it('a lock held past busyTimeoutMs is a StorageError (SQLITE_BUSY); nothing is written, the next save works', async () => {
    const url = newUrl();
    const storage = new LibSQLStorage({ url, busyTimeoutMs: 300 });
    await storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage('m1', 'one')], ensureThread: true });
    const lock = await holdWriteLock(url);
    try {
      const error = await rejection(storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage('m2', 'two')] }));
      expect(StorageError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ operation: 'saveMessages' });
      expect(String((error as Error).message)).toMatch(/SQLITE_BUSY/);
      // Every write is refused the same way, and reading still works.
      expect(await rejection(storage.saveResource({ id: 'r', workingMemory: 'x' }))).toMatchObject({ name: 'StorageError', operation: 'saveResource' });
      expect((await storage.getMessages({ threadId: 't' })).map(textOf)).toEqual(['one']);
    } finally {
      await lock.release();
    }
    await storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage('m3', 'three')] });
    expect((await storage.getMessages({ threadId: 't' })).map(textOf)).toEqual(['one', 'three']);
    await storage.close();
  });

  it('a new store on a file locked during its first-use migration fails with StorageError(migrate), then opens', async () => {
    const url = newUrl();
    const lock = await holdWriteLock(url);
    const storage = new LibSQLStorage({ url, busyTimeoutMs: 200 });
    try {
      expect(await rejection(storage.getThread('t'))).toMatchObject({ name: 'StorageError', operation: 'migrate' });
    } finally {
      await lock.release();
    }
    expect(await storage.getThread('t')).toBeNull();
    await storage.close();
  });

  it('a run whose save meets the held lock ends with one error chunk carrying the StorageError', async () => {
    const url = newUrl();
    const storage = new LibSQLStorage({ url, busyTimeoutMs: 300 });
    const model = mockModel({ parts: () => [...textParts('reply'), finishPart()] });
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }) });
    await agent.generate('turn one', { memory: { thread: 't', resource: 'u' } });
    const lock = await holdWriteLock(url);
    let chunks;
    try {
      chunks = await lastValueFrom(agent.stream$('turn two', { memory: { thread: 't', resource: 'u' } }).pipe(toArray()));
    } finally {
      await lock.release();
    }
    expect(chunks.filter((chunk) => ['finish', 'error', 'tripwire', 'abort'].includes(chunk.type))).toHaveLength(1);
    const last = chunks.at(-1);
    const error = last?.type === 'error' ? last.payload.error : undefined;
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect(StorageError.isInstance((error as ProcessorError).cause)).toBe(true);
    expect((await storage.getMessages({ threadId: 't' })).map(textOf)).toEqual(['turn one', 'reply']);
    await storage.close();
  });

  it('an abort while the save waits for the lock rejects with the reason at once; nothing is stored', async () => {
    const url = newUrl();
    const storage = new LibSQLStorage({ url, busyTimeoutMs: 60_000 });
    await storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage('m1', 'one')], ensureThread: true });
    const lock = await holdWriteLock(url);
    const controller = new AbortController();
    const reason = new Error('user left mid-save');
    try {
      const save = rejection(storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage('m2', 'two')], abortSignal: controller.signal }));
      setTimeout(() => controller.abort(reason), 100);
      // Rejected while the other process still holds the lock (well before busyTimeoutMs).
      expect(await save).toBe(reason);
    } finally {
      await lock.release();
    }
    expect((await storage.getMessages({ threadId: 't' })).map(textOf)).toEqual(['one']);
    await storage.close();
  });

  it('rejects a busyTimeoutMs that is not a whole number ≥ 0', () => {
    expect(() => new LibSQLStorage({ url: ':memory:', busyTimeoutMs: -1 })).toThrow(RangeError);
    expect(() => new LibSQLStorage({ url: ':memory:', busyTimeoutMs: 0.5 })).toThrow(RangeError);
  });
});
