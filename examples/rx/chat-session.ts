/**
 * A chat session where a new user message cancels the reply still streaming (`switchMap`).
 *
 * Each user message starts a run over the conversation so far. When the next message arrives
 * before the reply finished, `switchMap` unsubscribes the running reply: rxagent aborts its
 * provider request and tools, and the cut-off reply is left out of the history.
 *
 * Run it: `npx tsx examples/rx/chat-session.ts` (an offline scripted model).
 */
import { pathToFileURL } from 'node:url';
import { Observable, concat, defer, filter, map, of, switchMap, timer } from 'rxjs';
import type { ModelMessage } from 'ai';
import { Agent, isTextDeltaChunk, type ChunkType } from 'rxagent';
import { scriptedModel } from 'rxagent/testing';

/**
 * What the session shows: text as it streams, then the end of each reply. `finishReason` is the
 * model's (`'stop'`, …) or how the run ended otherwise (`'tripwire'`, `'error'`, `'abort'`, with
 * `text: ''`).
 */
export type ChatEvent =
  | { type: 'delta'; turn: number; text: string }
  | { type: 'done'; turn: number; text: string; finishReason: string };

const isTerminal = (chunk: ChunkType): boolean =>
  chunk.type === 'finish' || chunk.type === 'tripwire' || chunk.type === 'error' || chunk.type === 'abort';

/**
 * Turns a stream of user messages into a stream of reply events. Only the latest message's reply
 * streams; finished replies become history for the next turn.
 */
export function chatSession(agent: Agent, userMessages$: Observable<string>): Observable<ChatEvent> {
  return defer(() => {
    const history: ModelMessage[] = []; // per subscription: each session has its own conversation
    let turn = 0;
    return userMessages$.pipe(
      switchMap((text) => {
        const thisTurn = ++turn;
        history.push({ role: 'user', content: text });
        return agent.stream$([...history]).pipe(
          filter((chunk) => isTextDeltaChunk(chunk) || isTerminal(chunk)),
          map((chunk): ChatEvent => {
            if (isTextDeltaChunk(chunk)) return { type: 'delta', turn: thisTurn, text: chunk.payload.text };
            // only an accepted reply becomes history (not one a guard blocked, or that failed)
            if (chunk.type !== 'finish') return { type: 'done', turn: thisTurn, text: '', finishReason: chunk.type };
            history.push({ role: 'assistant', content: chunk.payload.output.text });
            return { type: 'done', turn: thisTurn, text: chunk.payload.output.text, finishReason: chunk.payload.stepResult.reason };
          }),
        );
      }),
    );
  });
}

/** An offline model that talks slowly enough to be interrupted. */
export function demoAgent(wordDelayMs = 40): Agent {
  return new Agent({
    id: 'chat-session',
    model: scriptedModel({
      wordDelayMs,
      rules: [{ match: /story/, reply: { text: 'Once upon a time there was a very long story that nobody got to hear the end of, because' } }],
      fallback: ({ userText }) => ({ text: `Sure, let's talk about ${userText.toLowerCase().replace(/[?.!]$/, '')} instead.` }),
    }),
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // The user asks for a story, then changes their mind 300 ms later.
  const messages$ = concat(of('Tell me a story'), timer(300).pipe(map(() => 'The weather?')));
  chatSession(demoAgent(), messages$).subscribe((event) => {
    if (event.type === 'delta') process.stdout.write(event.text);
    else console.log(`\n[turn ${event.turn} done: ${event.finishReason}]`);
  });
}
