/**
 * A run's chunks as a marble diagram and its values: the string and the object a `TestScheduler`
 * test takes (`cold(diagram, values)` to replay the run into a processor, or
 * `expectObservable(run$).toBe(diagram, values)` to pin a run down), plus a snippet that writes
 * the values with `rxagent/testing`'s chunk builders.
 */
import type { ChunkType } from '../contract/index.js';
import { createChunkBuilders, DEFAULT_REASONING_ID, DEFAULT_TEXT_ID, testUsage, type ChunkBuilders } from '../testing/index.js';
import { escapeText, jsLiteral, quote, sameValue, type LiteralOverride } from './internal/js-literal.js';

/**
 * Options of {@link toMarbleDiagram}.
 *
 * @example
 * ```ts
 * import type { MarbleExportOptions } from 'rxagent/devtools';
 * const options: MarbleExportOptions = { groups: [0, 0, 1], title: 'refund question' };
 * ```
 */
export interface MarbleExportOptions {
  /**
   * One number per chunk: consecutive chunks with the same number were emitted together and share
   * a frame (`(abc)`). Default: every chunk its own frame. The inspector records these (chunks of
   * one synchronous burst share a group), so a run with no asynchronous step is one group.
   */
  groups?: readonly number[];
  /** End the diagram with `|` (the run completed). Default `true`. */
  complete?: boolean;
  /**
   * A line for the snippet's header comment, written with the same escaper as the string literals
   * (a line break or a comment end in it is written as an escape, never as itself).
   */
  title?: string;
  /**
   * Also write a ready-to-run vitest `it()` that replays the run on virtual time
   * (`expectObservable(cold(diagram, values)).toBe(diagram, values)`), with a comment saying how to
   * pin an agent down instead. `true`, or the test's name and the run's input (for that comment).
   * Default: the snippet defines `diagram` and `values` only.
   */
  test?: boolean | MarbleTestOptions;
}

/**
 * What the `it()` of a test export says (see {@link MarbleExportOptions.test}).
 *
 * @example
 * ```ts
 * import { toMarbleDiagram, type MarbleTestOptions } from 'rxagent/devtools';
 * const test: MarbleTestOptions = { name: 'the refund run replays', input: 'Can I get a refund?' };
 * const { code } = toMarbleDiagram(chunks, { test });
 * ```
 */
export interface MarbleTestOptions {
  /** The test's name. Default: `replays run <runId> as recorded`. */
  name?: string;
  /** What the run was asked: written (escaped) into the comment that shows how to pin an agent down. */
  input?: string;
}

/**
 * A marble diagram of a run and what it takes to run it in a test.
 *
 * @example
 * ```ts
 * import { toMarbleDiagram, type MarbleExport } from 'rxagent/devtools';
 * const exported: MarbleExport = toMarbleDiagram(result.chunks);
 * console.log(exported.code);
 * ```
 */
export interface MarbleExport {
  /** One character per distinct chunk, `( )` around chunks emitted together, `-` between frames, `|` at the end. */
  diagram: string;
  /** The chunks, keyed by the diagram's characters. */
  values: Record<string, ChunkType>;
  /**
   * A snippet for a test file: `diagram` and `values` (`satisfies Record<string, ChunkType>`, so it
   * type-checks as pasted), written with `createChunkBuilders` (and `testUsage`); with
   * `options.test`, also the `it()` that replays them.
   */
  code: string;
  /**
   * `false` when a value holds something a literal cannot rebuild (a function, a class instance, a
   * part that throws when read, or more than 100,000 values written out, as a structure sharing its
   * parts can be): the snippet's header says so.
   */
  exact: boolean;
}

/**
 * Characters a diagram can use as value keys: none is marble syntax (`-`, `|`, `#`, `(`, `)`, `^`,
 * `!`, space, and digits, which may start a time progression), each is one UTF-16 code unit.
 */
function keyAt(index: number): string {
  const ranges: Array<[number, number]> = [
    [0x61, 26], // a-z
    [0x41, 26], // A-Z
    [0x3b1, 25], // Greek small letters α…ω (with ς)
    [0x391, 17], // Greek capitals Α…Ρ
    [0x3a3, 7], // Σ…Ω
    [0x430, 32], // Cyrillic а…я
    [0x410, 32], // А…Я
    [0x4e00, 20_000], // CJK ideographs, for very long runs
  ];
  let rest = index;
  for (const [start, size] of ranges) {
    if (rest < size) return String.fromCharCode(start + rest);
    rest -= size;
  }
  throw new RangeError(`toMarbleDiagram: more than ${index} distinct chunks`);
}

interface Call {
  builder: keyof ChunkBuilders;
  args: unknown[];
}

/** The builder calls that might rebuild `chunk` (the first that does, exactly, is used). */
function candidates(chunk: ChunkType): Call[] {
  const payload = (chunk as { payload?: Record<string, unknown> }).payload ?? {};
  const withId = (builder: keyof ChunkBuilders, fallbackId: string, text?: unknown): Call => {
    const id = payload.id === fallbackId ? [] : [payload.id];
    return { builder, args: text === undefined ? id : [text, ...id] };
  };
  switch (chunk.type) {
    case 'start':
      return [{ builder: 'start', args: payload.messageId === undefined ? [] : [payload.messageId] }];
    case 'step-start':
      return [{ builder: 'stepStart', args: [payload.stepNumber] }];
    case 'text-start':
      return [withId('textStart', DEFAULT_TEXT_ID)];
    case 'text-delta':
      return [withId('textDelta', DEFAULT_TEXT_ID, payload.text)];
    case 'text-end':
      return [withId('textEnd', DEFAULT_TEXT_ID)];
    case 'reasoning-start':
      return [withId('reasoningStart', DEFAULT_REASONING_ID)];
    case 'reasoning-delta':
      return [withId('reasoningDelta', DEFAULT_REASONING_ID, payload.text)];
    case 'reasoning-end':
      return [withId('reasoningEnd', DEFAULT_REASONING_ID)];
    case 'tool-call':
      return [{ builder: 'toolCall', args: [payload] }];
    case 'tool-result':
      return [{ builder: 'toolResult', args: [payload] }];
    case 'tool-error':
      return [{ builder: 'toolError', args: [payload] }];
    case 'tripwire':
      return [{ builder: 'tripwire', args: [payload] }];
    case 'error':
      return [{ builder: 'error', args: [payload.error] }];
    case 'abort':
      return [{ builder: 'abort', args: payload.reason === undefined ? [] : [payload.reason] }];
    case 'finish': {
      const { stepResult, output } = payload as { stepResult?: { reason?: unknown }; output?: { text?: unknown; usage?: unknown } };
      return [{ builder: 'finish', args: [stepResult?.reason, { text: output?.text, usage: output?.usage }] }];
    }
    case 'step-finish': {
      const { stepResult, output } = payload as {
        stepResult?: { reason?: unknown; isContinued?: unknown };
        output?: { text?: unknown; toolCalls?: unknown; usage?: unknown };
      };
      const init = {
        stepNumber: payload.stepNumber,
        reason: stepResult?.reason,
        isContinued: stepResult?.isContinued,
        text: output?.text,
        toolCalls: output?.toolCalls,
        usage: output?.usage,
        messageId: payload.messageId,
      };
      return [{ builder: 'stepFinish', args: [init] }];
    }
    default:
      if (chunk.type.startsWith('data-')) {
        const data = chunk as { type: string; data?: unknown; transient?: boolean; id?: string };
        const options = { transient: data.transient, id: data.id };
        return [{ builder: 'data', args: options.transient === undefined && options.id === undefined ? [data.type, data.data] : [data.type, data.data, options] }];
      }
      return [];
  }
}

/** Writes a usage object that `testUsage(counts)` rebuilds as that call. */
const usageOverride: LiteralOverride = (value) => {
  if (value === null || typeof value !== 'object' || !('inputTokenDetails' in value)) return undefined;
  const usage = value as { inputTokens?: unknown; outputTokens?: unknown; totalTokens?: unknown };
  const counts: Record<string, number> = {};
  for (const key of ['inputTokens', 'outputTokens', 'totalTokens'] as const) {
    if (typeof usage[key] === 'number') counts[key] = usage[key];
  }
  if (!sameValue(testUsage(counts), value)) return undefined;
  const { totalTokens, ...rest } = counts;
  const sum = (rest.inputTokens ?? 0) + (rest.outputTokens ?? 0);
  const written = totalTokens === undefined || totalTokens === sum ? rest : counts;
  return `testUsage(${jsLiteral(written).code})`;
};

/** Source text rebuilding `chunk`: a builder call when one rebuilds it exactly, else an object literal. */
function chunkSource(chunk: ChunkType, builders: ChunkBuilders): { code: string; exact: boolean; usesUsage: boolean } {
  let calls: Call[];
  try {
    calls = candidates(chunk);
  } catch {
    calls = []; // a chunk whose fields cannot be read: written as far as the literal can
  }
  for (const call of calls) {
    let built: unknown;
    try {
      built = (builders[call.builder] as (...args: unknown[]) => unknown)(...call.args);
    } catch {
      continue;
    }
    if (!sameValue(built, chunk)) continue;
    let args = call.args;
    while (args.length > 0 && args[args.length - 1] === undefined) args = args.slice(0, -1);
    const written = args.map((arg) => jsLiteral(arg, usageOverride));
    const code = `chunk.${call.builder}(${written.map((literal) => literal.code).join(', ')})`;
    return { code, exact: written.every((literal) => literal.exact), usesUsage: code.includes('testUsage(') };
  }
  const literal = jsLiteral(chunk, usageOverride);
  return { ...literal, usesUsage: literal.code.includes('testUsage(') };
}

/** A chunk's run id, if it has one that can be read. */
function runIdOf(chunk: ChunkType): string | undefined {
  try {
    const runId: unknown = chunk.runId;
    return typeof runId === 'string' ? runId : undefined;
  } catch {
    return undefined; // a chunk that throws when read (a Proxy): written as far as the literal can
  }
}

/** The `it()` of a test export: the run replayed on virtual time, and how to pin an agent down instead. */
function testLines(test: MarbleTestOptions, runId: string): string[] {
  const input = test.input === undefined ? 'input' : quote(test.input);
  return [
    `it(${quote(test.name ?? `replays run ${runId} as recorded`)}, () => {`,
    '  createTestScheduler().run(({ cold, expectObservable }) => {',
    // the input is data: quote() writes it with the one escaper (no line break, no comment end)
    `    // pin an agent down instead (synchronous model, processors and tools; a deterministic generateId): agent.stream$(${input}, { runId: chunk.runId })`,
    '    const run$ = cold(diagram, values);',
    '    expectObservable(run$).toBe(diagram, values);',
    '  });',
    '});',
    '',
  ];
}

/**
 * A run's chunks as a marble diagram, its values, and a snippet that rebuilds the values with
 * `rxagent/testing`'s chunk builders (each builder call is checked to rebuild its chunk exactly;
 * a chunk no builder fits is written as an object literal). Equal chunks share a character.
 *
 * Time is not kept: chunks emitted together (`groups`) share a frame, the others are one frame
 * apart. Replay the run with `cold(diagram, values)`; a run that is synchronous end to end (an
 * offline model, synchronous processors and tools) is one group, and
 * `expectObservable(agent.stream$(…)).toBe(diagram, values)` reproduces it on virtual time (give
 * the run the same `runId`, and the agent a deterministic `generateId`).
 *
 * @example
 * ```ts
 * import { toMarbleDiagram } from 'rxagent/devtools';
 * const { chunks } = await agent.generate('Hello', { runId: 'run-1' });
 * const { diagram, values } = toMarbleDiagram(chunks);
 * createTestScheduler().run(({ cold, expectObservable }) => expectObservable(cold(diagram, values)).toBe(diagram, values));
 * ```
 */
export function toMarbleDiagram(chunks: readonly ChunkType[], options: MarbleExportOptions = {}): MarbleExport {
  const { groups, complete = true } = options;
  if (groups !== undefined && groups.length !== chunks.length) {
    throw new TypeError(`toMarbleDiagram: options.groups has ${groups.length} entries for ${chunks.length} chunks (one per chunk).`);
  }
  const runId = chunks.map(runIdOf).find((id) => id !== undefined) ?? 'test-run';
  const builders = createChunkBuilders(runId);
  const keyOfCode = new Map<string, string>();
  const values: Record<string, ChunkType> = {};
  const lines: string[] = [];
  let exact = true;
  let usesUsage = false;
  const keys = chunks.map((chunk) => {
    const source = chunkSource(chunk, builders);
    exact &&= source.exact;
    usesUsage ||= source.usesUsage;
    let key = keyOfCode.get(source.code);
    if (key === undefined) {
      key = keyAt(keyOfCode.size);
      keyOfCode.set(source.code, key);
      values[key] = chunk;
      lines.push(`  ${key}: ${source.code},`);
    }
    return key;
  });
  const frames: string[][] = [];
  keys.forEach((key, index) => {
    const group = groups?.[index] ?? index;
    const previous = index === 0 ? undefined : (groups?.[index - 1] ?? index - 1);
    if (frames.length === 0 || group !== previous) frames.push([]);
    (frames[frames.length - 1] as string[]).push(key);
  });
  if (complete) {
    if (frames.length === 0) frames.push([]);
    (frames[frames.length - 1] as string[]).push('|');
  }
  const diagram = frames.map((frame) => (frame.length === 1 ? (frame[0] as string) : `(${frame.join('')})`)).join('-');
  const test = options.test === true ? {} : options.test === false ? undefined : options.test;
  const imports = [...(test === undefined ? [] : ['createTestScheduler']), 'createChunkBuilders', ...(usesUsage ? ['testUsage'] : [])].join(', ');
  const header = [
    // the title and run id are data: escaped (no line terminator, no comment end) like every string below
    `// ${escapeText(options.title ?? `Run ${runId}`)}: ${chunks.length} chunks, exported by the rxagent inspector.`,
    '// Replay it with cold(diagram, values), or pin a run down with expectObservable(run$).toBe(diagram, values).',
    "// Chunks in ( ) were emitted together; the frames keep the run's order, not its timing.",
    ...(exact
      ? []
      : ['// Not exact: some values held functions, class instances or parts that could not be read or written in full; they are written here as plain objects or undefined.']),
  ];
  const code = [
    ...header,
    ...(test === undefined ? [] : ["import { it } from 'vitest';"]),
    "import type { ChunkType } from 'rxagent';",
    `import { ${imports} } from 'rxagent/testing';`,
    '',
    `const chunk = createChunkBuilders(${quote(runId)});`,
    `const diagram = ${quote(diagram)};`,
    'const values = {',
    ...lines,
    '} satisfies Record<string, ChunkType>;',
    '',
    ...(test === undefined ? [] : testLines(test, runId)),
  ].join('\n');
  return { diagram, values, code, exact };
}
