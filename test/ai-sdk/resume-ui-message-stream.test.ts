/**
 * resumeUIMessageStream / resumeUIMessageStreamResponse over an InMemoryRunJournal holding a
 * realistic run (two steps, a tool call, a rejected retry attempt, a takeover marker): the replay
 * equals toUIMessageStream's encoding, the live response and the replay are byte-identical, and
 * resuming after every single SSE id yields exactly the rest.
 */
import type { UIMessageChunk } from 'ai';
import { from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { runChunks } from './durable-run-fixture.js';
import { resumeUIMessageStream } from '../../src/ai-sdk/resume-ui-message-stream.js';
import { resumeUIMessageStreamResponse } from '../../src/ai-sdk/resume-ui-message-stream-response.js';
import { toUIMessageStream } from '../../src/ai-sdk/to-ui-message-stream.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import type { RunLease } from '../../src/storage/journal/types.js';
import { commit } from '../storage/journal-suite.js';

const runId = 'run-1';

async function journalWith(chunks: ChunkType[], options: { ended?: boolean; batch?: number } = {}) {
  const journal = new InMemoryRunJournal({ pageSize: 5 });
  await journal.createRun({ runId, agentId: 'a', input: null });
  const { lease } = await journal.claim(runId, 'w');
  await appendAll(journal, lease, chunks, options);
  return { journal, lease };
}

async function appendAll(journal: InMemoryRunJournal, lease: RunLease, chunks: ChunkType[], { ended = true, batch = 3 } = {}) {
  const body = ended ? chunks.slice(0, -1) : chunks;
  for (let index = 0; index < body.length; index += batch) await journal.append(lease, body.slice(index, index + batch));
  if (ended) await journal.append(lease, chunks.slice(-1), commit('final'));
}

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of stream as unknown as AsyncIterable<T>) out.push(value);
  return out;
}

const events = (text: string) =>
  text
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => ({ id: /^id: (.*)$/m.exec(event)?.[1], data: /^data: (.*)$/m.exec(event)?.[1] ?? '' }));

describe('resumeUIMessageStream', () => {
  it('replays the run as toUIMessageStream encodes it (the journaled messageId is the message id)', async () => {
    const { journal } = await journalWith(runChunks);
    const replayed = await readAll(resumeUIMessageStream(journal, runId, { unsafeNoAuthorization: true }));
    const original = await readAll(toUIMessageStream(from(runChunks)));
    expect(replayed).toEqual(original);
    expect(replayed[0]).toEqual({ type: 'start', messageId: 'msg-1' });
    const retries = replayed.filter((ui) => ui.type === 'data-rxagent-retry') as Array<UIMessageChunk & { data: { cause: string } }>;
    expect(retries.map((ui) => ui.data.cause)).toEqual(['tripwire', 'takeover']);
  });

  it('with a cursor, yields exactly the rest; errors error the stream', async () => {
    const { journal } = await journalWith(runChunks);
    const full = await readAll(resumeUIMessageStream(journal, runId, { unsafeNoAuthorization: true }));
    const rest = await readAll(resumeUIMessageStream(journal, runId, { unsafeNoAuthorization: true, after: '7:0' }));
    const response = await (await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true })).text();
    const index = events(response).findIndex((event) => event.id === '7:0');
    expect(rest).toEqual(full.slice(index + 1));
    await expect(readAll(resumeUIMessageStream(journal, 'nope', { unsafeNoAuthorization: true }))).rejects.toMatchObject({ name: 'RunNotFoundError' });
    await expect(readAll(resumeUIMessageStream(journal, runId, { unsafeNoAuthorization: true, after: 'x' }))).rejects.toMatchObject({ name: 'JournalCursorError' });
  });
});

describe('resumeUIMessageStreamResponse', () => {
  it('frames id: <seq>:<k> / data: <UI chunk>, ends with [DONE], names the run', async () => {
    const { journal } = await journalWith(runChunks);
    const response = await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-rxagent-run-id')).toBe(runId);
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const text = await response.text();
    const parsed = events(text);
    expect(parsed[0]).toEqual({ id: '1:0', data: JSON.stringify({ type: 'start', messageId: 'msg-1' }) });
    expect(parsed[1]).toEqual({ id: '2:0', data: JSON.stringify({ type: 'start-step' }) });
    expect(parsed.at(-1)).toEqual({ id: undefined, data: '[DONE]' });
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    // entry 15 (the rejected attempt's step-finish) gives reset-step and the retry notice: ids 15:0 and 15:1
    expect(parsed.filter((event) => event.id?.startsWith('15:')).map((event) => JSON.parse(event.data).type)).toEqual(['text-end', 'reset-step', 'data-rxagent-retry']);
  });

  it('the live response and a replay after the run ended are byte-identical', async () => {
    const journal = new InMemoryRunJournal({ pageSize: 4 });
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, runChunks.slice(0, 2));
    const live = (await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true })).text();
    for (let index = 2; index < runChunks.length - 1; index += 2) {
      await journal.append(lease, runChunks.slice(index, Math.min(index + 2, runChunks.length - 1)));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await journal.append(lease, runChunks.slice(-1), commit('final'));
    const replay = await (await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true })).text();
    expect(await live).toBe(replay);
  });

  it('resuming after every SSE id of the run yields exactly the rest of the bytes (and after <seq> the rest after that entry)', async () => {
    const { journal } = await journalWith(runChunks);
    const full = await (await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true })).text();
    const parsed = full.split('\n\n').filter((event) => event !== '').map((event) => `${event}\n\n`);
    let checked = 0;
    for (const [index, event] of parsed.entries()) {
      const id = /^id: (.*)$/m.exec(event)?.[1];
      if (id === undefined) continue;
      const rest = await (await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true, after: id })).text();
      expect(rest, `after ${id}`).toBe(parsed.slice(index + 1).join(''));
      checked += 1;
    }
    expect(checked).toBe(parsed.length - 1);
    const afterEntry = await (await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true, after: '11' })).text();
    expect(afterEntry).toBe(parsed.slice(parsed.findIndex((event) => event.startsWith('id: 12:'))).join(''));
  });

  it('a resumed response of a live run goes on until the terminal chunk', async () => {
    const { journal, lease } = await journalWith(runChunks.slice(0, 13), { ended: false });
    const pending = (await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true, after: '12:0' })).text();
    await appendAll(journal, lease, runChunks.slice(13));
    const rest = await pending;
    const full = await (await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true })).text();
    expect(full.endsWith(rest)).toBe(true);
    expect(events(rest)[0]?.id).toBe('13:0');
  });

  it.each([
    ['nope', undefined, 404, 'RunNotFoundError'],
    [runId, 'abc', 400, 'JournalCursorError'],
    [runId, '3:x', 400, 'JournalCursorError'],
    [runId, '-1:0', 400, 'JournalCursorError'],
    [runId, '99:0', 400, 'JournalCursorError'],
    [runId, '0:0', 400, 'JournalCursorError'],
  ])('run %s, cursor %s → %i %s as JSON before the first byte', async (id, after, status, name) => {
    const { journal } = await journalWith(runChunks);
    const response = await resumeUIMessageStreamResponse(journal, id, after === undefined ? { unsafeNoAuthorization: true } : { unsafeNoAuthorization: true, after });
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { name: string } }).error.name).toBe(name);
  });
});
