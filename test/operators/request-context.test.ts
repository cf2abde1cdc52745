/**
 * RequestContext has the reference implementation's public surface (issue 15 §1) and a per-run
 * read-through view (issue 13 §3).
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { RequestContext } from '../../src/contract/request-context.js';

describe('RequestContext: the reference surface', () => {
  it('get/set, getRaw/setRaw/hasRaw/deleteRaw, has/delete, clear, size(), keys/values/entries, forEach, all', () => {
    const context = new RequestContext<{ tier: 'free' | 'pro'; count: number }>([['tier', 'pro']]);
    context.set('count', 2);
    context.setRaw('mastra__resourceId', 'user-1');
    expect(context.get('tier')).toBe('pro');
    expect(context.getRaw('mastra__resourceId')).toBe('user-1');
    expect(context.hasRaw('mastra__resourceId')).toBe(true);
    expect(context.has('count')).toBe(true);
    expect(context.size()).toBe(3);
    expect([...context.keys()]).toEqual(['tier', 'count', 'mastra__resourceId']);
    expect([...context.values()]).toEqual(['pro', 2, 'user-1']);
    expect([...context.entries()]).toEqual([
      ['tier', 'pro'],
      ['count', 2],
      ['mastra__resourceId', 'user-1'],
    ]);
    const visited: string[] = [];
    context.forEach((value, key) => visited.push(`${key}=${String(value)}`));
    expect(visited).toEqual(['tier=pro', 'count=2', 'mastra__resourceId=user-1']);
    expect(context.all).toEqual({ tier: 'pro', count: 2, mastra__resourceId: 'user-1' });
    expect(context.deleteRaw('mastra__resourceId')).toBe(true);
    expect(context.deleteRaw('mastra__resourceId')).toBe(false);
    expect(context.delete('count')).toBe(true);
    expect(context.size()).toBe(1);
    context.clear();
    expect(context.size()).toBe(0);
    expect(context.get('tier')).toBeUndefined();
  });

  it('is typed by its values', () => {
    const context = new RequestContext<{ tier: 'free' | 'pro' }>();
    expectTypeOf(context.get('tier')).toEqualTypeOf<'free' | 'pro' | undefined>();
    expectTypeOf(context.getRaw('anything')).toEqualTypeOf<unknown>();
    expectTypeOf(context.size()).toEqualTypeOf<number>();
  });

  it('accepts an object, an iterable of pairs or nothing', () => {
    expect(new RequestContext({ a: 1 }).get('a')).toBe(1);
    expect(new RequestContext(new Map([['b', 2]])).get('b')).toBe(2);
    expect(new RequestContext().size()).toBe(0);
    // another package's context (not iterable, values in a private map): copied through entries()
    class ForeignContext {
      private registry = new Map<string, unknown>([['mastra__resourceId', 'u1']]);
      get(key: string): unknown {
        return this.registry.get(key);
      }
      has(key: string): boolean {
        return this.registry.has(key);
      }
      entries(): IterableIterator<[string, unknown]> {
        return this.registry.entries();
      }
    }
    const copied = new RequestContext(new ForeignContext());
    expect(copied.all).toEqual({ mastra__resourceId: 'u1' });
  });

  it('toJSON keeps only serialisable values (no functions, symbols, bigints, cycles); serializeForSpan redacts the auth token', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const context = new RequestContext([
      ['plain', { a: [1, 2] }],
      ['text', 'hi'],
      ['fn', () => 1],
      ['symbol', Symbol('s')],
      ['big', 10n],
      ['cyclic', cyclic],
      ['mastra__authToken', 'Bearer secret'],
      ['date', new Date(0)],
      ['map', new Map()],
    ]);
    expect(context.toJSON()).toEqual({
      plain: { a: [1, 2] },
      text: 'hi',
      mastra__authToken: 'Bearer secret',
      date: new Date(0),
      map: new Map(),
    });
    expect(JSON.parse(JSON.stringify(context))).toMatchObject({ plain: { a: [1, 2] }, text: 'hi' });
    const span = context.serializeForSpan();
    expect(span.mastra__authToken).toBe('[REDACTED]');
    expect(span.plain).toEqual({ a: [1, 2] });
    expect(span.fn).toBe('[function]');
    expect(span.map).toBe('[object]');
    expect(span.text).toBe('hi');
  });
});

describe('RequestContext.readThrough: a per-run view', () => {
  it('reads the parent live, keeps its own writes and deletes, and never writes into the parent', () => {
    const parent = new RequestContext<Record<string, unknown>>([
      ['tenant', 'acme'],
      ['locale', 'en'],
    ]);
    const view = RequestContext.readThrough(parent);
    view.set('resourceId', 'user-1');
    view.setRaw('mastra__threadId', 't-1');
    expect(view.resourceId).toBe('user-1');
    expect(view.get('tenant')).toBe('acme');
    parent.set('late', 'seen'); // read-through is live
    expect(view.get('late')).toBe('seen');
    view.set('locale', 'fr'); // shadowed in the view only
    expect(view.delete('tenant')).toBe(true);
    expect(view.has('tenant')).toBe(false);
    expect(view.getRaw('tenant')).toBeUndefined();
    expect(view.all).toEqual({ locale: 'fr', late: 'seen', resourceId: 'user-1', mastra__threadId: 't-1' });
    expect(view.size()).toBe(4);
    expect(parent.all).toEqual({ tenant: 'acme', locale: 'en', late: 'seen' });
    view.set('tenant', 'back');
    expect(view.get('tenant')).toBe('back');
    view.clear();
    expect(view.size()).toBe(0);
    expect(parent.size()).toBe(3);
  });

  it('reads through a context of another package with the same methods', () => {
    const foreign = new Map<string, unknown>([['mastra__resourceId', 'user-9']]);
    const view = RequestContext.readThrough(foreign);
    expect(view.getRaw('mastra__resourceId')).toBe('user-9');
    view.setRaw('x', 1);
    expect(foreign.has('x')).toBe(false);
  });
});
