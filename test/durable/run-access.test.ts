/**
 * Readers only for their owner: every reader (byte replay, UI resume as a stream and as a
 * response) requires an authorization; a caller `authorize` refuses gets exactly what an unknown
 * run gets (404, no id probing); signed run tokens open one run of one owner until they expire.
 * (`RunWorker.cancel`, on PostgreSQL: run-worker.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { resumeUIMessageStream, resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
import {
  InMemoryRunJournal,
  MissingAuthorizationError,
  RUN_TOKEN_HEADER,
  createRunToken,
  journalStreamResponse,
  runTokenAuthorization,
  verifyRunToken,
  type RunAccess,
  type RunAuthorize,
} from 'rxagent/durable';
import { commit, delta, finish, start } from '../storage/journal-suite.js';

const secret = 'test-secret-of-at-least-32-bytes-0123456789';
const NOW = 1_800_000_000_000;

async function journalWithRuns() {
  const journal = new InMemoryRunJournal();
  for (const [runId, resourceId] of [['run-alice', 'alice'], ['run-bob', 'bob']] as const) {
    await journal.createRun({ runId, agentId: 'a', threadId: `t-${resourceId}`, resourceId, input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, [start(runId), delta(runId, 'hi')]);
    await journal.append(lease, [finish(runId)], commit('final'));
  }
  return journal;
}

/** The three readers as HTTP answers (the UI stream's error becomes its status). */
const readers: Record<string, (journal: InMemoryRunJournal, runId: string, access: RunAccess) => Promise<{ status: number; body: string }>> = {
  journalStreamResponse: async (journal, runId, access) => {
    const response = await journalStreamResponse(journal, runId, access);
    return { status: response.status, body: await response.text() };
  },
  resumeUIMessageStreamResponse: async (journal, runId, access) => {
    const response = await resumeUIMessageStreamResponse(journal, runId, access);
    return { status: response.status, body: await response.text() };
  },
  resumeUIMessageStream: async (journal, runId, access) => {
    const stream = resumeUIMessageStream(journal, runId, access);
    try {
      const chunks: unknown[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      return { status: 200, body: JSON.stringify(chunks) };
    } catch (error) {
      return { status: (error as Error).name === 'RunNotFoundError' ? 404 : 500, body: (error as Error).message };
    }
  },
};

/** "the owner's session": the request's x-user header is the user. */
const bySession: RunAuthorize = (run, request) => request?.headers.get('x-user') === run.resourceId;
const as = (user: string, url = 'http://app/runs'): Request => new Request(url, { headers: { 'x-user': user } });

describe.each(Object.keys(readers))('%s', (name) => {
  const read = readers[name]!;

  it("answers another owner's run exactly as an unknown run: 404", async () => {
    const journal = await journalWithRuns();
    const own = await read(journal, 'run-alice', { request: as('alice'), authorize: bySession });
    expect(own.status).toBe(200);
    expect(own.body).toContain('hi');
    const other = await read(journal, 'run-bob', { request: as('alice'), authorize: bySession });
    const unknown = await read(journal, 'run-nobody', { request: as('alice'), authorize: bySession });
    expect(other.status).toBe(404);
    expect(other.body).not.toContain('hi');
    expect(other.body.replace('run-bob', 'ID')).toBe(unknown.body.replace('run-nobody', 'ID'));
    // an authorize that throws refuses too
    const throwing = await read(journal, 'run-alice', { request: as('alice'), authorize: () => Promise.reject(new Error('session store down')) });
    expect(throwing.status).toBe(404);
  });

  it('without authorize or unsafeNoAuthorization is a MissingAuthorizationError, before anything is read', async () => {
    const journal = await journalWithRuns();
    for (const bad of [undefined, {}, { request: as('alice') }, { authorize: 'yes' }, { unsafeNoAuthorization: 1 }, { authorize: bySession, unsafeNoAuthorization: true }]) {
      let caught: unknown;
      try {
        await read(journal, 'run-alice', bad as unknown as RunAccess);
      } catch (error) {
        caught = error;
      }
      expect(MissingAuthorizationError.isInstance(caught), `${name} with ${JSON.stringify(bad)}`).toBe(true);
      expect((caught as MissingAuthorizationError).what).toBe(name);
    }
    expect((await read(journal, 'run-bob', { unsafeNoAuthorization: true })).status).toBe(200);
  });

  it('with run tokens: the owner’s token for this run opens it; expired, tampered, other-run, other-owner or foreign-secret tokens get 404', async () => {
    const journal = await journalWithRuns();
    const now = () => NOW;
    const authorize = runTokenAuthorization({ secret, now });
    const token = (options: Partial<Parameters<typeof createRunToken>[0]> = {}) =>
      createRunToken({ runId: 'run-alice', resourceId: 'alice', expiresInSeconds: 60, secret, now, ...options });
    const withToken = (value: string, how: 'header' | 'query' = 'header') =>
      how === 'header'
        ? new Request('http://app/runs/run-alice', { headers: { [RUN_TOKEN_HEADER]: value } })
        : new Request(`http://app/runs/run-alice?token=${encodeURIComponent(value)}`);
    expect((await read(journal, 'run-alice', { request: withToken(token()), authorize })).status).toBe(200);
    expect((await read(journal, 'run-alice', { request: withToken(token(), 'query'), authorize })).status).toBe(200);
    const valid = token();
    const [version, body, mac] = valid.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ r: 'run-bob', o: 'bob', e: NOW / 1000 + 60 })).toString('base64url');
    const refused = {
      expired: token({ now: () => NOW - 61_000 }),
      'tampered claims': `${version}.${forged}.${mac}`,
      'tampered mac': `${version}.${body}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`,
      'other run': token({ runId: 'run-bob' }),
      'other owner': token({ resourceId: 'bob' }),
      'other secret': token({ secret: 'another-secret-of-at-least-32-bytes-xxxxxxx' }),
      garbage: 'not-a-token',
      none: '',
    };
    for (const [what, value] of Object.entries(refused)) {
      expect((await read(journal, 'run-alice', { request: withToken(value), authorize })).status, what).toBe(404);
    }
    // bob's valid token opens bob's run only
    const bobs = token({ runId: 'run-bob', resourceId: 'bob' });
    expect((await read(journal, 'run-bob', { request: withToken(bobs), authorize })).status).toBe(200);
    expect((await read(journal, 'run-alice', { request: withToken(bobs), authorize })).status).toBe(404);
  });
});

describe('run tokens', () => {
  it('verifyRunToken gives the claims of a valid token and null once it expired', () => {
    const token = createRunToken({ runId: 'r1', resourceId: 'u1', expiresInSeconds: 10, secret, now: () => NOW });
    expect(verifyRunToken(token, { secret, now: () => NOW + 9_999 })).toEqual({ runId: 'r1', resourceId: 'u1', expiresAt: NOW / 1000 + 10 });
    expect(verifyRunToken(token, { secret, now: () => NOW + 10_000 })).toBeNull();
    expect(verifyRunToken(`${token}x`, { secret, now: () => NOW })).toBeNull();
    expect(verifyRunToken(undefined, { secret })).toBeNull();
  });

  it('refuses bad input with a TypeError naming it', () => {
    expect(() => createRunToken({ runId: 'r1', resourceId: 'u1', expiresInSeconds: 10, secret: 'short' })).toThrow(/secret must be .* at least 32 bytes/);
    expect(() => createRunToken({ runId: '', resourceId: 'u1', expiresInSeconds: 10, secret })).toThrow(/runId/);
    expect(() => createRunToken({ runId: 'r1', resourceId: 'u1', expiresInSeconds: 0, secret })).toThrow(/expiresInSeconds/);
    expect(() => runTokenAuthorization({ secret: '' })).toThrow(TypeError);
  });

  it('a run without an owner is never opened by a token', async () => {
    const journal = new InMemoryRunJournal();
    await journal.createRun({ runId: 'anon', agentId: 'a', input: null });
    const run = (await journal.getRun('anon'))!;
    const token = createRunToken({ runId: 'anon', resourceId: 'x', expiresInSeconds: 60, secret });
    expect(await runTokenAuthorization({ secret })(run, new Request('http://app/', { headers: { [RUN_TOKEN_HEADER]: token } }))).toBe(false);
  });
});
