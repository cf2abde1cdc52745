/**
 * The owner session's heartbeat on a database that is slow, not gone. A heartbeat answered later
 * than its deadline made the session end its connection — which released the owner's lock on the
 * server — and take the lock again from a new one: a database slower than the heartbeat made the
 * lock flap, and other workers' sweeps could take a live owner's runs over. A late answer is now
 * checked from the journal's pool (is the lock still held by the session's backend?), and only a
 * lock the session's backend no longer holds ends the connection.
 *
 * Faults are real, on a cluster of the file's own (its backends are stopped by PID): the session's
 * backend stopped (SIGSTOP) for many heartbeats; the session's and the pool's backends stopped (the
 * check cannot answer either); and the half-open connection the heartbeat exists for (frozen by a
 * TCP proxy, its backend terminated), which must still be noticed and the lock taken again.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnerSession } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const schema = `rxagent_beat_${randomUUID().slice(0, 6)}`;
let server: TestPostgres;
let admin: pg.Pool;

beforeAll(async () => {
  // its own cluster: the test stops its backends by PID
  server = await startTestPostgres({ ownCluster: true });
  admin = new pg.Pool({ connectionString: server.connectionString, max: 1 });
}, 120_000);

afterAll(async () => {
  await admin?.end();
  await server?.stop();
}, 60_000);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The backend holding `owner`'s lock, if one does (what the sweeps see). */
async function lockHolder(owner: string): Promise<number | undefined> {
  const result = await admin.query<{ pid: number }>(
    `SELECT l.pid FROM pg_locks l
     WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
       AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('rxagent.owner/' || $1 || '/' || $2, 0)`,
    [schema, owner],
  );
  return result.rows[0]?.pid;
}

/** Every lock state the session tells, in order. */
function statesOf(session: OwnerSession): boolean[] {
  const states: boolean[] = [];
  session.lock$.subscribe(({ held }) => states.push(held));
  return states;
}

/** Stops the backends `pids` for `ms` (SIGSTOP), sampling the lock's holder meanwhile, then lets them go on. */
async function stopped(pids: readonly number[], ms: number, owner: string): Promise<Array<number | undefined>> {
  const holders: Array<number | undefined> = [];
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  try {
    for (const until = Date.now() + ms; Date.now() < until; ) {
      holders.push(await lockHolder(owner));
      await sleep(100);
    }
  } finally {
    for (const pid of pids) process.kill(pid, 'SIGCONT');
  }
  return holders;
}

describe('the owner session on a database that is slow, not gone', () => {
  it('its backend stopped for twenty heartbeats: the lock is never released, and held by the same backend after', { timeout: 60_000 }, async () => {
    const journal = new PostgresRunJournal({ connectionString: server.connectionString, schema, connectionTimeoutMs: 1_000 });
    const owner = `slow-${randomUUID().slice(0, 8)}`;
    try {
      const session = journal.holdOwnerSession(owner, { reconnectWithinMs: 100 });
      await session.ready();
      await journal.getRun('warm-the-pool'); // the checks are asked on the journal's pool
      const states = statesOf(session);
      const before = await lockHolder(owner);
      expect(before).toBeDefined();
      // each heartbeat unanswered while it is stopped: a slow database (it ended its connection: the lock flapped)
      const holders = await stopped([before!], 3_000, owner);
      expect(new Set(holders)).toEqual(new Set([before]));
      // answered again (the heartbeats go on)
      await sleep(1_500);
      expect(await lockHolder(owner)).toBe(before);
      // (the checks found it held by the stopped backend: told lost only if a check itself went unanswered, a loaded machine's)
      expect(states.at(-1)).toBe(true);
      expect(session.held).toBe(true);
      await session.close();
    } finally {
      await journal.close();
    }
  });

  it('its backend and the pool’s stopped (the check cannot answer either): the lock is kept, told lost meanwhile and held again after', { timeout: 60_000 }, async () => {
    const journal = new PostgresRunJournal({ connectionString: server.connectionString, schema, connectionTimeoutMs: 1_000 });
    const owner = `frozen-${randomUUID().slice(0, 8)}`;
    try {
      const session = journal.holdOwnerSession(owner, { reconnectWithinMs: 100 });
      await session.ready();
      await journal.getRun('warm-the-pool'); // one pooled connection, idle: the first check is asked on it
      const states = statesOf(session);
      const before = await lockHolder(owner);
      expect(before).toBeDefined();
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      );
      const pids = rows.map((row) => row.pid);
      expect(pids).toContain(before);
      const holders = await stopped(pids, 3_000, owner);
      expect(new Set(holders)).toEqual(new Set([before]));
      await sleep(1_500);
      // the same backend holds it: the connection was never ended
      expect(await lockHolder(owner)).toBe(before);
      expect(states.at(-1)).toBe(true);
      expect(session.held).toBe(true);
      await session.close();
    } finally {
      await journal.close();
    }
  });

  it('a half-open connection (frozen, its backend terminated): noticed, and the lock taken again from another backend', { timeout: 60_000 }, async () => {
    const proxy = await startTcpProxy(server.connectionString);
    const journal = new PostgresRunJournal({ connectionString: proxy.connectionString, schema, connectionTimeoutMs: 1_000 });
    const owner = `half-open-${randomUUID().slice(0, 8)}`;
    try {
      const session = journal.holdOwnerSession(owner, { reconnectWithinMs: 100 });
      await session.ready();
      const states = statesOf(session);
      const { rows } = await admin.query<{ pid: number; port: number }>(
        `SELECT a.pid, a.client_port AS port FROM pg_stat_activity a WHERE a.pid = $1`,
        [await lockHolder(owner)],
      );
      const before = rows[0]!;
      expect(proxy.freeze(before.port)).toBe(true);
      await admin.query('SELECT pg_terminate_backend($1)', [before.pid]);
      // the lock is free on the server; the session hears nothing on its connection
      for (let tries = 0; tries < 100 && !(states.includes(false) && session.held); tries++) await sleep(100);
      const after = await lockHolder(owner);
      expect(after).toBeDefined();
      expect(after).not.toBe(before.pid);
      expect(states).toEqual([true, false, true]);
      await session.close();
    } finally {
      await journal.close();
      await proxy.close();
    }
  });

  it('every open connection of the journal frozen (the session’s and the pool’s) and the session’s backend terminated: the check cannot answer, and the lock is taken again from a new connection', { timeout: 60_000 }, async () => {
    const proxy = await startTcpProxy(server.connectionString);
    const journal = new PostgresRunJournal({ connectionString: proxy.connectionString, schema, connectionTimeoutMs: 1_000 });
    const owner = `all-frozen-${randomUUID().slice(0, 8)}`;
    try {
      const session = journal.holdOwnerSession(owner, { reconnectWithinMs: 100 });
      await session.ready();
      await journal.getRun('warm-the-pool'); // a pooled connection, idle: frozen with the session's
      const states = statesOf(session);
      const before = await lockHolder(owner);
      expect(before).toBeDefined();
      expect(proxy.freeze()).toBe(true);
      await admin.query('SELECT pg_terminate_backend($1)', [before]);
      for (let tries = 0; tries < 100 && !(states.includes(false) && session.held); tries++) await sleep(100);
      const after = await lockHolder(owner);
      expect(after).toBeDefined();
      expect(after).not.toBe(before);
      expect(states.at(-1)).toBe(true);
      await session.close();
    } finally {
      await journal.close();
      await proxy.close();
    }
  });
});
