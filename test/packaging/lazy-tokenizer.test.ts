/**
 * The default tokenizer is an optional peer loaded on first use (src/processors/internal/lazy-tokenizer.ts):
 * one import per process, a clear error when it is missing, synchronous hooks once loaded.
 * (smoke/consumer.mjs checks the missing case against the built package, in a directory without it.)
 */
import { describe, expect, it, vi } from 'vitest';
import { createTokenizerLoader, defaultTokenizer, type Tokenizer } from '../../src/processors/internal/lazy-tokenizer.js';
import { TokenLimiterProcessor } from '../../src/processors/token-limiter.js';
import { chunk } from '../../src/testing/chunk-builders.js';

describe('createTokenizerLoader', () => {
  it('imports once, however many callers wait at the same time', async () => {
    const tokenizer: Tokenizer = { countTokens: (text) => text.length, encode: () => [], decode: () => '' };
    const importer = vi.fn(async () => tokenizer);
    const loader = createTokenizerLoader(importer);
    expect(loader.current).toBeUndefined();
    const [first, second] = await Promise.all([loader.load(), loader.load()]);
    expect(first).toBe(tokenizer);
    expect(second).toBe(tokenizer);
    expect(loader.current).toBe(tokenizer);
    await loader.load();
    expect(importer).toHaveBeenCalledTimes(1);
  });

  it('a missing module: a clear error naming the peer dependency and what to do, with the cause kept', async () => {
    const notFound = Object.assign(new Error("Cannot find package 'gpt-tokenizer'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const loader = createTokenizerLoader(() => Promise.reject(notFound));
    const error = (await loader.load().catch((caught: unknown) => caught)) as Error;
    expect(error.message).toMatch(/optional peer dependency "gpt-tokenizer".*npm install gpt-tokenizer.*tokenCounter/);
    expect(error.cause).toBe(notFound);
    expect(loader.current).toBeUndefined();
    await expect(loader.load()).rejects.toBe(error);
  });
});

describe('TokenLimiterProcessor with the default tokenizer', () => {
  it('ready() loads it; then processOutputStream answers synchronously (no promise per chunk)', async () => {
    const limiter = await new TokenLimiterProcessor({ limit: 1000, outputLimit: 2 }).ready();
    expect(defaultTokenizer.current).toBeDefined();
    const args = { part: chunk.textDelta('Hello brave new world'), state: {}, abort: () => undefined } as unknown as Parameters<TokenLimiterProcessor['processOutputStream']>[0];
    const result = limiter.processOutputStream(args);
    expect(result).not.toBeInstanceOf(Promise);
    expect((result as ReturnType<typeof chunk.textDelta>).payload.text).toBe('Hello brave');
  });

  it('a custom tokenCounter never loads anything: ready() resolves at once', async () => {
    const counter = vi.fn((text: string) => text.length);
    const limiter = await new TokenLimiterProcessor({ limit: 10, tokenCounter: counter }).ready();
    expect(limiter.processOutputStream({ part: chunk.textDelta('abc'), state: {}, abort: () => undefined } as never)).toEqual(chunk.textDelta('abc'));
    expect(counter).toHaveBeenCalledWith('abc');
  });
});
