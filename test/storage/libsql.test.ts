/**
 * LibSQLStorage against a real SQLite file (fresh per test file, under os.tmpdir()) and an
 * in-memory database. A libSQL *server* (`libsql://`) is not tested: no server binary is
 * available from our registries. The HTTP client path is covered by the unreachable-server test.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createClient } from '@libsql/client';
import { afterAll, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/storage/errors/storage-error.js';
import { LibSQLStorage } from '../../src/storage/libsql/libsql-storage.js';
import { describeStorage, textMessage } from './storage-suite.js';

const directory = mkdtempSync(join(tmpdir(), 'rxagent-libsql-'));
// A nested path: the store creates the missing parent directories.
const fileUrl = `file:${join(directory, 'nested', 'dir', 'memory.db')}`;

afterAll(() => rmSync(directory, { recursive: true, force: true }));

describeStorage('LibSQLStorage (file)', () => new LibSQLStorage({ url: fileUrl }));
describeStorage('LibSQLStorage (:memory:)', () => new LibSQLStorage({ url: ':memory:' }));

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('LibSQLStorage specifics', () => {
  it('two instances on a new file migrate once and share the data', async () => {
    const url = `file:${join(directory, 'shared.db')}`;
    const first = new LibSQLStorage({ url });
    const second = new LibSQLStorage({ url });
    // Concurrent first use by both.
    await Promise.all([
      first.createThread({ id: 't', resourceId: 'r' }),
      second.createThread({ id: 't', resourceId: 'r' }),
      first.getThread('t'),
      second.listThreads({ resourceId: 'r' }),
    ]);
    const client = createClient({ url });
    const versions = await client.execute('SELECT version FROM rxagent_schema_version ORDER BY version');
    client.close();
    expect(versions.rows.map((row) => row['version'])).toEqual([1, 2]);

    // Concurrent writes from both instances to one thread.
    await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        (index % 2 === 0 ? first : second).saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage(`m${index}`, `${index}`)] }),
      ),
    );
    expect(await first.getMessages({ threadId: 't' })).toHaveLength(40);
    await Promise.all([first.close(), second.close()]);

    // Reopened by a third instance: everything is there, dates are Dates.
    const reopened = new LibSQLStorage({ url });
    const messages = await reopened.getMessages({ threadId: 't', last: 1 });
    expect(messages[0]?.createdAt).toBeInstanceOf(Date);
    expect(new Set((await reopened.getMessages({ threadId: 't' })).map((message) => message.id)).size).toBe(40);
    await reopened.close();
  });

  it('waits for another process writing the same file instead of failing with SQLITE_BUSY', async () => {
    const url = `file:${join(directory, 'processes.db')}`;
    const storage = new LibSQLStorage({ url });
    await storage.createThread({ id: 't', resourceId: 'r' });
    const child = promisify(execFile)(process.execPath, [
      '--import', 'tsx', join(import.meta.dirname, 'fixtures', 'libsql-writer.ts'), url, 't', 'r', 'child', '20',
    ]);
    let childDone = false;
    void child.then(
      () => (childDone = true),
      () => (childDone = true),
    );
    // Keep writing (4 saves at a time, every few ms) until the child has finished its 20: the
    // two processes overlap and contend for the file's write lock.
    let parentSaves = 0;
    while (!childDone) {
      await delay(2);
      await Promise.all(
        Array.from({ length: 4 }, () =>
          storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage(`parent-${parentSaves++}`, 'p')] }),
        ),
      );
    }
    await child;
    const ids = (await storage.getMessages({ threadId: 't' })).map((message) => message.id);
    expect(ids.filter((messageId) => messageId.startsWith('child-'))).toHaveLength(20);
    expect(ids).toHaveLength(parentSaves + 20);
    expect(new Set(ids).size).toBe(ids.length);
    await storage.close();
  });

  it('an unreachable libSQL server (http URL, closed port) is a StorageError, quickly', async () => {
    const storage = new LibSQLStorage({ url: `http://127.0.0.1:${await closedPort()}` });
    const started = Date.now();
    const error = await storage.getThread('t').catch((caught: unknown) => caught);
    expect(StorageError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ name: 'StorageError', operation: 'migrate' });
    expect(Date.now() - started).toBeLessThan(5000);
    await storage.close();
  });

  it('an unopenable file is a StorageError', async () => {
    // The parent "directory" is a file: it cannot be created.
    const storage = new LibSQLStorage({ url: `file:${join(directory, 'nested', 'dir', 'memory.db', 'inner.db')}` });
    const error = await storage.getThread('t').catch((caught: unknown) => caught);
    expect(StorageError.isInstance(error)).toBe(true);
    await storage.close();
  });
});
