/**
 * A run that waits on its demand gate (the consumer holds it) and is then unsubscribed must not stay
 * reachable from the gate: a consumer that keeps one gate held while it starts and drops runs (a UI
 * stream nobody reads, a paused reader) would otherwise keep every dropped run's provider stream,
 * reader and step alive until the gate is released — or for ever. Shown with `WeakRef`s and `gc()`
 * (`--expose-gc`, vitest.config.ts), and on the gate's own contract: `whenOpen(signal)`.
 */
import { getEventListeners } from 'node:events';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { Agent, DemandGate } from '../../src/index.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { runAgent } from '../../src/loop/agent.js';
import { isChunk, isRunEnd } from '../../src/loop/run/run-events.js';

const gc = (globalThis as { gc?: () => void }).gc as () => void;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A plain V4 model (no Observable fast path): `doStream` hands out a pull-based web stream, kept in `made`. */
function webStreamModel(made: Array<WeakRef<object>>): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'test',
    modelId: 'web-stream',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: async () => {
      const parts: LanguageModelV4StreamPart[] = [...textParts('a reply nobody reads'), finishPart('stop')];
      let index = 0;
      const stream = new ReadableStream<LanguageModelV4StreamPart>(
        {
          pull(controller) {
            const part = parts[index++];
            if (part === undefined) controller.close();
            else controller.enqueue(part);
          },
        },
        { highWaterMark: 0 },
      );
      made.push(new WeakRef(stream));
      return { stream };
    },
  } as LanguageModelV4;
}

async function collected(refs: Array<WeakRef<object>>): Promise<number> {
  for (let round = 0; round < 5; round++) {
    await nextTurn();
    gc();
  }
  return refs.filter((ref) => ref.deref() === undefined).length;
}

describe('a run unsubscribed while its gate is held', () => {
  it('leaves nothing reachable from the gate: 20 dropped runs, their provider streams collected while the gate stays held', async () => {
    const made: Array<WeakRef<object>> = [];
    const agent = new Agent({ id: 'a', model: webStreamModel(made) });
    const gate = new DemandGate();
    const consumer = {};
    gate.hold(consumer);
    for (let run = 0; run < 20; run++) {
      const seen: string[] = [];
      const subscription = agent.stream$('hi', { demand: gate }).subscribe((chunk) => seen.push(chunk.type));
      // the call starts, then the run waits for the gate before its first part
      for (let turn = 0; turn < 5; turn++) await nextTurn();
      expect(seen).toEqual(['start', 'step-start']);
      subscription.unsubscribe();
    }
    expect(made).toHaveLength(20);
    expect(await collected(made)).toBe(20);
    expect(gate.open).toBe(false); // still held: nothing released it to let the runs go
  });

  it('a run that is not dropped still goes on when the gate is released', async () => {
    const made: Array<WeakRef<object>> = [];
    const agent = new Agent({ id: 'a', model: webStreamModel(made) });
    const gate = new DemandGate();
    const consumer = {};
    gate.hold(consumer);
    const types: string[] = [];
    const done = new Promise<void>((resolve, reject) => agent.stream$('hi', { demand: gate }).subscribe({ next: (chunk) => types.push(chunk.type), complete: resolve, error: reject }));
    for (let turn = 0; turn < 5; turn++) await nextTurn();
    expect(types).toEqual(['start', 'step-start']);
    gate.release(consumer);
    await done;
    expect(types.at(-1)).toBe('finish');
  });
});

describe('DemandGate.whenOpen(signal)', () => {
  it('resolves at the last release; an aborted wait rejects with the signal’s reason and is forgotten', async () => {
    const gate = new DemandGate();
    const a = {};
    const b = {};
    gate.hold(a);
    gate.hold(b);
    const controller = new AbortController();
    const aborted = gate.whenOpen(controller.signal);
    let plainOpened = false;
    const plain = gate.whenOpen().then(() => (plainOpened = true));
    controller.abort(new Error('left'));
    await expect(aborted).rejects.toThrow('left');
    gate.release(a);
    await nextTurn();
    expect(plainOpened).toBe(false);
    gate.release(b);
    await plain;
    expect(plainOpened).toBe(true);
  });

  it('an already aborted signal rejects at once; an open gate resolves at once, signal or not', async () => {
    const gate = new DemandGate();
    await expect(gate.whenOpen(AbortSignal.abort(new Error('gone')))).resolves.toBeUndefined();
    gate.hold(gate);
    await expect(gate.whenOpen(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });

  it('a wait that ends leaves no listener on the signal', async () => {
    const gate = new DemandGate();
    const controller = new AbortController();
    gate.hold(gate);
    const waits = [gate.whenOpen(controller.signal), gate.whenOpen(controller.signal)];
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(2);
    gate.release(gate);
    await Promise.all(waits);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('a durable run unsubscribed while its consumer holds the gate at a commit point', () => {
  it('is not kept by the gate: the commit points it handed out are collected while the gate stays held', async () => {
    const made: Array<WeakRef<object>> = [];
    const agent = new Agent({ id: 'a', model: webStreamModel(made) });
    const gate = new DemandGate();
    const consumer = {};
    const points: Array<WeakRef<object>> = [];
    for (let run = 0; run < 10; run++) {
      const subscription = runAgent(agent, 'hi', undefined, { demand: gate, commitPoints: true }).subscribe((item) => {
        if (!isChunk(item) && !isRunEnd(item)) {
          points.push(new WeakRef(item));
          gate.hold(consumer); // the journal writer holds the gate until the point is stored
        }
      });
      for (let turn = 0; turn < 5; turn++) await nextTurn();
      subscription.unsubscribe();
    }
    expect(points).toHaveLength(10);
    expect(await collected(points)).toBe(10);
    expect(gate.open).toBe(false);
  });
});
