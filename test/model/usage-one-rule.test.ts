/**
 * One usage rule at the seam, streamed or generated: a provider's `usage` that is no object
 * (`null`, missing, a string, a number) is unknown as a whole — every count `undefined`, the
 * step and the run kept — for a streamed `finish` and a `doGenerate` answer alike, on V4, V3 and
 * V2 models (docs/agent.md, "Token usage"). Before, `doGenerate` with `usage: null` was an
 * `InvalidModelResponseError` (and V2's adapter refused it streamed too), while a V4 streamed
 * `finish` with `usage: null` gave unknown counts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/index.js';

type Version = 'v2' | 'v3' | 'v4';

const reasonOf = (version: Version): unknown => (version === 'v2' ? 'stop' : { unified: 'stop', raw: 'stop' });

function modelOf(version: Version, usage: unknown, withUsage: boolean): object {
  const finish = { type: 'finish', finishReason: reasonOf(version), ...(withUsage ? { usage } : {}) };
  const text = [
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'Fine.' },
    { type: 'text-end', id: 't' },
  ];
  return {
    specificationVersion: version,
    provider: 'acme',
    modelId: 'm',
    supportedUrls: {},
    doGenerate: async () => ({ content: [{ type: 'text', text: 'Fine.' }], finishReason: reasonOf(version), ...(withUsage ? { usage } : {}), warnings: [] }),
    doStream: async () => ({
      stream: new ReadableStream({
        start(controller) {
          for (const part of [{ type: 'stream-start', warnings: [] }, ...text, finish]) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  };
}

const notAnObject = fc.oneof(
  fc.constantFrom<[unknown, boolean]>([null, true], [undefined, true], [undefined, false], ['10', true], [5, true], [true, true]),
);

describe('usage that is no object: unknown as a whole, streamed and generated alike', () => {
  it('V4, V3 and V2; doGenerate and doStream; the run finishes with its text and unknown counts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<Version>('v4', 'v3', 'v2'), notAnObject, async (version, [usage, withUsage]) => {
        const seen: unknown[] = [];
        for (const generateWith of ['doStream', 'doGenerate'] as const) {
          const agent = new Agent({ id: 'a', model: modelOf(version, usage, withUsage) as never, maxSteps: 1 });
          const result = await agent.generate('Hello', { generateWith });
          expect(result.text, generateWith).toBe('Fine.');
          expect([result.usage.inputTokens, result.usage.outputTokens, result.usage.totalTokens], generateWith).toStrictEqual([undefined, undefined, undefined]);
          seen.push(result.usage);
        }
        expect(seen[1]).toStrictEqual(seen[0]);
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});
