/**
 * journalStreamResponse over an InMemoryRunJournal: SSE framing (`id: <seq>`, the journal's text
 * verbatim), cursors from `after`, `Last-Event-ID` and `?after=`, the statuses of bad requests,
 * live tail to the terminal chunk, and a cancelled body.
 */
import { describe, expect, it } from 'vitest';
import { journalStreamResponse } from '../../src/durable/journal-stream-response.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import { commit, delta, finish, start } from '../storage/journal-suite.js';

async function runWith(count: number, ended = true) {
  const journal = new InMemoryRunJournal({ pageSize: 4 });
  await journal.createRun({ runId: 'r', agentId: 'a', input: null });
  const { lease } = await journal.claim('r', 'w');
  await journal.append(lease, [start('r'), ...Array.from({ length: count }, (_, index) => delta('r', `${index}`))]);
  if (ended) await journal.append(lease, [finish('r')], commit('final'));
  return { journal, lease };
}

describe('journalStreamResponse', () => {
  it('frames every entry as id: <seq> / data: <the journal text>, and ends after the terminal chunk', async () => {
    const { journal } = await runWith(9);
    const response = await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-rxagent-run-id')).toBe('r');
    const text = await response.text();
    const events = text.trim().split('\n\n');
    expect(events).toHaveLength(11);
    expect(events[0]).toBe(`id: 1\ndata: ${JSON.stringify(start('r'))}`);
    expect(events[5]).toBe(`id: 6\ndata: ${JSON.stringify(delta('r', '4'))}`);
    expect(events[10]).toMatch(/^id: 11\ndata: \{"type":"finish"/);
  });

  it('takes the cursor from after, else Last-Event-ID, else ?after=', async () => {
    const { journal } = await runWith(3);
    const ids = async (response: Response) => [...(await response.text()).matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(await ids(await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true, after: 3 }))).toEqual([4, 5]);
    expect(await ids(await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true, after: '4' }))).toEqual([5]);
    const request = new Request('http://x/runs/r?after=1', { headers: { 'last-event-id': '2' } });
    expect(await ids(await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true, request }))).toEqual([3, 4, 5]);
    expect(await ids(await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true, request: new Request('http://x/runs/r?after=1') }))).toEqual([2, 3, 4, 5]);
    expect(await ids(await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true, after: null, request: new Request('http://x/') }))).toEqual([1, 2, 3, 4, 5]);
  });

  it.each([
    ['-1', 400, 'JournalCursorError'],
    ['1.5', 400, 'JournalCursorError'],
    ['3:1', 400, 'JournalCursorError'],
    ['abc', 400, 'JournalCursorError'],
    ['99', 400, 'JournalCursorError'],
    [-1, 400, 'JournalCursorError'],
  ] as const)('cursor %s → %i %s before the first byte, as JSON', async (after, status, name) => {
    const { journal } = await runWith(3);
    const response = await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true, after });
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as { error: { name: string; message: string } };
    expect(body.error.name).toBe(name);
    expect(body.error.message).toContain('lastSeq 5');
  });

  it('an unknown run → 404 RunNotFoundError', async () => {
    const { journal } = await runWith(1);
    const response = await journalStreamResponse(journal, 'missing', { unsafeNoAuthorization: true });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { name: 'RunNotFoundError', message: 'Run "missing" does not exist' } });
  });

  it('follows a live run until its terminal chunk', async () => {
    const { journal, lease } = await runWith(1, false);
    const response = await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true, after: 2 });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    await journal.append(lease, [delta('r', 'live')]);
    const first = await reader.read();
    expect(first.value).toBe(`id: 3\ndata: ${JSON.stringify(delta('r', 'live'))}\n\n`);
    await journal.append(lease, [finish('r')], commit('final'));
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += part.value;
    expect(rest).toMatch(/^id: 4\ndata: \{"type":"finish"/);
  });

  it('a cancelled body unsubscribes the reader (the run goes on, a new request resumes)', async () => {
    const { journal, lease } = await runWith(1, false);
    const response = await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true });
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    await journal.append(lease, [delta('r', 'after'), finish('r')], commit('final'));
    const again = await (await journalStreamResponse(journal, 'r', { unsafeNoAuthorization: true, after: 2 })).text();
    expect(again).toContain('id: 3\n');
    expect(again).toContain('id: 4\n');
  });
});
