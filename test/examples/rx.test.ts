/**
 * examples/rx/: the Rx backend patterns, driven through the real `@ai-sdk/openai` provider
 * replaying a recorded stream (test/fixtures/providers) with a delay per event, so a run is still
 * streaming when the test cancels it. Cancellation is checked where it costs money: the provider
 * HTTP request's own abort signal.
 */
import { Subject, from, lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, type Processor } from '../../src/index.js';
import { finishPart, mockModel, textParts } from '../../src/testing/index.js';
import { chatSession, type ChatEvent } from '../../examples/rx/chat-session.js';
import { answerAll } from '../../examples/rx/concurrency-limit.js';
import { startSseServer, type RunEnd, type SseServer } from '../../examples/rx/disconnect.js';
import { recording, replayAgent, shortRecording, textOf } from './support/replay-agent.js';

const until = async (condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('chat session (switchMap)', () => {
  it('a new user message aborts the running reply and leaves it out of the history', async () => {
    const { agent, replay, fates } = replayAgent(recording, 3); // ~300 events: about a second per reply
    const messages$ = new Subject<string>();
    const events: ChatEvent[] = [];
    const subscription = chatSession(agent, messages$).subscribe((event) => events.push(event));

    messages$.next('Tell me about holidays');
    await until(() => events.filter((event) => event.turn === 1).length >= 3, 'the first reply to stream');
    messages$.next('Actually, just say hi');
    await until(() => events.some((event) => event.type === 'done'), 'the second reply to finish');
    subscription.unsubscribe();

    expect(replay.requests).toHaveLength(2);
    expect(replay.requests[0]?.signal?.aborted).toBe(true); // the first provider request was aborted…
    expect(fates[0]).toEqual({ bodyRead: false, abortedEarly: true }); // …while its reply was still streaming
    expect(fates[1]).toEqual({ bodyRead: true, abortedEarly: false });
    const turn1 = events.filter((event) => event.turn === 1);
    expect(turn1.every((event) => event.type === 'delta')).toBe(true); // no 'done': cut off
    expect(turn1.length).toBeLessThan(50);
    const done = events.at(-1);
    expect(done).toEqual({ type: 'done', turn: 2, text: textOf(recording), finishReason: 'stop' });
    // the second request carried both user messages and no part of the cut-off reply
    const body = replay.requests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(body.messages.map((message) => message.role)).toEqual(['user', 'user']);
    expect(JSON.stringify(body.messages)).toContain('Actually, just say hi');
  });

  it('a finished reply becomes history for the next turn', async () => {
    const { agent, replay } = replayAgent(shortRecording, 0);
    const events = await lastValueFrom(chatSession(agent, from(['one'])).pipe(toArray()));
    expect(events.at(-1)).toMatchObject({ type: 'done', turn: 1, text: textOf(shortRecording) });
    const messages$ = new Subject<string>();
    const seen: ChatEvent[] = [];
    chatSession(agent, messages$).subscribe((event) => seen.push(event));
    messages$.next('first');
    await until(() => seen.some((event) => event.type === 'done'), 'the first reply');
    messages$.next('second');
    await until(() => seen.filter((event) => event.type === 'done').length === 2, 'the second reply');
    const body = replay.requests.at(-1)?.body as { messages: Array<{ role: string }> };
    expect(body.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('a reply that fails or is blocked ends its turn, stays out of the history, and the session goes on', async () => {
    const model = mockModel({
      error: ({ callIndex }: { callIndex: number }) => (callIndex === 0 ? new Error('provider down') : undefined),
      parts: ({ callIndex }) => [...textParts(callIndex === 1 ? 'the secret is 42' : 'all good'), finishPart('stop')],
    });
    const noSecrets: Processor = {
      id: 'no-secrets',
      processOutputStream: ({ part, abort }) => (part.type === 'text-delta' && part.payload.text.includes('secret') ? abort('no secrets') : part),
    };
    const agent = new Agent({ id: 'session', model, outputProcessors: [noSecrets] });
    const messages$ = new Subject<string>();
    const done: Array<Extract<ChatEvent, { type: 'done' }>> = [];
    chatSession(agent, messages$).subscribe((event) => {
      if (event.type === 'done') done.push(event);
    });
    for (const text of ['one', 'two', 'three']) {
      const before = done.length;
      messages$.next(text);
      await until(() => done.length > before, `the reply to ${text}`);
    }
    expect(done.map((event) => event.finishReason)).toEqual(['error', 'tripwire', 'stop']);
    expect(done.at(-1)?.text).toBe('all good');
    // the failed and the blocked replies never became history
    const lastPrompt = model.calls.at(-1)?.prompt ?? [];
    expect(lastPrompt.map((message) => message.role)).toEqual(['user', 'user', 'user']);
  });
});

describe('request handling with a concurrency limit (mergeMap(…, n))', () => {
  it('never has more than n provider requests open, and answers every request', async () => {
    const { agent, replay, fates, counts } = replayAgent(shortRecording, 10);
    const requests = Array.from({ length: 7 }, (_, index) => ({ id: `r${index}`, prompt: `Question ${index}` }));

    const answers = await lastValueFrom(answerAll(agent, from(requests), 3).pipe(toArray()));

    expect(replay.requests).toHaveLength(7);
    expect(counts.maxOpen).toBe(3); // the bound held, and was used
    expect(counts.open).toBe(0);
    expect(fates.every((fate) => fate.bodyRead && !fate.abortedEarly)).toBe(true);
    expect(answers.map((answer) => answer.id).sort()).toEqual(requests.map((request) => request.id).sort());
    for (const answer of answers) expect(answer).toMatchObject({ text: textOf(shortRecording), finishReason: 'stop' });
  });

  it('a failing request is answered as failed and does not stop the others', async () => {
    const model = mockModel({
      error: ({ options }: { options: { prompt: Array<{ role: string; content: unknown }> } }) =>
        JSON.stringify(options.prompt).includes('bad') ? new Error('provider down') : undefined,
      parts: [...textParts('fine'), finishPart('stop')],
    });
    const agent = new Agent({ id: 'batch', model });
    const requests = ['a', 'bad', 'c', 'd'].map((prompt) => ({ id: prompt, prompt }));
    const answers = await lastValueFrom(answerAll(agent, from(requests), 2).pipe(toArray()));
    expect(Object.fromEntries(answers.map((answer) => [answer.id, answer.finishReason]))).toEqual({ a: 'stop', bad: 'error', c: 'stop', d: 'stop' });
  });

  it('with n = 1 the requests run one after another, in order', async () => {
    const { agent } = replayAgent(shortRecording, 1);
    const answers = await lastValueFrom(answerAll(agent, from([{ id: 'a', prompt: 'a' }, { id: 'b', prompt: 'b' }, { id: 'c', prompt: 'c' }]), 1).pipe(toArray()));
    expect(answers.map((answer) => answer.id)).toEqual(['a', 'b', 'c']);
  });
});

describe('takeUntil(disconnect$): an SSE endpoint stops the run when the client leaves', () => {
  let server: SseServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a client that disconnects mid-reply aborts the provider request', async () => {
    const { agent, replay, fates } = replayAgent(recording, 5);
    const ends: RunEnd[] = [];
    server = await startSseServer(agent, { port: 0, onEnd: (end) => ends.push(end) });
    const client = new AbortController();
    const response = await fetch(`${server.url}/chat?q=${encodeURIComponent('Tell me about holidays')}`, { signal: client.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let received = '';
    while ((received.match(/event: text-delta/g) ?? []).length < 3) received += decoder.decode((await reader.read()).value, { stream: true });
    client.abort(); // the user closed the tab

    await until(() => ends.length === 1, 'the server to notice the disconnect');
    expect(ends).toEqual(['disconnected']);
    expect(replay.requests[0]?.signal?.aborted).toBe(true);
    expect(fates[0]).toEqual({ bodyRead: false, abortedEarly: true });
  });

  it('a client that stays gets the whole run, ending with finish', async () => {
    const { agent, fates } = replayAgent(shortRecording, 0);
    const ends: RunEnd[] = [];
    server = await startSseServer(agent, { port: 0, onEnd: (end) => ends.push(end) });
    const text = await (await fetch(`${server.url}/chat?q=hi`)).text();
    const events = [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    expect(events[0]).toBe('start');
    expect(events.at(-1)).toBe('finish');
    const deltas = [...text.matchAll(/^event: text-delta\ndata: (.+)$/gm)].map((match) => (JSON.parse(match[1] ?? '{}') as { text: string }).text);
    expect(deltas.join('')).toBe(textOf(shortRecording));
    expect(ends).toEqual(['completed']);
    expect(fates).toEqual([{ bodyRead: true, abortedEarly: false }]);
  });
});
