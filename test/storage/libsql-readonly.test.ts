/**
 * A libSQL database this process may not write: a 0444 file in a 0555 directory, read by a
 * child process (test/storage/fixtures/libsql-reader.ts). As root, permissions do not stop
 * writes, so the child then runs without the capabilities that override them (setpriv drops
 * CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from its bounding set: still root, so it reads a
 * repository cloned into a private directory, which `nobody` could not); otherwise as the current user. The
 * client (@libsql/client) has no read-only open mode, so this is how "read-only" is made real.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from '@libsql/client';
import { afterAll, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/storage/errors/storage-error.js';
import { LibSQLStorage } from '../../src/storage/libsql/libsql-storage.js';
import { textMessage } from './storage-suite.js';

const run = promisify(execFile);
const base = mkdtempSync(join(tmpdir(), 'rxagent-libsql-ro-'));
chmodSync(base, 0o755);
afterAll(() => {
  chmodSync(base, 0o755);
  for (const name of ['wal', 'snapshot']) if (existsSync(join(base, name))) chmodSync(join(base, name), 0o755);
  rmSync(base, { recursive: true, force: true });
});

interface ReaderOutput {
  messages: string[] | { name: string; message: string };
  thread: string | null | { name: string };
  save: string | { name: string; operation?: string; message: string };
  run: { text: string; prompt: string } | { name: string; message: string };
}

/** Runs the reader in another process that cannot write the file. */
async function readAsAnotherUser(url: string, threadId: string, readOnly: boolean): Promise<ReaderOutput> {
  const node = [process.execPath, '--import', 'tsx', join(import.meta.dirname, 'fixtures', 'libsql-reader.ts'), url, threadId, ...(readOnly ? ['readOnly'] : [])];
  const [command, ...args] = process.getuid?.() === 0 ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--', ...node] : node;
  const { stdout } = await run(command!, args, { cwd: join(import.meta.dirname, '..', '..') });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as ReaderOutput;
}

async function seed(path: string): Promise<void> {
  const storage = new LibSQLStorage({ url: `file:${path}` });
  await storage.saveMessages({
    threadId: 't',
    resourceId: 'r',
    ensureThread: true,
    messages: [textMessage('m1', 'remembered question'), textMessage('m2', 'remembered answer', { role: 'assistant' })],
  });
  await storage.close();
}

function lockDown(directory: string): void {
  for (const file of ['memory.db', 'memory.db-wal', 'memory.db-shm']) if (existsSync(join(directory, file))) chmodSync(join(directory, file), 0o444);
  chmodSync(directory, 0o555);
}

describe('LibSQLStorage on a database it cannot write', () => {
  // A copy made with VACUUM INTO (a snapshot or backup) is in rollback-journal mode: opening it
  // used to fail outright, because switching it to WAL is a write.
  const snapshot = join(base, 'snapshot');
  // The file a store wrote and closed (WAL mode, its -wal/-shm beside it).
  const wal = join(base, 'wal');

  it.each([
    ['a snapshot (rollback journal)', snapshot],
    ['a file the store wrote (WAL)', wal],
  ])('%s: reads work, a save is a StorageError, a read-only-memory run sees the history', async (_label, directory) => {
    mkdirSync(directory);
    if (directory === snapshot) {
      const source = join(base, 'source.db');
      await seed(source);
      const client = createClient({ url: `file:${source}` });
      await client.execute({ sql: 'VACUUM INTO ?', args: [join(directory, 'memory.db')] });
      client.close();
    } else {
      await seed(join(directory, 'memory.db'));
    }
    // WAL case: a connection that stays open keeps the -wal/-shm files beside the database (as a
    // running writer would); when the last connection closes SQLite removes them, and whether that
    // happened before the lock-down would otherwise depend on timing.
    const holder = directory === wal ? createClient({ url: `file:${join(directory, 'memory.db')}` }) : undefined;
    if (holder !== undefined) await holder.execute('SELECT count(*) FROM sqlite_master');
    lockDown(directory);
    // One reader at a time: two processes opening a WAL file whose -shm they cannot write race
    // each other (SQLite's read-only WAL access), which this test is not about.
    const outputs = [];
    try {
      for (const readOnly of [false, true]) outputs.push(await readAsAnotherUser(`file:${join(directory, 'memory.db')}`, 't', readOnly));
    } finally {
      holder?.close();
    }
    for (const [index, output] of outputs.entries()) {
      const readOnly = index === 1;
      expect(output.messages).toEqual(['remembered question', 'remembered answer']);
      expect(output.thread).toBe('r');
      expect(output.save).toMatchObject({ name: 'StorageError', operation: 'saveMessages' });
      expect((output.save as { message: string }).message).toMatch(readOnly ? /readOnly: true/ : /SQLITE_READONLY/);
      expect(output.run).toMatchObject({ text: 'answer' });
      expect((output.run as { prompt: string }).prompt).toContain('remembered answer');
    }
    // Child processes compiling the library through tsx: slow on a loaded machine.
  }, 60_000);
});

describe('LibSQLStorage readOnly: true', () => {
  it('writes nothing: every write rejects with a StorageError, reads work', async () => {
    const path = join(base, 'writable.db');
    await seed(path);
    const storage = new LibSQLStorage({ url: `file:${path}`, readOnly: true });
    expect((await storage.getMessages({ threadId: 't' })).map((message) => message.id)).toEqual(['m1', 'm2']);
    for (const write of [
      () => storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage('m3', 'x')] }),
      () => storage.createThread({ id: 't2', resourceId: 'r' }),
      () => storage.deleteThread('t'),
      () => storage.saveResource({ id: 'r', workingMemory: 'w' }),
    ]) {
      const error = await write().catch((caught: unknown) => caught);
      expect(StorageError.isInstance(error)).toBe(true);
    }
    expect((await storage.getMessages({ threadId: 't' })).map((message) => message.id)).toEqual(['m1', 'm2']);
    expect(await storage.getThread('t2')).toBeNull();
    await storage.close();
  });

  it('a missing file is a StorageError and is not created; a database without the schema is a StorageError', async () => {
    const missing = join(base, 'nothing-here.db');
    const storage = new LibSQLStorage({ url: `file:${missing}`, readOnly: true });
    expect(await storage.getThread('t').catch((caught: unknown) => caught)).toMatchObject({ name: 'StorageError', operation: 'migrate' });
    expect(existsSync(missing)).toBe(false);
    await storage.close();

    const foreign = join(base, 'foreign.db');
    const client = createClient({ url: `file:${foreign}` });
    await client.execute('CREATE TABLE other (x INTEGER)');
    client.close();
    const onForeign = new LibSQLStorage({ url: `file:${foreign}`, readOnly: true });
    const error = await onForeign.getThread('t').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'StorageError', operation: 'migrate' });
    expect(String((error as Error).message)).toMatch(/no current rxagent schema/);
    await onForeign.close();
  });
});
