/**
 * `processOutputStream` leftovers of the December 2026 (d) red team
 * (test/reliability/red-team-2026-12d.adversarial.test.ts):
 *
 * 1. A hook edits the `tool-*` chunk it got IN PLACE — a `toolCallId` set to `42`, `''`, `null`, a
 *    Symbol or an object, a `toolName` deleted, the payload replaced by `null`, its `type` changed —
 *    and hands back the same object. Before: a new object was checked, the same one was not — the
 *    call vanished silently (the run finished without running the tool) or a raw `TypeError` ended
 *    the run far from the hook. Now: a `ProcessorError` naming the processor, the hook and the
 *    field, whether the hook returns the part, a promise of it or an Observable of it; the tool
 *    does not run on it. (Text and reasoning chunks handed back as they are get no check: one type
 *    test, no copy.)
 * 2. `streamParts` was one array shared by every processor in step with the chain: processor A
 *    could `streamParts.length = 0`, splice it, overwrite or push entries, sort it, freeze it or
 *    change its prototype, and so blind processor B (a guard looking back over `streamParts`) or
 *    break the log itself (a frozen log made the next chunk a raw `TypeError`). Now each processor
 *    gets a read-only view: a write is a `ProcessorError` naming the processor and the hook (a hook
 *    that catches it goes on, and nothing was written); reading works as on an array.
 * 3. A hook defines a `type` getter that throws on the part it got (`Object.defineProperty(part,
 *    'type', { get() { throw … } })`) and hands it back — as it is, as a promise or an Observable of
 *    it, or drops it with `null`. Before: the chain's own read of the type after the hook threw the
 *    getter's raw error, naming nobody. Now: a `ProcessorError` naming that processor and
 *    processOutputStream (not the pass-through processor before it, which had the same object), with
 *    or without tracing; the processor after it is not reached.
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` / 10 (at least 30) per property.
 */
import fc from 'fast-check';
import { delay, lastValueFrom, of, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { currentAttemptParts } from '../../src/contract/current-attempt-parts.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { finishPart, mockModel, textParts, type MockModel } from '../../src/testing/index.js';
import { expectNothingUnhandled } from '../support/nothing-unhandled.js';
import { checkProperty, PROPERTY_RUNS } from './support/property.js';
import { chunksOf, processorErrorProblems, weatherModel, weatherTools } from './support/weather-run.js';

expectNothingUnhandled();

const CASES = Math.max(30, Math.floor(PROPERTY_RUNS / 10));
const TIMEOUT = 120_000;

/** What a processor we did not write reads its arguments as. */
type Loose = Record<string, any>;

const executed: string[] = [];
const tools = weatherTools(executed);
const toolModel = weatherModel;

// ---------------------------------------------------------------------------------------------
// 1. a tool chunk edited in place and handed back as the same object
// ---------------------------------------------------------------------------------------------

/** The payload fields that bind each tool chunk to its call, and whether `''` is wrong there. */
const TOOL_FIELDS: Record<string, Array<[field: string, nonEmpty: boolean]>> = {
  'tool-call-input-streaming-start': [
    ['toolCallId', true],
    ['toolName', false],
  ],
  'tool-call-delta': [
    ['toolCallId', true],
    ['argsTextDelta', false],
  ],
  'tool-call-input-streaming-end': [['toolCallId', true]],
  'tool-call': [
    ['toolCallId', true],
    ['toolName', true],
  ],
  'tool-result': [
    ['toolCallId', true],
    ['toolName', false],
  ],
};
const EDITS: Array<[string, (payload: Loose, field: string) => void]> = [
  ['= 42', (payload, field) => void (payload[field] = 42)],
  ["= ''", (payload, field) => void (payload[field] = '')],
  ['= null', (payload, field) => void (payload[field] = null)],
  ['= an object', (payload, field) => void (payload[field] = { id: 'c1' })],
  ['= a Symbol', (payload, field) => void (payload[field] = Symbol('id'))],
  ['deleted', (payload, field) => void delete payload[field]],
];
/** How the hook hands the part back: as it is, a promise of it, an Observable of it (settled at once, or later). */
const RETURNS: Array<[string, (part: Loose) => unknown]> = [
  ['the part', (part) => part],
  ['a promise of it', (part) => Promise.resolve(part)],
  ['of(part)', (part) => of(part)],
  ['of(part).pipe(delay(1))', (part) => of(part).pipe(delay(1))],
];

function hostileAgent(act: (args: Loose) => unknown, id = 'hostile'): Agent {
  return new Agent({ id: 'agent', model: toolModel(), tools, outputProcessors: [{ id, processOutputStream: act } as unknown as Processor] });
}

describe('1. processOutputStream editing a tool chunk in place and handing back the same object', () => {
  it(
    'property: any tool chunk type, each field that binds it, edited into what the step cannot bind, however handed back: a ProcessorError naming the field; no tool runs on it',
    async () => {
      const cases = Object.entries(TOOL_FIELDS).flatMap(([type, fields]) => fields.map(([field, nonEmpty]) => ({ type, field, nonEmpty })));
      await checkProperty(
        'stream-hook-leftovers: tool chunk edited in place',
        fc.record({ target: fc.constantFrom(...cases), edit: fc.constantFrom(...EDITS), handBack: fc.constantFrom(...RETURNS) }),
        async ({ target: { type, field, nonEmpty }, edit: [name, edit], handBack: [, handBack] }) => {
          fc.pre(nonEmpty || name !== "= ''"); // '' is a valid value there
          executed.length = 0;
          const act = ({ part }: Loose): unknown => {
            if (part.type === type) edit(part.payload, field);
            return handBack(part);
          };
          const chunks = await chunksOf(hostileAgent(act));
          expect(processorErrorProblems(chunks, 'hostile', 'processOutputStream', new RegExp(`payload\\.${field} is`))).toEqual([]);
          if (type !== 'tool-result') expect(executed).toEqual([]);
        },
        CASES,
      );
    },
    TIMEOUT,
  );

  it.each<[string, (part: Loose) => void, RegExp]>([
    ['the payload set to null', (part) => part.type === 'tool-call' && void (part.payload = null), /payload = null; expected an object/],
    ['the payload set to 42', (part) => part.type === 'tool-call' && void (part.payload = 42), /payload/],
    ['its type set to 42', (part) => part.type === 'tool-call' && void (part.type = 42), /returned number|expected a chunk/],
    ['its type deleted', (part) => part.type === 'tool-call' && void delete part.type, /returned object|expected a chunk/],
    ["a text delta's type set to 'tool-call'", (part) => part.type === 'text-delta' && void (part.type = 'tool-call'), /payload\.toolCallId is/],
  ])('%s, in place: a ProcessorError naming the processor', async (_name, edit, message) => {
    for (const [, handBack] of RETURNS) {
      executed.length = 0;
      const chunks = await chunksOf(
        hostileAgent(({ part }) => {
          edit(part);
          return handBack(part);
        }),
      );
      expect(processorErrorProblems(chunks, 'hostile', 'processOutputStream', message)).toEqual([]);
    }
  });

  it('well-formed edits in place still pass, however handed back: another city, provider metadata; text edited in place too', async () => {
    for (const [, handBack] of RETURNS) {
      executed.length = 0;
      const chunks = await chunksOf(
        hostileAgent(({ part }) => {
          if (part.type === 'tool-call') {
            part.payload.args = { city: 'Rome' };
            part.payload.providerMetadata = { note: { by: 'hostile' } };
          }
          if (part.type === 'text-delta') part.payload.text = part.payload.text.toUpperCase();
          return handBack(part);
        }),
      );
      expect(chunks.at(-1)?.type).toBe('finish');
      expect(executed).toEqual(['Rome']);
      expect(
        chunks
          .filter((chunk) => chunk.type === 'text-delta')
          .map((chunk) => (chunk.payload as { text: string }).text)
          .join(''),
      ).toBe('IT IS SUNNY.');
    }
  });

  it('the processor after the one that edited in place is not reached: the chain stops at the editor', async () => {
    const after: string[] = [];
    const agent = new Agent({
      id: 'agent',
      model: toolModel(),
      tools,
      outputProcessors: [
        { id: 'editor', processOutputStream: ({ part }: Loose) => (part.type === 'tool-call' && void (part.payload.toolCallId = 42), part) } as unknown as Processor,
        { id: 'after', processOutputStream: ({ part }: Loose) => (after.push(part.type), part) } as unknown as Processor,
      ],
    });
    const chunks = await chunksOf(agent);
    expect(processorErrorProblems(chunks, 'editor', 'processOutputStream', /payload\.toolCallId is a number/)).toEqual([]);
    expect(after).not.toContain('tool-call');
  });
});

// ---------------------------------------------------------------------------------------------
// 2. streamParts written by one processor, read by another
// ---------------------------------------------------------------------------------------------

function textModel(): MockModel {
  return mockModel({ parts: [...textParts('one two three four five', { chunkSize: 4 }), finishPart('stop')] });
}

const A_TEXT_DELTA = { type: 'text-delta', runId: 'x', from: 'AGENT', payload: { id: 'text-1', text: 'forged' } };
const WRITES: Array<[string, (parts: Loose[]) => unknown]> = [
  ['length = 0', (parts) => (parts.length = 0)],
  ['length = 1', (parts) => (parts.length = 1)],
  ['length = 1000', (parts) => (parts.length = 1000)],
  ['splice(0)', (parts) => parts.splice(0)],
  ['splice(1, 1)', (parts) => parts.splice(1, 1)],
  ['[0] = a forged chunk', (parts) => (parts[0] = A_TEXT_DELTA)],
  ['[last] = null', (parts) => (parts[parts.length - 1] = null as never)],
  ['[length] = a forged chunk', (parts) => (parts[parts.length] = A_TEXT_DELTA)],
  ['push(a forged chunk)', (parts) => parts.push(A_TEXT_DELTA)],
  ['unshift(a forged chunk)', (parts) => parts.unshift(A_TEXT_DELTA)],
  ['pop()', (parts) => parts.pop()],
  ['shift()', (parts) => parts.shift()],
  ['reverse()', (parts) => parts.reverse()],
  ['sort()', (parts) => parts.sort((a, b) => String(a.type).localeCompare(String(b.type)))],
  ['fill(null)', (parts) => parts.fill(null as never)],
  ['copyWithin(0, 1)', (parts) => parts.copyWithin(0, 1)],
  ['delete [0]', (parts) => delete parts[0]],
  ['Object.defineProperty [0]', (parts) => Object.defineProperty(parts, 0, { value: A_TEXT_DELTA })],
  ['Object.assign', (parts) => Object.assign(parts, [A_TEXT_DELTA])],
  ['Object.freeze', (parts) => Object.freeze(parts)],
  ['Object.preventExtensions', (parts) => Object.preventExtensions(parts)],
  ['Object.setPrototypeOf(null)', (parts) => Object.setPrototypeOf(parts, null)],
];

/** Processor "b": records, at each chunk, the types it got and what its `streamParts` holds. */
function watcher(): { processor: Processor; got: string[]; windows: string[][] } {
  const got: string[] = [];
  const windows: string[][] = [];
  const processor = {
    id: 'b',
    processOutputStream: ({ part, streamParts }: Loose) => {
      got.push(part.type);
      windows.push((streamParts as Loose[]).map((chunk) => String(chunk?.type)));
      return part;
    },
  } as unknown as Processor;
  return { processor, got, windows };
}

describe('2. one processor writing the streamParts another one reads', () => {
  it(
    "property: any write, at any chunk, sync or async, from a processor before or after the reader: a ProcessorError naming the writer; caught, it wrote nothing and the reader's window is whole",
    async () => {
      await checkProperty(
        'stream-hook-leftovers: streamParts written',
        fc.record({
          write: fc.constantFrom(...WRITES),
          at: fc.integer({ min: 2, max: 8 }), // from the 2nd chunk: reverse() and copyWithin(0, 1) of one chunk write nothing
          async: fc.boolean(),
          catches: fc.boolean(),
          writerFirst: fc.boolean(),
        }),
        async ({ write: [, write], at, async, catches, writerFirst }) => {
          const b = watcher();
          let seen = 0;
          let caught: unknown;
          const writer = {
            id: 'a',
            processOutputStream: (args: Loose) => (async ? Promise.resolve().then(() => act(args)) : act(args)),
          } as unknown as Processor;
          function act({ part, streamParts }: Loose): unknown {
            if (++seen !== at) return part;
            if (!catches) write(streamParts);
            else {
              try {
                write(streamParts);
              } catch (error) {
                caught = error;
              }
            }
            return part;
          }
          const processors = writerFirst ? [writer, b.processor] : [b.processor, writer];
          const chunks = await lastValueFrom(new Agent({ id: 'agent', model: textModel(), outputProcessors: processors }).stream$('Hi').pipe(toArray()));
          if (!catches) {
            expect(processorErrorProblems(chunks, 'a', 'processOutputStream', /streamParts/)).toEqual([]);
            return;
          }
          expect(chunks.at(-1)?.type).toBe('finish');
          expect(ProcessorError.isInstance(caught) && caught.processorId === 'a' && caught.hook === 'processOutputStream').toBe(true);
          // b's window at each chunk: every chunk it got so far, in order, the current one last
          b.windows.forEach((window, index) => expect(window).toEqual(b.got.slice(0, index + 1)));
        },
        CASES,
      );
    },
    TIMEOUT,
  );

  it("a writer's own view is read-only too once it has its own log (an earlier processor rewrote a chunk)", async () => {
    let caught: unknown;
    let windowAfter: number | undefined;
    const rewriter = { id: 'r', processOutputStream: ({ part }: Loose) => (part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: 'x' } } : part) };
    const writer = {
      id: 'a',
      processOutputStream: ({ part, streamParts }: Loose) => {
        if (part.type === 'finish') {
          const before = streamParts.length;
          try {
            streamParts.length = 0;
          } catch (error) {
            caught = error;
          }
          windowAfter = streamParts.length === before ? before : -1;
        }
        return part;
      },
    };
    const chunks = await lastValueFrom(new Agent({ id: 'agent', model: textModel(), outputProcessors: [rewriter, writer] as never }).stream$('Hi').pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(ProcessorError.isInstance(caught) && caught.processorId === 'a').toBe(true);
    expect(windowAfter).toBeGreaterThan(0);
  });

  it('reading works as on an array: length, index, at, slice, filter, map, iteration, spread, Array.isArray, JSON, currentAttemptParts; a held view grows', async () => {
    const problems: string[] = [];
    let held: ChunkType[] | undefined;
    let lastLength = 0;
    const reader = {
      id: 'reader',
      processOutputStream: ({ part, streamParts }: { part: ChunkType; streamParts: ChunkType[] }) => {
        held ??= streamParts;
        const copy: ChunkType[] = [];
        for (let index = 0; index < streamParts.length; index++) copy.push(streamParts[index] as ChunkType);
        const check = (name: string, ok: boolean): void => void (ok || problems.push(`${part.type}: ${name}`));
        check('Array.isArray', Array.isArray(streamParts));
        check('at(-1) is the part', streamParts.at(-1) === part);
        check('[length - 1] is the part', streamParts[streamParts.length - 1] === part);
        check('slice', streamParts.slice().every((chunk, index) => chunk === copy[index]) && Array.isArray(streamParts.slice()));
        check('filter', streamParts.filter((chunk) => chunk.type === part.type).includes(part));
        check('map', streamParts.map((chunk) => chunk.type).join() === copy.map((chunk) => chunk.type).join());
        check('for…of', [...streamParts].length === copy.length);
        check('Array.from', Array.from(streamParts).every((chunk, index) => chunk === copy[index]));
        check('concat spreads it', ([] as ChunkType[]).concat(streamParts).length === copy.length);
        check('indexOf', streamParts.indexOf(part) === copy.length - 1 || copy.indexOf(part) !== copy.length - 1);
        check('keys', Object.keys(streamParts).length === copy.length);
        check('JSON', JSON.stringify(streamParts) === JSON.stringify(copy));
        check('currentAttemptParts', currentAttemptParts(streamParts).at(-1) === part);
        check('held view grows', held.length === streamParts.length && held.length > lastLength);
        lastLength = streamParts.length;
        return part;
      },
    };
    const chunks = await lastValueFrom(new Agent({ id: 'agent', model: textModel(), outputProcessors: [reader] }).stream$('Hi').pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(problems).toEqual([]);
    expect(lastLength).toBeGreaterThan(5);
  });

  it('a processor that sets args.streamParts to its own array keeps it (its own args), and the next processor still sees the log', async () => {
    const b = watcher();
    const own = {
      id: 'a',
      processOutputStream: (args: Loose) => {
        args.streamParts = [];
        return args.part;
      },
    } as unknown as Processor;
    const chunks = await lastValueFrom(new Agent({ id: 'agent', model: textModel(), outputProcessors: [own, b.processor] }).stream$('Hi').pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('finish');
    b.windows.forEach((window, index) => expect(window).toEqual(b.got.slice(0, index + 1)));
  });
});

// ---------------------------------------------------------------------------------------------
// 3. a `type` getter that throws, defined in place on the part by the hook
// ---------------------------------------------------------------------------------------------

/** How the hook hands back (or drops) the part it broke: the ways of {@link RETURNS}, and `null` / `undefined`, at once or resolved. */
const HAND_BACKS: Array<[string, (part: Loose) => unknown]> = [
  ...RETURNS,
  ['null', () => null],
  ['undefined', () => undefined],
  ['a promise of null', () => Promise.resolve(null)],
  ['of(null).pipe(delay(1))', () => of(null).pipe(delay(1))],
];

describe('3. processOutputStream defining a type getter that throws on the part it got', () => {
  it(
    'property: any chunk type, however handed back or dropped, traced or not: a ProcessorError naming that processor (not the one before it); the one after it is not reached',
    async () => {
      await checkProperty(
        'stream-hook-leftovers: throwing type getter',
        fc.record({
          target: fc.constantFrom('text-delta', 'text-start', 'tool-call', 'tool-call-delta', 'step-start', 'step-finish', 'finish'),
          handBack: fc.constantFrom(...HAND_BACKS),
          traced: fc.boolean(),
        }),
        async ({ target, handBack: [, handBack], traced }) => {
          executed.length = 0;
          const after: string[] = [];
          const agent = new Agent({
            id: 'agent',
            model: toolModel(),
            tools,
            outputProcessors: [
              { id: 'before', processOutputStream: ({ part }: Loose) => part } as unknown as Processor,
              {
                id: 'hostile',
                processOutputStream: ({ part }: Loose) => {
                  if (part.type !== target) return part;
                  Object.defineProperty(part, 'type', {
                    get() {
                      throw new Error('no type for you');
                    },
                  });
                  return handBack(part);
                },
              } as unknown as Processor,
              { id: 'after', processOutputStream: ({ part }: Loose) => (after.push(String(part.type)), part) } as unknown as Processor,
            ],
          });
          const tracingContext = traced ? { onHook: () => undefined } : undefined;
          const chunks = await lastValueFrom(agent.stream$('Weather in Paris?', tracingContext === undefined ? {} : { tracingContext }).pipe(toArray()));
          expect(processorErrorProblems(chunks, 'hostile', 'processOutputStream', /no type for you/)).toEqual([]);
          expect(after).not.toContain(target);
          if (target === 'tool-call') expect(executed).toEqual([]);
        },
        CASES,
      );
    },
    TIMEOUT,
  );
});
