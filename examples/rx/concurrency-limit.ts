/**
 * Request handling with a concurrency limit (`mergeMap(…, n)`): at most `n` agent runs (provider
 * requests) at once; the rest wait in line and start as soon as one finishes.
 *
 * Run it: `npx tsx examples/rx/concurrency-limit.ts` (an offline scripted model).
 */
import { pathToFileURL } from 'node:url';
import { Observable, from, last, map, mergeMap, scan } from 'rxjs';
import { Agent, type ChunkType } from 'rxagent';
import { scriptedModel } from 'rxagent/testing';

/** One incoming request. */
export interface AgentRequest {
  id: string;
  prompt: string;
}

/** Its answer. */
export interface AgentAnswer {
  id: string;
  text: string;
  finishReason: string;
}

/** Answers requests with at most `concurrency` runs in flight; answers come in completion order. */
export function answerAll(agent: Agent, requests$: Observable<AgentRequest>, concurrency: number): Observable<AgentAnswer> {
  return requests$.pipe(
    mergeMap(
      (request) =>
        agent.stream$(request.prompt).pipe(
          // fold the run's chunks into its answer
          scan(
            (answer, chunk: ChunkType) => {
              if (chunk.type === 'text-delta') return { ...answer, text: answer.text + chunk.payload.text };
              if (chunk.type === 'finish') return { ...answer, finishReason: chunk.payload.stepResult.reason };
              if (chunk.type === 'tripwire' || chunk.type === 'error' || chunk.type === 'abort') return { ...answer, finishReason: chunk.type };
              return answer;
            },
            { id: request.id, text: '', finishReason: 'unfinished' } as AgentAnswer,
          ),
          last(),
        ),
      concurrency,
    ),
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const agent = new Agent({
    id: 'batch',
    model: scriptedModel({ wordDelayMs: 20, rules: [], fallback: ({ userText }) => ({ text: `Answer to "${userText}".` }) }),
  });
  const requests = Array.from({ length: 6 }, (_, index) => ({ id: `r${index + 1}`, prompt: `Question ${index + 1}` }));
  answerAll(agent, from(requests), 2)
    .pipe(map((answer) => `${answer.id}: ${answer.text}`))
    .subscribe(console.log);
}
