/**
 * `SaveMessagesOptions.fence` on the stores without a database-side check: InMemoryStorage checks
 * it against the InMemoryRunJournal it was given (before and after `beforeCommit`); LibSQLStorage
 * and an InMemoryStorage without a journal refuse a fenced save (TypeError), storing nothing.
 * PostgresStorage's FOR SHARE fence is tested in journal-postgres.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FencedError } from '../../src/storage/journal/errors/fenced-error.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { LibSQLStorage } from '../../src/storage/libsql/libsql-storage.js';
import { commit, finish, rejection } from './journal-suite.js';
import { textMessage } from './storage-suite.js';

const message = () => textMessage(`m-${randomUUID()}`, 'hello');

describe('fenced memory saves without a database fence', () => {
  it('InMemoryStorage with its run journal: the owner saves; a stale epoch, a claim during beforeCommit, an ended run do not', async () => {
    const runJournal = new InMemoryRunJournal();
    const storage = new InMemoryStorage({ runJournal });
    await runJournal.createRun({ runId: 'r1', agentId: 'a', input: null });
    const { lease } = await runJournal.claim('r1', 'w1');
    await storage.saveMessages({ threadId: 't1', resourceId: 'u', ensureThread: true, messages: [message()], fence: { runId: 'r1', epoch: 1 } });
    expect(await storage.getMessages({ threadId: 't1' })).toHaveLength(1);

    const during = await rejection(
      storage.saveMessages({
        threadId: 't1', resourceId: 'u', messages: [message()],
        fence: { runId: 'r1', epoch: 1, beforeCommit: async () => { await runJournal.claim('r1', 'w2'); } },
      }),
    );
    expect(FencedError.isInstance(during)).toBe(true);
    expect(during).toMatchObject({ epoch: 1, currentEpoch: 2, reason: 'epoch' });
    expect(await rejection(storage.saveMessages({ threadId: 't1', resourceId: 'u', messages: [message()], fence: { runId: 'r1', epoch: 1 } }))).toMatchObject({ name: 'FencedError' });
    expect(await rejection(storage.saveMessages({ threadId: 't1', resourceId: 'u', messages: [message()], fence: { runId: 'nope', epoch: 1 } }))).toMatchObject({ name: 'RunNotFoundError' });
    const { lease: third } = await runJournal.claim('r1', 'w3');
    await runJournal.append(third, [finish('r1')], commit('final'));
    expect(await rejection(storage.saveMessages({ threadId: 't1', resourceId: 'u', messages: [message()], fence: { runId: 'r1', epoch: 3 } }))).toMatchObject({ reason: 'ended' });
    expect(await storage.getMessages({ threadId: 't1' })).toHaveLength(1);
    expect(lease.epoch).toBe(1);
  });

  it('InMemoryStorage with its run journal: a run erased and created again at the old owner’s epoch refuses the old owner’s save (its incarnation), nothing stored', async () => {
    const runJournal = new InMemoryRunJournal();
    const storage = new InMemoryStorage({ runJournal });
    await runJournal.createRun({ runId: 'r1', agentId: 'a', input: null });
    const old = await runJournal.claim('r1', 'w1');
    await runJournal.deleteRun('r1', { force: true });
    await runJournal.createRun({ runId: 'r1', agentId: 'a', input: null });
    const again = await runJournal.claim('r1', 'w1');
    expect(again.lease.epoch).toBe(old.lease.epoch);
    const refused = await rejection(storage.saveMessages({ threadId: 't1', resourceId: 'u', ensureThread: true, messages: [message()], fence: { runId: 'r1', epoch: 1, incarnation: old.run.incarnation! } }));
    expect(refused).toMatchObject({ name: 'RunNotFoundError', runId: 'r1' });
    expect(await storage.getThread('t1')).toBeNull();
    await storage.saveMessages({ threadId: 't1', resourceId: 'u', ensureThread: true, messages: [message()], fence: { runId: 'r1', epoch: 1, incarnation: again.run.incarnation! } });
    expect(await storage.getMessages({ threadId: 't1' })).toHaveLength(1);
  });

  it('InMemoryStorage without a journal and LibSQLStorage refuse a fenced save: TypeError, nothing stored', async () => {
    const storage = new InMemoryStorage();
    const error = await rejection(storage.saveMessages({ threadId: 't1', resourceId: 'u', ensureThread: true, messages: [message()], fence: { runId: 'r', epoch: 1 } }));
    expect(error).toBeInstanceOf(TypeError);
    expect(await storage.getThread('t1')).toBeNull();
    const dir = mkdtempSync(join(tmpdir(), 'rxagent-fence-'));
    const libsql = new LibSQLStorage({ url: `file:${join(dir, 'memory.db')}` });
    try {
      const refused = await rejection(libsql.saveMessages({ threadId: 't1', resourceId: 'u', ensureThread: true, messages: [message()], fence: { runId: 'r', epoch: 1 } }));
      expect(refused).toBeInstanceOf(TypeError);
      expect((refused as Error).message).toContain('PostgresStorage');
      expect(await libsql.getThread('t1')).toBeNull();
    } finally {
      await libsql.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
