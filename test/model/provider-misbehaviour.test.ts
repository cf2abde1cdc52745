/**
 * A provider that breaks the language-model contract ends the run with one `error` chunk that
 * names the provider and the problem — never an unhandled rejection that takes the process down.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import type { LanguageModelV2, LanguageModelV3, LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent, AgentRunError, InvalidModelResponseError, RxAgentError, type ChunkType } from '../../src/index.js';
import { failOnProcessLevelErrors } from './process-guard.js';

failOnProcessLevelErrors();

type Version = 'v2' | 'v3' | 'v4';

/** A model of `version` whose `doStream` resolves with `result()` (whatever it is). */
function brokenModel(version: Version, result: () => unknown): LanguageModelV2 | LanguageModelV3 | LanguageModelV4 {
  return {
    specificationVersion: version,
    provider: `acme.${version}`,
    modelId: 'broken-1',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: async () => result() as never,
  } as LanguageModelV4;
}

const run = (model: LanguageModelV2 | LanguageModelV3 | LanguageModelV4): Promise<ChunkType[]> =>
  lastValueFrom(new Agent({ id: 'a', instructions: 'Be brief.', model }).stream$('Hello').pipe(toArray()));

function expectOneError(chunks: readonly ChunkType[], provider: string, problem: RegExp): InvalidModelResponseError {
  expect(chunks[0]?.type).toBe('start');
  const terminal = chunks.filter((chunk) => ['finish', 'error', 'abort', 'tripwire'].includes(chunk.type));
  expect(terminal.map((chunk) => chunk.type)).toEqual(['error']);
  expect(chunks.at(-1)?.type).toBe('error');
  const error = (chunks.at(-1) as Extract<ChunkType, { type: 'error' }>).payload.error;
  expect(InvalidModelResponseError.isInstance(error)).toBe(true);
  const invalid = error as InvalidModelResponseError;
  expect(invalid.provider).toBe(provider);
  expect(invalid.modelId).toBe('broken-1');
  expect(invalid.message).toContain(`Provider "${provider}"`);
  expect(invalid.message).toMatch(problem);
  return invalid;
}

const throwingGetReader = (): unknown => ({
  stream: {
    getReader() {
      throw new Error('reader exploded');
    },
  },
});

const cases: Array<[string, () => unknown, RegExp]> = [
  ['{}', () => ({}), /resolved with an object without a stream/],
  ['{ stream: null }', () => ({ stream: null }), /resolved with \{ stream: null without getReader\(\) \}/],
  ['{ stream: 42 }', () => ({ stream: 42 }), /\{ stream: a number without getReader\(\) \}/],
  ['undefined', () => undefined, /resolved with undefined/],
  ['a string', () => 'stream', /resolved with a string/],
  ['a stream whose getReader() throws', throwingGetReader, /getReader\(\) threw: reader exploded/],
];

describe('a provider whose doStream resolves with something that is not { stream: ReadableStream }', () => {
  for (const version of ['v4', 'v3', 'v2'] as const) {
    for (const [name, result, problem] of cases) {
      it(`${version}: ${name} → one error chunk naming the provider and the problem`, async () => {
        expectOneError(await run(brokenModel(version, result)), `acme.${version}`, problem);
      });
    }
  }

  it('generate() rejects with the InvalidModelResponseError (an rxagent error, kept as is)', async () => {
    const agent = new Agent({ id: 'a', instructions: 'x', model: brokenModel('v4', () => ({ stream: null })) });
    const error: unknown = await agent.generate('Hello', { generateWith: 'doStream' }).catch((caught: unknown) => caught);
    expect(InvalidModelResponseError.isInstance(error)).toBe(true);
    expect(RxAgentError.isInstance(error)).toBe(true);
    expect(AgentRunError.isInstance(error)).toBe(false);
    expect((error as Error).message).toMatch(/acme\.v4.*broken-1.*stream: null/);
  });

  it('stream(): fullStream ends with the error chunk and the promises reject (nothing unhandled)', async () => {
    const agent = new Agent({ id: 'a', instructions: 'x', model: brokenModel('v3', () => ({})) });
    const output = await agent.stream('Hello');
    const chunks: ChunkType[] = [];
    for await (const chunk of output.fullStream) chunks.push(chunk);
    expectOneError(chunks, 'acme.v3', /without a stream/);
    await expect(output.text).rejects.toSatisfy((error: unknown) => InvalidModelResponseError.isInstance(error));
  });

  it('unsubscribing before doStream resolves with garbage leaves nothing unhandled', async () => {
    let resolve!: (value: unknown) => void;
    const pending = new Promise((settle) => (resolve = settle));
    const model = { ...brokenModel('v4', () => undefined), doStream: () => pending } as unknown as LanguageModelV4;
    const seen: ChunkType[] = [];
    const subscription = new Agent({ id: 'a', instructions: 'x', model }).stream$('Hello').subscribe((chunk) => seen.push(chunk));
    await new Promise((settle) => setTimeout(settle, 5));
    subscription.unsubscribe();
    resolve({ stream: null });
    await new Promise((settle) => setTimeout(settle, 5));
    expect(seen.some((chunk) => chunk.type === 'error')).toBe(false);
  });
});

/** A V4 stream whose reader is hand-made (to misbehave in `read()`). */
function readerModel(version: Version, read: () => unknown): LanguageModelV2 | LanguageModelV3 | LanguageModelV4 {
  return brokenModel(version, () => ({ stream: { getReader: () => ({ read, cancel: () => Promise.resolve() }) } }));
}

describe('a provider stream that misbehaves while it is read', () => {
  for (const version of ['v4', 'v3', 'v2'] as const) {
    it(`${version}: read() resolving with a non-object is an error chunk`, async () => {
      expectOneError(await run(readerModel(version, () => Promise.resolve(7))), `acme.${version}`, /read\(\) resolved with a number/);
    });

    it(`${version}: a part that is not an object is an error chunk, not the text "undefined"`, async () => {
      let reads = 0;
      const read = (): Promise<ReadableStreamReadResult<unknown>> =>
        Promise.resolve(reads++ === 0 ? { done: false, value: null } : { done: true, value: undefined });
      const chunks = await run(readerModel(version, read));
      expectOneError(chunks, `acme.${version}`, /sent null where a stream part/);
      expect(chunks.some((chunk) => chunk.type === 'text-delta')).toBe(false);
    });

    it(`${version}: read() throwing synchronously is an error chunk`, async () => {
      const chunks = await run(
        readerModel(version, () => {
          throw new Error('read blew up');
        }),
      );
      const terminal = chunks.at(-1) as Extract<ChunkType, { type: 'error' }>;
      expect(terminal.type).toBe('error');
      expect((terminal.payload.error as Error).message).toContain('read blew up');
    });
  }

  it('a reader whose cancel() throws does not escape when the run is cancelled', async () => {
    const parts: LanguageModelV4StreamPart[] = [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hi' },
    ];
    const model = brokenModel('v4', () => ({
      stream: {
        getReader: () => ({
          read: () => (parts.length > 0 ? Promise.resolve({ done: false, value: parts.shift() }) : new Promise(() => undefined)),
          cancel: () => {
            throw new Error('cancel exploded');
          },
        }),
      },
    }));
    const seen: string[] = [];
    const subscription = new Agent({ id: 'a', instructions: 'x', model }).stream$('Hello').subscribe((chunk) => {
      seen.push(chunk.type);
    });
    await new Promise((settle) => setTimeout(settle, 10));
    subscription.unsubscribe();
    expect(seen).toContain('text-delta');
  });
});

describe('the same guard behind processorsMiddleware (streamText over a wrapped model)', () => {
  it('a doStream result without a stream is an error part carrying InvalidModelResponseError', async () => {
    const { streamText, wrapLanguageModel } = await import('ai');
    const { processorsMiddleware } = await import('../../src/ai-sdk/index.js');
    const model = wrapLanguageModel({
      model: brokenModel('v4', () => ({ stream: null })) as LanguageModelV4,
      middleware: processorsMiddleware({ outputProcessors: [{ id: 'noop', processOutputStream: ({ part }) => part }] }),
    });
    const errors: unknown[] = [];
    const result = streamText({ model, prompt: 'Hi', onError: ({ error }) => void errors.push(error) });
    for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.some((error) => InvalidModelResponseError.isInstance(error))).toBe(true);
  });
});
