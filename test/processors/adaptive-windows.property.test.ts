/**
 * Issue 24 §12, issue 31: adaptive windows. With the default schedule (12, 48, 200, 800…
 * characters), for any answer up to 2,000 characters of prose, any delta sizes, each of the
 * windowed guards:
 * - the client gets exactly the answer (clean), every character judged before it is released, in at
 *   most 12 judge calls: each character once, except the small first window, judged again in front
 *   of the second (so a word cut by it is judged whole; at most 24 characters more);
 * - windows follow the schedule (own text: the first at most 24 characters, the second 96, the third
 *   400, later 1,600);
 * - a harmful word anywhere — on a delta boundary or straddling deltas — never reaches the client:
 *   with `block` nothing from it on is released, with `redact` it is masked and the rest streams.
 * Plus the pipeline itself (hand-driven judge): a delta never waits for a judge, the second window
 * waits for the first's verdict and is judged with it in front, later windows are judged while
 * earlier verdicts are pending, releases keep arrival order, and a block stops the stream before
 * the flagged window.
 *
 * Case counts: `RXAGENT_PROPERTY_RUNS` (CI 1,000, soak 20,000).
 */
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { CheckedStream } from '../../src/processors/internal/checked-stream.js';
import type { Verdict } from '../../src/processors/internal/judged-spans.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { checkProperty, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { contextWith, judgedContents, judgeModel, listWith, promptText, textMessage } from './support/harness.js';

const MARKER = 'HARMFULxq';

/** Prose: words of 1–14 letters, sentences ending with `.`, `!`, `?` or a newline, cut to `length`. */
const proseArbitrary = fc
  .tuple(
    fc.array(fc.tuple(fc.integer({ min: 1, max: 14 }), fc.integer({ min: 0, max: 9 })), { minLength: 1, maxLength: 400 }),
    fc.integer({ min: 1, max: 2_000 }),
  )
  .map(([words, length]) => {
    let text = '';
    for (const [size, end] of words) {
      text += 'abcdefghijklmn'.slice(0, size);
      text += end === 0 ? '. ' : end === 1 ? '!\n' : end === 2 ? '? ' : ' ';
    }
    return text.slice(0, length);
  });

type Kind = 'moderation' | 'pii' | 'scrubber';

/** The windows' own texts, in stream order, if the calls judged `text` as the schedule says. */
function ownTexts(calls: readonly string[], text: string): string[] | undefined {
  const [first = ''] = calls;
  if (calls.length < 2) return calls.join('') === text ? [...calls] : undefined;
  for (let at = 1; at < calls.length; at++) {
    const second = calls[at] as string;
    if (!second.startsWith(first)) continue;
    const own = [first, second.slice(first.length), ...calls.slice(1, at), ...calls.slice(at + 1)];
    if (own.join('') === text) return own;
  }
  return undefined;
}

function guard(kind: Kind, strategy: 'block' | 'redact'): { processor: Processor; calls: () => string[] } {
  const flagged = (prompt: string) => (judgedContents(prompt).at(-1) ?? '').includes(MARKER);
  const model =
    kind === 'moderation' ? judgeModel(({ prompt }) => (flagged(prompt) ? '{"categories": {"violence": 0.97}}' : '{"categories": {}}'))
    : kind === 'pii' ? judgeModel(({ prompt }) => JSON.stringify({ detections: flagged(prompt) ? [{ type: 'api-key', value: MARKER, confidence: 1 }] : [] }))
    : judgeModel(({ prompt }) => JSON.stringify({ detections: flagged(prompt) ? [{ value: MARKER, confidence: 1 }] : [] }));
  const processor =
    kind === 'moderation' ? new ModerationProcessor({ model })
    : kind === 'pii' ? new PIIDetector({ model, strategy, detectionTypes: ['api-key'], redactionMethod: 'placeholder' })
    : new SystemPromptScrubber({ model, strategy });
  return { processor, calls: () => model.calls.map((call) => judgedContents(promptText(call)).at(-1) ?? '') };
}

function deltas(text: string, sizes: readonly number[]): ChunkType[] {
  const parts: ChunkType[] = [chunk.stepStart(), chunk.textStart('t')];
  for (let at = 0, index = 0; at < text.length; index++) {
    const size = sizes[index % sizes.length] as number;
    parts.push(chunk.textDelta(text.slice(at, at + size), 't'));
    at += size;
  }
  return [...parts, chunk.textEnd('t'), chunk.stepFinish(), chunk.finish()];
}

async function stream(processor: Processor, parts: readonly ChunkType[]): Promise<{ text: string; error: unknown }> {
  const list = listWith([textMessage('u1', 'user', 'hi')], { system: [`Never say ${MARKER}.`] });
  const output: ChunkType[] = [];
  const error = await lastValueFrom(from(parts).pipe(processOutputStream([processor], contextWith(list)), toArray())).then(
    (chunks) => {
      output.push(...chunks);
      return undefined;
    },
    (caught: unknown) => caught,
  );
  return { text: output.map((part) => (part.type === 'text-delta' ? part.payload.text : '')).join(''), error };
}

describe('adaptive windows (property-based)', () => {
  it(
    'clean prose up to 2,000 characters: streamed exactly, each character judged once (the first window twice), ≤ 12 calls, windows within the schedule',
    async () => {
      const scenario = fc.tuple(proseArbitrary, fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 10 }), fc.constantFrom<Kind>('moderation', 'pii', 'scrubber'));
      await checkProperty('adaptive-windows-clean', scenario, async ([text, sizes, kind]) => {
        const { processor, calls } = guard(kind, 'redact');
        const { text: streamed, error } = await stream(processor, deltas(text, sizes));
        if (error !== undefined) throw error;
        if (streamed !== text) throw new Error(`streamed ${JSON.stringify(streamed)} for ${JSON.stringify(text)}`);
        const judged = calls();
        // the second window's call sees the first window in front of its own text (and, waiting for the
        // first verdict, may come after later windows' calls); every other call sees its own text
        const own = ownTexts(judged, text);
        if (own === undefined) throw new Error(`judged ${JSON.stringify(judged)}`);
        if (judged.length > 12) throw new Error(`${judged.length} calls for ${text.length} characters`);
        const caps = [24, 96, 400];
        own.forEach((window, index) => {
          if (window.length > (caps[index] ?? 1_600)) throw new Error(`window ${index} has ${window.length} characters: ${JSON.stringify(own.map((item) => item.length))}`);
        });
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a harmful word anywhere, aligned or straddling deltas: block releases nothing from it on; redact masks it and streams the rest',
    async () => {
      const scenario = fc.tuple(
        proseArbitrary.filter((text) => text.length > 20),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 10 }),
        fc.constantFrom<Kind>('moderation', 'pii', 'scrubber'),
        fc.constantFrom<'block' | 'redact'>('block', 'redact'),
      );
      await checkProperty('adaptive-windows-marker', scenario, async ([base, where, sizes, kind, strategy]) => {
        // the marker as a word of its own, placed at a word start
        const spaces = [...base.matchAll(/\s/g)].map((match) => (match.index ?? 0) + 1);
        const at = spaces.length === 0 ? 0 : (spaces[Math.floor(where * spaces.length)] as number);
        const text = `${base.slice(0, at)}${MARKER} ${base.slice(at)}`;
        const { processor } = guard(kind, strategy);
        const { text: streamed, error } = await stream(processor, deltas(text, sizes));
        if (streamed.includes(MARKER)) throw new Error(`the marker reached the client: ${JSON.stringify(streamed)}`);
        if (kind === 'moderation' || strategy === 'block') {
          if (!TripWire.isInstance(error)) throw new Error(`no tripwire (${String(error)})`);
          if (streamed.length > at || !text.startsWith(streamed)) throw new Error(`released past the marker at ${at}: ${JSON.stringify(streamed)}`);
          return;
        }
        if (error !== undefined) throw error;
        const placeholder = kind === 'pii' ? '[API_KEY]' : '[SYSTEM_PROMPT]';
        if (streamed !== text.replace(MARKER, placeholder)) throw new Error(`redacted stream ${JSON.stringify(streamed)}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('the pipeline (a hand-driven judge)', () => {
  /** A gate whose judge answers only when the test says so. */
  function handDriven() {
    const pending: Array<{ text: string; answer: (verdict: Verdict) => void }> = [];
    const gate = new CheckedStream({ stateKey: 'held', processorId: 'gate', windowSchedule: [10, 20] });
    const state: Record<string, unknown> = {};
    const abort = (reason?: string): never => {
      throw new TripWire(reason ?? 'blocked', {}, 'gate');
    };
    const judge = ({ text }: { text: string }) => new Promise<Verdict>((answer) => pending.push({ text, answer }));
    const released: string[] = [];
    const feed = (part: ChunkType) => {
      const result = gate.process(part, state, abort, judge);
      const collect = (first: ChunkType | null) => {
        const all = [first, ...((state['rxagent.followUpChunks'] as ChunkType[] | undefined) ?? [])];
        state['rxagent.followUpChunks'] = [];
        for (const out of all) if (out?.type === 'text-delta') released.push(out.payload.text);
      };
      if (result instanceof Promise) return result.then(collect);
      collect(result);
      return undefined;
    };
    return { pending, feed, released };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('deltas never wait for a judge; the second window is judged after the first, with it in front; later windows while earlier ones are pending; releases keep order', async () => {
    const { pending, feed, released } = handDriven();
    expect(feed(chunk.textStart('t'))).toBeUndefined();
    for (const piece of ['First one. ', 'Second sentence is here. ', 'Third and ']) expect(feed(chunk.textDelta(piece, 't'))).toBeUndefined();
    await settle();
    // two windows cut: the second waits for the first verdict
    expect(pending.map((call) => call.text)).toEqual(['First one.']);
    pending[0]?.answer({ action: 'keep' });
    await settle();
    expect(pending.map((call) => call.text)).toEqual(['First one.', 'First one. Second sentence is here.']);
    expect(feed(chunk.textDelta('more words', 't'))).toBeUndefined();
    expect(released).toEqual(['First one.']);
    // a third window is judged while the second is pending; its verdict, arriving first, releases nothing out of order
    expect(feed(chunk.textDelta(' now. ', 't'))).toBeUndefined();
    await settle();
    expect(pending.map((call) => call.text)).toEqual(['First one.', 'First one. Second sentence is here.', ' Third and more words now.']);
    pending[2]?.answer({ action: 'keep' });
    await settle();
    feed(chunk.textDelta('Last', 't'));
    expect(released).toEqual(['First one.']);
    pending[1]?.answer({ action: 'keep' });
    await settle();
    feed(chunk.textDelta(' words.', 't'));
    expect(released).toEqual(['First one.', ' Second sentence is here. Third and more words now.']);
    // the end of the stream waits for the last window only
    const end = feed(chunk.finish());
    expect(end).toBeInstanceOf(Promise);
    await settle();
    expect(pending.at(-1)?.text).toBe(' Last words.');
    pending.at(-1)?.answer({ action: 'keep' });
    await end;
    expect(released.join('')).toBe('First one. Second sentence is here. Third and more words now. Last words.');
  });

  it('a block verdict stops the stream at the next chunk, before the flagged window, after what was already released', async () => {
    const { pending, feed, released } = handDriven();
    feed(chunk.textStart('t'));
    feed(chunk.textDelta('Calm words here. ', 't'));
    await settle();
    pending[0]?.answer({ action: 'keep' });
    await settle();
    feed(chunk.textDelta('Now the bad part is here. ', 't'));
    expect(released).toEqual(['Calm words here.']);
    await settle();
    pending[1]?.answer({ action: 'block', reason: 'flagged', metadata: {} });
    await settle();
    expect(() => feed(chunk.textDelta('More text.', 't'))).toThrow(TripWire);
    expect(released.join('')).not.toContain('bad');
  });

  it('a blocked first window: the second is never judged (one call, one report) and nothing is released', async () => {
    const { pending, feed, released } = handDriven();
    feed(chunk.textStart('t'));
    feed(chunk.textDelta('Bad start. And the rest of it follows. ', 't'));
    await settle();
    expect(pending.map((call) => call.text)).toEqual(['Bad start.']);
    pending[0]?.answer({ action: 'block', reason: 'flagged', metadata: {} });
    await settle();
    expect(pending).toHaveLength(1);
    expect(() => feed(chunk.textDelta('More.', 't'))).toThrow(TripWire);
    expect(released).toEqual([]);
  });

  it('a value the first window cuts at a word is judged whole in front of the second: what follows the cut is redacted', async () => {
    const { pending, feed, released } = handDriven();
    feed(chunk.textStart('t'));
    feed(chunk.textDelta('Say it open ', 't'));
    feed(chunk.textDelta('sesame now to enter. ', 't'));
    await settle();
    expect(pending.map((call) => call.text)).toEqual(['Say it open ']);
    pending[0]?.answer({ action: 'keep' }); // "open" alone is nothing
    await settle();
    expect(pending[1]?.text).toBe('Say it open sesame now to enter.');
    pending[1]?.answer({ action: 'replace', replacements: new Map([['open sesame now', '[PHRASE]']]) });
    await settle();
    const end = feed(chunk.finish());
    await settle();
    pending.at(-1)?.answer({ action: 'keep' });
    await end;
    // the first window was out on its own verdict; the rest of the value is not
    expect(released.join('')).toBe('Say it open [PHRASE] to enter. ');
  });
});


