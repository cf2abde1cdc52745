/**
 * `terminalChunk`: the one maker of a run's `finish`, `tripwire`, `error` and `abort` chunks, and
 * the check that no other src file builds one by hand.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { terminalChunk } from '../../src/contract/terminal-chunk.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { isTerminalChunk } from '../../src/contract/chunk-guards.js';
import { emptyUsage } from '../../src/model/usage.js';

const R = 'run-1';

describe('terminalChunk', () => {
  it('a TripWire error is a tripwire chunk with its payload (metadata left out when absent)', () => {
    expect(terminalChunk(R, { error: new TripWire('blocked', { retry: true }, 'guard') })).toEqual({
      type: 'tripwire',
      runId: R,
      from: 'AGENT',
      payload: { reason: 'blocked', retry: true, processorId: 'guard' },
    });
  });

  it('any other error is an error chunk carrying it as it is', () => {
    const error = new Error('boom');
    const chunk = terminalChunk(R, { error });
    expect(chunk).toEqual({ type: 'error', runId: R, from: 'AGENT', payload: { error } });
    expect(chunk.type === 'error' && chunk.payload.error).toBe(error);
    expect(terminalChunk(R, { error: 'a string' }).payload).toEqual({ error: 'a string' });
  });

  it('an abort carries its reason; a finish its payload', () => {
    expect(terminalChunk(R, { aborted: 'user left' })).toEqual({ type: 'abort', runId: R, from: 'AGENT', payload: { reason: 'user left' } });
    const finish = { stepResult: { reason: 'stop' as const }, output: { usage: emptyUsage(), text: 'hi' } };
    expect(terminalChunk(R, { finish })).toEqual({ type: 'finish', runId: R, from: 'AGENT', payload: finish });
  });

  it('every chunk it makes is terminal', () => {
    for (const ending of [{ error: new TripWire('x') }, { error: 1 }, { aborted: undefined }, { finish: { stepResult: { reason: 'stop' as const }, output: { usage: emptyUsage(), text: '' } } }]) {
      expect(isTerminalChunk(terminalChunk(R, ending as Parameters<typeof terminalChunk>[1]))).toBe(true);
    }
  });
});

/** The source without its comment lines (JSDoc examples may show a chunk literal). */
const codeOnly = (text: string): string => text.split('\n').filter((line) => !/^\s*(\*|\/\/|\/\*\*)/.test(line)).join('\n');

describe('one maker', () => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
    );

  it('no src file but src/contract/terminal-chunk.ts makes a terminal agent chunk with makeChunk or an object literal', () => {
    // middleware-stream.ts marks a failed model call with an `error` chunk (also for a TripWire) that
    // never leaves it: it becomes the model's `error` part and finish, not a run's terminal chunk
    const allowed = new Set(['contract/terminal-chunk.ts', 'ai-sdk/internal/middleware-stream.ts']);
    const byHand = files(src)
      .map((file) => ({ file: file.slice(src.length), code: codeOnly(readFileSync(file, 'utf8')) }))
      .filter(({ file }) => !allowed.has(file))
      .filter(({ code }) => /makeChunk\([^,]+,\s*'(finish|tripwire|error|abort)'|type: '(finish|tripwire|error|abort)',\s*runId/.test(code))
      .map(({ file }) => file);
    expect(byHand).toEqual([]);
  });
});
