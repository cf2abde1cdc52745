/**
 * `agent.stream()` reads its call options once: the retry budgets its `textStream` holds text by
 * are the ones the run retries with. Options whose getters answer differently on each read (or
 * throw) must not give the text stream one answer and the run another: a text stream that thinks
 * no retry can happen shows a rejected attempt's text live.
 */
import { from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent, TripWire } from '../../src/index.js';
import type { AgentCallOptions } from '../../src/loop/agent-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { textParts } from '../../src/testing/model-parts.js';

async function readAll(stream: ReadableStream<string>): Promise<string[]> {
  const values: string[] = [];
  for await (const value of stream) values.push(value);
  return values;
}

/** A model that says `first` on its first call and `second` after. */
function twoAnswers(first: string, second: string): ReturnType<typeof mockModel> {
  let calls = 0;
  return mockModel({ stream: () => from(textParts(calls++ === 0 ? first : second)) });
}

/** Rejects the first attempt (a tripwire with a retry), accepts the rest. */
const rejectFirst: Processor = {
  id: 'reject-first',
  processOutputStep: ({ retryCount, abort }) => (retryCount === 0 ? abort('try again', { retry: true }) : undefined),
};

describe('stream() reads its call options once', () => {
  it('a maxProcessorRetries getter that says 0 on its first read and 1 after: the text stream and the run agree (no retry: the text stream ends at the tripwire, never the rejected text and then the retried)', async () => {
    let reads = 0;
    const options = {
      get maxProcessorRetries() {
        return reads++ === 0 ? 0 : 1;
      },
    } as AgentCallOptions;
    const agent = new Agent({ id: 'a', model: twoAnswers('REJECTED', 'accepted'), outputProcessors: [rejectFirst] });
    const output = await agent.stream('hi', options);
    // read once: no retry budget, for the run as for the text stream — the run ends at the
    // tripwire, and the text stream (live, as no retry can come) errors with it. Before, the text
    // stream showed the rejected attempt's text and then the retried one's: 'REJECTEDaccepted'.
    const shown: string[] = [];
    const reader = output.textStream.getReader();
    const failure = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return undefined;
        shown.push(value);
      }
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TripWire);
    // (an errored web stream drops what it had queued: a reader may see the text or not)
    expect(['', 'REJECTED']).toContain(shown.join(''));
    expect((await output.tripwire)?.reason).toBe('try again');
    expect(reads).toBe(1);
  });

  it('the same getter the other way round (1, then 0): the run retries as the text stream expects, or not at all', async () => {
    let reads = 0;
    const options = {
      get maxProcessorRetries() {
        return reads++ === 0 ? 1 : 0;
      },
    } as AgentCallOptions;
    const agent = new Agent({ id: 'a', model: twoAnswers('REJECTED', 'accepted'), outputProcessors: [rejectFirst] });
    const output = await agent.stream('hi', options);
    const texts = await readAll(output.textStream);
    expect(texts.join('')).toBe('accepted');
    expect(await output.text).toBe('accepted');
    expect(reads).toBe(1);
  });

  it('options that throw on reading: stream() still returns, and the run ends with that error as its error chunk', async () => {
    const thrown = new Error('options unreadable');
    const options = new Proxy(
      {},
      {
        get() {
          throw thrown;
        },
        ownKeys() {
          throw thrown;
        },
      },
    ) as AgentCallOptions;
    const agent = new Agent({ id: 'a', model: twoAnswers('one', 'two') });
    const output = await agent.stream('hi', options);
    const chunks: string[] = [];
    for await (const chunk of output.fullStream) chunks.push(chunk.type);
    expect(chunks).toEqual(['start', 'error']);
    await expect(output.text).rejects.toMatchObject({ name: 'AgentRunError', cause: thrown });
  });
});
