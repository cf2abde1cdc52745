/**
 * Issue 24 §14: every way a consumer can stop a run settles every promise of `agent.stream()`.
 * For a random stop point (chunks read first), a random stop method (`output.cancel()`,
 * `fullStream.cancel()`, its reader's `cancel()`, `textStream`'s reader's `cancel()`, the call's
 * `abortSignal`) and promises asked for before or after the stop, every promise (`text`,
 * `finishReason`, `usage`, `steps`, `toolCalls`, `toolResults`, `tripwire`, `object`, `result`) is
 * settled one event-loop turn after the stop returned — none is left pending. (The issue reported
 * `cancel()` leaving `text`, `finishReason` and `result` pending; the build at 801340c already
 * settles them — this property keeps it so for every stop method and point.)
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` / 10 (CI 100; the soak run 2,000).
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { Agent } from '../../src/index.js';
import type { AgentOutput } from '../../src/loop/consumers/agent-output.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { checkProperty, expectNone, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from './support/property.js';

const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 10));
const METHODS = ['output.cancel', 'fullStream.cancel', 'fullStream reader.cancel', 'textStream reader.cancel', 'abortSignal'] as const;
type Method = (typeof METHODS)[number];
const PROMISES = ['text', 'finishReason', 'usage', 'steps', 'toolCalls', 'toolResults', 'tripwire', 'object', 'result'] as const;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Reads `count` values (or until the end), then stops the run the way `method` says. */
async function readThenStop(output: AgentOutput, controller: AbortController, method: Method, count: number): Promise<void> {
  if (method === 'fullStream.cancel') {
    await output.fullStream.cancel();
    return;
  }
  if (method === 'textStream reader.cancel') {
    const reader = output.textStream.getReader();
    for (let read = 0; read < count; read++) if ((await reader.read()).done) break;
    await reader.cancel();
    return;
  }
  const reader = output.fullStream.getReader();
  for (let read = 0; read < count; read++) if ((await reader.read()).done) break;
  if (method === 'fullStream reader.cancel') await reader.cancel();
  else if (method === 'output.cancel') output.cancel();
  else controller.abort();
}

describe('stopping a run settles every promise (property)', () => {
  it(
    `random stop point × stop method × promises asked before or after: all settled one turn after the stop (${runs} cases)`,
    async () => {
      const arbitrary = fc.record({
        words: fc.integer({ min: 1, max: 40 }),
        readFirst: fc.integer({ min: 0, max: 50 }),
        method: fc.constantFrom(...METHODS),
        askedBefore: fc.subarray([...PROMISES]),
      });
      await checkProperty(
        'stop settles every promise',
        arbitrary,
        async ({ words, readFirst, method, askedBefore }) => {
          const text = Array.from({ length: words }, (_, index) => `word${index}`).join(' ');
          const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts(text, { chunkSize: 3 }), finishPart('stop')] }) });
          const controller = new AbortController();
          const output = await agent.stream('Talk', { abortSignal: controller.signal });
          const settled = new Map<string, boolean>();
          const watch = (name: (typeof PROMISES)[number]): void => {
            settled.set(name, false);
            (output[name] as Promise<unknown>).then(
              () => settled.set(name, true),
              () => settled.set(name, true),
            );
          };
          for (const name of askedBefore) watch(name);
          await readThenStop(output, controller, method, readFirst);
          for (const name of PROMISES) if (!settled.has(name)) watch(name);
          await nextTurn();
          const pending = [...settled].filter(([, done]) => !done).map(([name]) => name);
          expectNone(pending.length === 0 ? [] : [`pending after ${method} at chunk ${readFirst}: ${pending.join(', ')}`], JSON.stringify({ words, readFirst, method, askedBefore }));
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
