/**
 * The gate of the model-backed guards (`CheckedTextStream`) across text blocks: a block boundary
 * is held with the text before it, a span is judged joined and released re-split into its blocks.
 */
import { from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { CheckedStream, type StreamMode } from '../../src/processors/internal/checked-stream.js';
import { valueRegions, type Verdict } from '../../src/processors/internal/judged-spans.js';

type SpanCheck = (span: string) => Verdict | Promise<Verdict>;
import { chunk } from '../../src/testing/chunk-builders.js';
import { runOutputStream, textBlock } from './support/harness.js';

/** A guard over `CheckedTextStream` that records every judged span. */
function gate(options: { streamMode?: StreamMode; windowSize?: number }, check: SpanCheck): { processor: Processor; spans: string[] } {
  const spans: string[] = [];
  const stream = new CheckedStream({ ...options, stateKey: 'held', processorId: 'gate' });
  const processor: Processor = {
    id: 'gate',
    processDataParts: true,
    processOutputStream: ({ part, state, abort }) =>
      stream.process(part, state, abort, async ({ text }) => {
        spans.push(text);
        return check(text);
      }),
  };
  return { processor, spans };
}

/** Redacts `jane.doe@example.org` wherever a span holds it whole. */
const redactEmail: SpanCheck = (span) =>
  span.includes('jane.doe@example.org') ? { action: 'replace', replacements: new Map([['jane.doe@example.org', '[EMAIL]']]) } : { action: 'keep' };

/** Chunk types with their block id and text, for exact sequences. */
function shape(chunks: readonly ChunkType[]): string[] {
  return chunks.map((part) => {
    if (part.type === 'text-delta') return `delta:${part.payload.id}:${part.payload.text}`;
    if (part.type === 'text-start' || part.type === 'text-end') return `${part.type}:${part.payload.id}`;
    return part.type;
  });
}

const splitEmail = (): ChunkType[] => [...textBlock(['Mail jane.doe@exa'], 'b1'), ...textBlock(['mple.org', ' now.'], 'b2')];

describe('CheckedTextStream across text blocks', () => {
  it("'final': one call for the run of blocks, released at finish, re-split with the redaction in the block where the value started", async () => {
    const { processor, spans } = gate({ streamMode: 'final' }, redactEmail);
    const output = await runOutputStream([processor], [chunk.stepStart(), ...splitEmail(), chunk.stepFinish(), chunk.finish()]);
    expect(spans).toEqual(['Mail jane.doe@example.org now.']);
    expect(shape(output)).toEqual([
      'step-start',
      'text-start:b1',
      'delta:b1:Mail [EMAIL]',
      'text-end:b1',
      'text-start:b2',
      'delta:b2: now.',
      'text-end:b2',
      'step-finish',
      'finish',
    ]);
  });

  it("'final': a value covering the whole next block leaves that block empty but bracketed", async () => {
    const { processor } = gate({ streamMode: 'final' }, redactEmail);
    const output = await runOutputStream([processor], [...textBlock(['Mail jane.doe@'], 'b1'), ...textBlock(['example.org'], 'b2'), ...textBlock([' ok'], 'b3'), chunk.finish()]);
    expect(shape(output)).toEqual(['text-start:b1', 'delta:b1:Mail [EMAIL]', 'text-end:b1', 'text-start:b2', 'text-end:b2', 'text-start:b3', 'delta:b3: ok', 'text-end:b3', 'finish']);
  });

  it("'window': a window spans the boundary; windows end at sentence boundaries; what is released together is merged per block", async () => {
    const { processor, spans } = gate({ streamMode: 'window', windowSize: 20 }, redactEmail);
    const chunks = [...textBlock(['First sentence here. ', 'Mail jane.doe@exa'], 'b1'), ...textBlock(['mple.org now. ', 'Last one here.'], 'b2'), chunk.finish()];
    const output = await runOutputStream([processor], chunks);
    expect(spans).toEqual(['First sentence here.', ' Mail jane.doe@example.org now.', ' Last one here.']);
    expect(shape(output)).toEqual([
      'text-start:b1',
      'delta:b1:First sentence here. Mail [EMAIL]',
      'text-end:b1',
      'text-start:b2',
      'delta:b2: now. Last one here.',
      'text-end:b2',
      'finish',
    ]);
  });

  it('nothing of a run of blocks is released before its span is judged', async () => {
    const { processor, spans } = gate({ streamMode: 'final' }, () => ({ action: 'keep' }));
    // no finish yet: the boundary and the next block stay held with the text
    const output = await runOutputStream([processor], splitEmail());
    expect(shape(output)).toEqual(['text-start:b1']);
    expect(spans).toEqual([]);
  });

  it('any chunk outside the text channel releases the held blocks first, in order (tool call, data chunk, reasoning)', async () => {
    const { processor, spans } = gate({ streamMode: 'final' }, redactEmail);
    const output = await runOutputStream(
      [processor],
      [
        ...textBlock(['one '], 'b1'),
        chunk.data('data-progress', { step: 1 }),
        ...textBlock(['two '], 'b2'),
        ...textBlock(['three'], 'b3'),
        chunk.reasoningStart(),
        chunk.reasoningEnd(),
        ...textBlock(['four'], 'b4'),
        chunk.toolCall({ toolCallId: 'c1', toolName: 'noop', args: {} }),
        chunk.stepFinish(),
      ],
    );
    expect(spans).toEqual(['one ', 'step', 'two three', 'four']); // the data chunk's key is content too
    expect(shape(output)).toEqual([
      'text-start:b1',
      'delta:b1:one ',
      'text-end:b1',
      'data-progress',
      'text-start:b2',
      'delta:b2:two ',
      'text-end:b2',
      'text-start:b3',
      'delta:b3:three',
      'text-end:b3',
      'reasoning-start',
      'reasoning-end',
      'text-start:b4',
      'delta:b4:four',
      'text-end:b4',
      'tool-call',
      'step-finish',
    ]);
  });

  it("a dropped span ('filter') keeps its block boundaries", async () => {
    const { processor } = gate({ streamMode: 'final' }, () => ({ action: 'drop' }));
    const output = await runOutputStream([processor], [...splitEmail(), chunk.finish()]);
    expect(shape(output)).toEqual(['text-start:b1', 'text-end:b1', 'text-start:b2', 'text-end:b2', 'finish']);
  });

  it('a judge that throws (an abort, a fail-closed judge) releases nothing of the held blocks', async () => {
    const { processor } = gate({ streamMode: 'final' }, () => {
      throw new Error('judge failed');
    });
    const emitted: string[] = [];
    const error = await new Promise<unknown>((resolve) => {
      from([...splitEmail(), chunk.finish()])
        .pipe(processOutputStream([processor], createRunContext()))
        .subscribe({ next: (part) => emitted.push(...shape([part])), error: resolve, complete: () => resolve(undefined) });
    });
    expect(error).toBeInstanceOf(Error);
    expect(emitted).toEqual(['text-start:b1']);
  });
});

describe('valueRegions', () => {
  it('finds every occurrence, longest value first, never overlapping', () => {
    const replacements = new Map([
      ['Jane', '[NAME]'],
      ['Jane Doe', '[FULL]'],
      ['a@b.co', '[EMAIL]'],
    ]);
    expect(valueRegions('Jane Doe (a@b.co), Jane', replacements)).toEqual([
      { start: 0, end: 8, replacement: '[FULL]' },
      { start: 10, end: 16, replacement: '[EMAIL]' },
      { start: 19, end: 23, replacement: '[NAME]' },
    ]);
  });

  it('ignores empty values and takes repeated values left to right', () => {
    expect(valueRegions('aaaa', new Map([['', 'x'], ['aa', 'b']]))).toEqual([
      { start: 0, end: 2, replacement: 'b' },
      { start: 2, end: 4, replacement: 'b' },
    ]);
  });
});
