/** toUIMessageStream `release`: 'live' streams every step; 'accepted' sends a step's parts only once the run finished. */
import { describe, expect, it } from 'vitest';
import type { UIMessageChunk } from 'ai';
import { Subject, concat, defer, of, throwError } from 'rxjs';
import { z } from 'zod';
import { toUIMessageStream, toUIMessageStreamResponse, type ToUIMessageStreamOptions } from '../../src/ai-sdk/index.js';
import { Agent } from '../../src/loop/agent.js';
import { isOptionError } from '../../src/loop/run/validate-options.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { assemble, readAll, sloppyThenCarefulAgent } from './ui-stream-helpers.js';

/** A two-step tool run: "Let me look that up." + a lookup, then the answer with an address. */
function toolLoopAgent(outputProcessors: Processor[] = []): Agent {
  const model = mockModel({
    parts: ({ callIndex }) =>
      callIndex === 0
        ? [...textParts('Let me look that up.'), ...toolCallParts('lookupOrder', { orderId: '123' }), finishPart('tool-calls')]
        : [...textParts('It ships to 12 Elm Street.', { id: 'text-2' }), finishPart('stop')],
  });
  return new Agent({
    id: 'support',
    model,
    outputProcessors,
    tools: {
      lookupOrder: {
        inputSchema: z.object({ orderId: z.string() }),
        execute: async ({ orderId }: { orderId: string }) => ({ orderId, status: 'shipped' }),
      },
    },
  });
}

/** Blocks the whole reply once the run is over (after the tool loop). */
const addressGuard: Processor = {
  id: 'address-guard',
  processOutputResult: ({ result, abort }) => {
    if (result.steps.some((step) => step.text.includes('Elm Street'))) abort('Addresses are private.');
  },
};

const types = (chunks: UIMessageChunk[]): string[] => chunks.map((c) => c.type);

/** Lets every queued microtask run (what a synchronous source enqueued reaches a pending read). */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const without = (chunks: UIMessageChunk[], type: string): UIMessageChunk[] => chunks.filter((c) => c.type !== type);

describe("toUIMessageStream release: a processOutputResult block after a tool loop", () => {
  it("'live' (default, unchanged): the blocked last step goes, the earlier step stays beside data-tripwire", async () => {
    const { chunks, message, errors } = await assemble(toUIMessageStream(toolLoopAgent([addressGuard]).stream$('Where is order 123?'), { messageId: 'm' }));
    expect(types(chunks).slice(-4)).toEqual(['reset-step', 'data-tripwire', 'error', 'finish']);
    expect(errors).toEqual(['Addresses are private.']);
    const parts = message?.parts ?? [];
    expect(parts.map((part) => part.type)).toEqual(['step-start', 'text', 'tool-lookupOrder', 'step-start', 'data-tripwire']);
    expect(parts[1]).toMatchObject({ type: 'text', text: 'Let me look that up.' });
    expect(JSON.stringify(message)).not.toContain('Elm Street');
  });

  it("'accepted': the client's message holds no text of any step, only the tripwire part", async () => {
    const { chunks, message, errors } = await assemble(
      toUIMessageStream(toolLoopAgent([addressGuard]).stream$('Where is order 123?'), { messageId: 'm', release: 'accepted' }),
    );
    expect(chunks).toEqual([
      { type: 'start', messageId: 'm' },
      expect.objectContaining({ type: 'data-tripwire', data: { reason: 'Addresses are private.', retry: false, metadata: null, processorId: 'address-guard' } }),
      { type: 'error', errorText: 'Addresses are private.' },
      { type: 'finish', finishReason: 'other' },
    ]);
    expect(errors).toEqual(['Addresses are private.']);
    expect(message?.id).toBe('m');
    expect(message?.parts.map((part) => part.type)).toEqual(['data-tripwire']);
    const shown = JSON.stringify(chunks);
    expect(shown).not.toContain('Let me look');
    expect(shown).not.toContain('Elm Street');
    expect(shown).not.toContain('lookupOrder');
  });

  it("'accepted' with tripwireError: false: start, data-tripwire and an 'other' finish", async () => {
    const chunks = await readAll(
      toUIMessageStream(toolLoopAgent([addressGuard]).stream$('Where is order 123?'), { messageId: 'm', release: 'accepted', tripwireError: false }),
    );
    expect(types(chunks)).toEqual(['start', 'data-tripwire', 'finish']);
  });
});

describe("toUIMessageStream release: 'accepted'", () => {
  it('a finished run gives the same message and chunks as live', async () => {
    const options: ToUIMessageStreamOptions = { messageId: 'm' };
    const live = await assemble(toUIMessageStream(toolLoopAgent().stream$('Where is order 123?'), options));
    const accepted = await assemble(toUIMessageStream(toolLoopAgent().stream$('Where is order 123?'), { ...options, release: 'accepted' }));
    expect(live.chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(accepted.chunks).toEqual(live.chunks);
    expect(accepted.message).toEqual(live.message);
    expect(accepted.message?.parts.map((part) => part.type)).toEqual(['step-start', 'text', 'tool-lookupOrder', 'step-start', 'text']);
  });

  it('shows only the accepted retry attempt: the rejected one is dropped while held, no reset-step', async () => {
    const agent = sloppyThenCarefulAgent();
    const { chunks, message } = await assemble(toUIMessageStream(agent.stream$('Answer'), { messageId: 'm', release: 'accepted' }));

    expect(types(chunks)).not.toContain('reset-step');
    expect(JSON.stringify(chunks)).not.toContain('sloppy');
    // the transient notice still goes out at once (a UI may say "retrying…"), before any part
    expect(chunks[1]).toEqual({
      type: 'data-rxagent-retry',
      transient: true,
      data: { stepNumber: 0, cause: 'tripwire', reason: 'Be careful.', processorId: 'strict', discardedPartIds: ['text-1'] },
    });
    expect(types(chunks).slice(2)).toEqual(['start-step', 'text-start', 'text-delta', 'text-delta', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(message?.parts.map((part) => part.type)).toEqual(['step-start', 'text']);
    expect(message?.parts[1]).toMatchObject({ type: 'text', text: 'A careful answer.' });

    const live = await assemble(toUIMessageStream(new Agent({ id: 'a', model: mockModel({ parts: [...textParts('A careful answer.'), finishPart('stop')] }) }).stream$('Answer'), { messageId: 'm' }));
    expect(message).toEqual(live.message);
  });

  it('sends start and transient data at once, holds every step chunk until finish', async () => {
    const source = new Subject<ChunkType>();
    const reader = toUIMessageStream(source, { messageId: 'm', release: 'accepted' }).getReader();
    source.next(chunk.start());
    expect((await reader.read()).value).toEqual({ type: 'start', messageId: 'm' });

    source.next(chunk.stepStart());
    source.next(chunk.textStart());
    source.next(chunk.textDelta('Hello'));
    source.next(chunk.data('data-progress', { percent: 50 }, { transient: true }));
    expect((await reader.read()).value).toEqual({ type: 'data-progress', data: { percent: 50 }, transient: true });

    let arrived = false;
    const next = reader.read().then((result) => {
      arrived = true;
      return result;
    });
    source.next(chunk.textEnd());
    source.next(chunk.stepFinish());
    await flush();
    expect(arrived).toBe(false);

    source.next(chunk.finish());
    const rest: UIMessageChunk[] = [];
    for (let result = await next; !result.done; result = await reader.read()) rest.push(result.value);
    expect(types(rest)).toEqual(['start-step', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
  });

  it('drops held parts when the run fails: a TripWire notification, an error chunk, an abort', async () => {
    const opened: ChunkType[] = [chunk.start(), chunk.stepStart(), chunk.textStart(), chunk.textDelta('Hi')];
    const tripped = await readAll(
      toUIMessageStream(concat(of(...opened), throwError(() => new TripWire('nope', {}, 'guard'))), { release: 'accepted', tripwireError: false }),
    );
    expect(types(tripped)).toEqual(['start', 'data-tripwire', 'finish']);

    const failed = await readAll(toUIMessageStream(of(...opened, chunk.error(new Error('secret'))), { release: 'accepted' }));
    expect(without(failed, 'start')).toEqual([
      { type: 'error', errorText: 'An error occurred.' },
      { type: 'finish', finishReason: 'error' },
    ]);

    const aborted = await readAll(toUIMessageStream(of(...opened, chunk.abort('stopped')), { release: 'accepted' }));
    expect(types(aborted)).toEqual(['start', 'abort']);

    // a source that completes without a terminal chunk accepted nothing either
    const unfinished = await readAll(toUIMessageStream(of(...opened), { release: 'accepted' }));
    expect(types(unfinished)).toEqual(['start']);
  });

  it('rejects an invalid release value with a TypeError before subscribing the run', () => {
    let subscribed = 0;
    const run$ = defer(() => {
      subscribed++;
      return of(chunk.start());
    });
    const bad = { release: 'acepted' } as unknown as ToUIMessageStreamOptions;
    expect(() => toUIMessageStream(run$, bad)).toThrow(TypeError);
    expect(() => toUIMessageStream(run$, bad)).toThrow(`toUIMessageStream: options.release must be 'live' or 'accepted' (got the string "acepted").`);
    expect(() => toUIMessageStreamResponse(run$, { release: true } as unknown as ToUIMessageStreamOptions)).toThrow('(got boolean).');
    let caught: unknown;
    try {
      toUIMessageStream(run$, bad);
    } catch (error) {
      caught = error;
    }
    expect(isOptionError(caught)).toBe(true);
    expect(subscribed).toBe(0);
    // undefined is the default
    expect(() => toUIMessageStream(run$, { release: undefined })).not.toThrow();
  });
});
