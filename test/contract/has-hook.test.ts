/**
 * `hasHook` / `isHooked`: the one rule by which every stage decides whether a processor has a hook
 * (a function under the hook's name), and the check that no stage spells the rule out again.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hasHook, isHooked } from '../../src/contract/has-hook.js';

class Redactor {
  readonly id = 'redactor';
  processOutputStream({ part }: { part: unknown }): unknown {
    return part;
  }
}

describe('isHooked', () => {
  it('is true for a function under the hook name: own, from a class prototype, or a getter that returns one', () => {
    expect(isHooked({ id: 'p', processInput: () => [] }, 'processInput')).toBe(true);
    expect(isHooked(new Redactor(), 'processOutputStream')).toBe(true);
    expect(isHooked({ id: 'p', get processInput() { return () => []; } }, 'processInput')).toBe(true);
  });

  it('is false for a missing hook, another hook, or a value that is not a function', () => {
    expect(isHooked(new Redactor(), 'processInput')).toBe(false);
    expect(isHooked({ id: 'p', processInput: 'not a function' }, 'processInput')).toBe(false);
    expect(isHooked({ id: 'p', processInput: undefined }, 'processInput')).toBe(false);
  });
});

describe('hasHook', () => {
  it('is true when any processor of the list has the hook, false for an empty list or none', () => {
    expect(hasHook([{ id: 'a' }, new Redactor()], 'processOutputStream')).toBe(true);
    expect(hasHook([{ id: 'a' }, new Redactor()], 'processToolResult')).toBe(false);
    expect(hasHook([], 'processOutputStream')).toBe(false);
  });
});

describe('one definition', () => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
    );
  const sources = files(src).map((file) => ({ file: file.slice(src.length), code: readFileSync(file, 'utf8') }));

  it('src/contract/has-hook.ts is the only place that defines hasHook or tests a process… hook with typeof', () => {
    const definitions = sources.filter(({ code }) => /function hasHook\b|const hasHook\b/.test(code)).map(({ file }) => file);
    expect(definitions).toEqual(['contract/has-hook.ts']);
    const spelledOut = sources
      .filter(({ file }) => file !== 'contract/has-hook.ts')
      .filter(({ code }) => /typeof \w+(\.processor)?\.process[A-Z]\w* [!=]== 'function'|typeof \(?\w+( as [^)]+\))?\)?\[hook\] [!=]== 'function'/.test(code))
      .map(({ file }) => file);
    expect(spelledOut).toEqual([]);
  });
});
