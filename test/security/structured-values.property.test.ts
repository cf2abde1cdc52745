/**
 * Property (issue 24 §2): in any structured value a tool, a data chunk or the model's tool input
 * can carry — any shape, secrets planted as object keys or values at any depth (past the old limit
 * of 64 levels), with shared references and cycles — `RegexFilterProcessor` leaves no secret in
 * any key or value, loses no entry, rewrites each string exactly as it would rewrite it alone, and
 * keeps cycles and untouched containers.
 *
 * Case count: `RXAGENT_PROPERTY_RUNS` (CI default 1,000; `npm run test:soak` 20,000).
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { normalizeForMatching } from '../../src/processors/internal/normalized-text.js';
import { runOutputStream } from '../processors/support/harness.js';
import { checkProperty, expectNone, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { secretArbitrary } from './support/secrets.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Plain filler: letters and spaces only, so no preset can match it by chance. */
const filler = fc.string({ unit: fc.constantFrom(...'abcdefghij klmnop'), maxLength: 12 });

const jsonTree: fc.Arbitrary<Json> = fc.letrec<{ node: Json }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    filler,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(filler, tie('node'), { maxKeys: 4 }),
  ),
})).node;

/** Where a secret goes: a path of choices into the tree, as a key or as a value. */
const plantArbitrary = fc.record({ secret: secretArbitrary, path: fc.array(fc.nat(), { maxLength: 8 }), asKey: fc.boolean() });

const caseArbitrary = fc.record({
  tree: jsonTree,
  plants: fc.array(plantArbitrary, { minLength: 1, maxLength: 3 }),
  /** Levels of alternating objects/arrays around the whole value (0–300: past the old limit of 64). */
  depth: fc.integer({ min: 0, max: 300 }),
  /** A key secret on the deep chain's innermost object. */
  deepKey: fc.option(secretArbitrary, { nil: undefined }),
  cycle: fc.boolean(),
  shared: fc.boolean(),
  carrier: fc.constantFrom('data', 'tool-result', 'tool-call'),
});

/** Puts `secret` into the tree along `path`: as a new key of an object, or a new element/value. */
function plant(tree: Json, secret: string, path: readonly number[], asKey: boolean): Json {
  const wrap = (value: Json): Json => (asKey ? { [secret]: value } : [value, secret]);
  if (tree === null || typeof tree !== 'object') return wrap(tree);
  let container: Json[] | { [key: string]: Json } = tree;
  for (const step of path) {
    const children = (Array.isArray(container) ? container : Object.values(container)).filter((child) => child !== null && typeof child === 'object');
    if (children.length === 0) break;
    container = children[step % children.length] as Json[] | { [key: string]: Json };
  }
  if (Array.isArray(container)) container.push(asKey ? { [secret]: 'x' } : secret);
  else if (asKey) container[secret] = 'x';
  else container[`k${Object.keys(container).length}`] = secret;
  return tree;
}

/** The value wrapped `depth` levels deep; the innermost object holds `deepKey` as a key when given. */
function wrapDeep(value: unknown, depth: number, deepKey: string | undefined): unknown {
  let wrapped: unknown = deepKey === undefined ? value : { [deepKey]: value };
  for (let level = 0; level < depth; level++) wrapped = level % 2 === 0 ? { level: wrapped } : [wrapped];
  return wrapped;
}

const stripSuffix = (key: string) => key.replace(/ \(\d+\)$/, '');

/**
 * Compares input and output in step: every string of the output is the filter's redaction of the
 * input string (keys as a multiset, collision suffixes aside), no entry is lost, untouched
 * containers keep their identity, and the output references itself where the input did.
 */
function compare(input: unknown, output: unknown, redact: (text: string) => string, problems: string[]): void {
  const seen = new Map<object, unknown>();
  const stack: Array<[unknown, unknown, string]> = [[input, output, '$']];
  while (stack.length > 0) {
    const [from, to, path] = stack.pop() as [unknown, unknown, string];
    if (typeof from === 'string') {
      if (to !== redact(from)) problems.push(`${path}: ${JSON.stringify(from)} became ${JSON.stringify(to)}`);
      continue;
    }
    if (from === null || typeof from !== 'object') {
      if (to !== from) problems.push(`${path}: ${String(from)} became ${String(to)}`);
      continue;
    }
    if (seen.has(from)) {
      if (seen.get(from) !== to) problems.push(`${path}: a shared or cyclic reference was not kept`);
      continue;
    }
    seen.set(from, to);
    if (to === null || typeof to !== 'object') {
      problems.push(`${path}: a container became ${String(to)}`);
      continue;
    }
    if (Array.isArray(from)) {
      if (!Array.isArray(to) || to.length !== from.length) problems.push(`${path}: array length changed`);
      else from.forEach((item, index) => stack.push([item, to[index], `${path}[${index}]`]));
      continue;
    }
    const fromKeys = Object.keys(from);
    const toKeys = Object.keys(to);
    const expected = fromKeys.map(redact).sort();
    const actual = toKeys.map(stripSuffix).sort();
    if (JSON.stringify(expected) !== JSON.stringify(actual)) problems.push(`${path}: keys ${JSON.stringify(fromKeys)} became ${JSON.stringify(toKeys)}`);
    if (fromKeys.every((key, index) => redact(key) === key && toKeys[index] === key)) {
      fromKeys.forEach((key) => stack.push([(from as Record<string, unknown>)[key], (to as Record<string, unknown>)[key], `${path}.${key}`]));
    } else {
      // renamed keys: pair entries by position (the copy keeps the entry order)
      fromKeys.forEach((key, index) => stack.push([(from as Record<string, unknown>)[key], (to as Record<string, unknown>)[toKeys[index] as string], `${path}.${key}`]));
    }
  }
}

/** Every string of a value, keys included (the test's own walk, independent of the code under test). */
function stringsOf(value: unknown): string[] {
  const strings: string[] = [];
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') strings.push(next);
    else if (next !== null && typeof next === 'object' && !seen.has(next)) {
      seen.add(next);
      if (Array.isArray(next)) stack.push(...(next as unknown[]));
      else for (const [key, item] of Object.entries(next)) stack.push(key, item);
    }
  }
  return strings;
}

describe('every string of a structured value is checked (property-based)', () => {
  it(
    'secrets as keys or values at any depth, shared and cyclic values: none survives, nothing else changes',
    async () => {
      await checkProperty('structured-values', caseArbitrary, async ({ tree, plants, depth, deepKey, cycle, shared, carrier }) => {
        let value: Json = tree;
        for (const { secret, path, asKey } of plants) value = plant(value, secret, path, asKey);
        const root = { payload: value } as Record<string, unknown>;
        if (shared) root.again = value;
        if (cycle) root.self = root;
        const input = wrapDeep(root, depth, deepKey);
        const filter = new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' });
        const part =
          carrier === 'data' ? chunk.data('data-result', input)
          : carrier === 'tool-result' ? chunk.toolResult({ toolCallId: 'c1', toolName: 't', args: {}, result: input })
          : chunk.toolCall({ toolCallId: 'c1', toolName: 't', args: input as Record<string, unknown> });
        const [out] = await runOutputStream([filter], [part]);
        const output =
          out?.type === 'tool-result' ? out.payload.result
          : out?.type === 'tool-call' ? out.payload.args
          : (out as { data?: unknown } | undefined)?.data;
        const problems: string[] = [];
        const secrets = [...plants.map((planted) => planted.secret), ...(deepKey === undefined ? [] : [deepKey])];
        for (const text of stringsOf(output)) {
          const view = normalizeForMatching(text).text;
          for (const secret of secrets) if (view.includes(normalizeForMatching(secret).text)) problems.push(`${JSON.stringify(secret)} survived in ${JSON.stringify(text)}`);
        }
        compare(input, output, (text) => filter.redactText(text), problems);
        expectNone(problems, `${carrier}, depth ${depth}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
