/**
 * `providerMetadata` holding `undefined` inside an array (`{ acme: { list: [1, undefined] } }`):
 * JSON writes it as `null`, and memory's message schema refuses it (`InvalidMessageError`) — after
 * the client had seen the chunk. Refused at the seam instead, as any other metadata memory would
 * not store as it is: an `InvalidModelResponseError` naming the part, with or without memory,
 * streamed or generated, whatever part carries it and however deep.
 */
import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent, InvalidModelResponseError } from '../../src/index.js';
import { Memory } from '../../src/memory/memory.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';

const PROVIDER = 'acme';

function modelOf(metadata: Record<string, unknown>, where: 'text-end' | 'finish'): object {
  const parts = [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'Fine.' },
    { type: 'text-end', id: 't', ...(where === 'text-end' ? { providerMetadata: metadata } : {}) },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }, ...(where === 'finish' ? { providerMetadata: metadata } : {}) },
  ];
  return {
    specificationVersion: 'v4',
    provider: PROVIDER,
    modelId: 'm',
    supportedUrls: {},
    doGenerate: async () => ({ content: [{ type: 'text', text: 'Fine.', ...(where === 'text-end' ? { providerMetadata: metadata } : {}) }], finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }, ...(where === 'finish' ? { providerMetadata: metadata } : {}), warnings: [] }),
    doStream: async () => ({
      stream: new ReadableStream({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  };
}

/** `[…, undefined, …]` somewhere in a provider's entry, up to a few levels deep. */
const withHole = fc
  .tuple(fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.constant(null)), { maxLength: 3 }), fc.nat({ max: 3 }), fc.nat({ max: 3 }))
  .map(([items, at, depth]) => {
    const list: unknown[] = [...items];
    list.splice(Math.min(at, list.length), 0, undefined);
    let value: unknown = list;
    for (let level = 0; level < depth; level++) value = level % 2 === 0 ? { inner: value } : [value];
    return { [PROVIDER]: { list: value } };
  });

describe('providerMetadata with undefined inside an array', () => {
  it('is an InvalidModelResponseError at the seam, streamed or generated, with or without memory, and the client never sees it', async () => {
    await fc.assert(
      fc.asyncProperty(withHole, fc.constantFrom<'text-end' | 'finish'>('text-end', 'finish'), fc.boolean(), fc.constantFrom<'doStream' | 'doGenerate'>('doStream', 'doGenerate'), async (metadata, where, remembered, generateWith) => {
        const storage = new InMemoryStorage();
        const agent = new Agent({ id: 'a', model: modelOf(metadata, where) as never, maxSteps: 1, ...(remembered ? { memory: new Memory({ storage }) } : {}) });
        const chunks = await lastValueFrom(agent.stream$('Hello', { generateWith, ...(remembered ? { memory: { thread: 't', resource: 'r' } } : {}) }).pipe(toArray()));
        const last = chunks.at(-1);
        const error = last?.type === 'error' ? last.payload.error : undefined;
        expect(InvalidModelResponseError.isInstance(error), `${chunks.map((chunk) => chunk.type).join(',')}: ${String((error as Error | undefined)?.message)}`).toBe(true);
        expect((error as InvalidModelResponseError).problem).toMatch(/providerMetadata/);
        // no chunk carried the metadata to the client
        expect(chunks.some((chunk) => JSON.stringify(chunk).includes('"list"'))).toBe(false);
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});
