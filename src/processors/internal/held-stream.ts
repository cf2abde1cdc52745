/**
 * Hold-back of streamed text for guards that must see a match whole before any of it reaches the
 * client: a secret split across deltas, or across the text blocks of a step, is found like one
 * sent in a single chunk.
 *
 * A *channel* is one streamed text: the step's text (`text-*` chunks), its reasoning
 * (`reasoning-*`) or one tool call's input (`tool-call-input-streaming-*` / `tool-call-delta`).
 * The held text of a channel is made of runs in arrival order (one per block id and holder's
 * segment tag, so interleaved blocks stay apart). Only the last `carry` characters stay held (more
 * when a match crosses the cut, up to `maxHold`), with the block boundaries among them; a chunk of
 * another channel or any other chunk flushes it first.
 *
 * Cost: a scan looks at the held text plus a short context, and runs only once `step` new
 * characters arrived, so n streamed characters cost O(n) scanning (the held text is bounded).
 */
import type { ChunkType } from '../../contract/index.js';
import { chunkLike } from './chunks.js';

/** A held piece of streamed text, re-emitted through `template`'s kind and block id. */
interface HeldRun {
  id: string;
  text: string;
  template: ChunkType;
  /** The holder's tag for the text this piece belongs to (see {@link holdText}). */
  segment: unknown;
}

type HeldItem = { run: HeldRun; chunk?: undefined } | { chunk: ChunkType; run?: undefined };

/** One channel's held content (kept in the processor's run `state`). */
export interface HeldChannel {
  channel: string;
  items: HeldItem[];
  /** Characters of text held. */
  length: number;
  /** Hold length from which the next scan runs. */
  nextScanAt: number;
}

/** A span of the held text to replace (offsets into the held text; `start` may be 0 for a continuation). */
export interface HeldRegion {
  start: number;
  end: number;
  replacement: string;
}

/** Which channel a chunk belongs to and whether it carries text; `undefined` for other chunks. */
export function channelOf(part: ChunkType): { channel: string; text: string | undefined; id: string } | undefined {
  switch (part.type) {
    case 'text-start':
    case 'text-end':
      return { channel: 'text', text: undefined, id: part.payload.id };
    case 'text-delta':
      return { channel: 'text', text: part.payload.text ?? '', id: part.payload.id };
    case 'reasoning-start':
    case 'reasoning-end':
      return { channel: 'reasoning', text: undefined, id: part.payload.id };
    case 'reasoning-delta':
      return { channel: 'reasoning', text: part.payload.text ?? '', id: part.payload.id };
    case 'tool-call-input-streaming-start':
    case 'tool-call-input-streaming-end':
      return { channel: `tool-input:${part.payload.toolCallId}`, text: undefined, id: part.payload.toolCallId };
    case 'tool-call-delta':
      return { channel: `tool-input:${part.payload.toolCallId}`, text: part.payload.argsTextDelta ?? '', id: part.payload.toolCallId };
    default:
      return undefined;
  }
}

/** A new, empty hold for `channel`. */
export function openChannel(channel: string): HeldChannel {
  return { channel, items: [], length: 0, nextScanAt: 0 };
}

/**
 * Adds streamed text (of block `id`, re-emitted like `template`) to the hold. `segment` is the
 * holder's tag for the text it belongs to (compared by identity; pieces of different segments are
 * never merged), read back with {@link heldRuns}.
 */
export function holdText(held: HeldChannel, id: string, text: string, template: ChunkType, segment: unknown = undefined): void {
  if (text === '') return;
  const last = held.items[held.items.length - 1];
  if (last?.run !== undefined && last.run.id === id && last.run.segment === segment) last.run.text += text;
  else held.items.push({ run: { id, text, template, segment } });
  held.length += text.length;
}

/** A held piece of text: its segment tag and its offsets in the held text. */
export interface HeldPiece {
  segment: unknown;
  start: number;
  end: number;
}

/** The held text's pieces, in arrival order. */
export function heldRuns(held: HeldChannel): HeldPiece[] {
  const pieces: HeldPiece[] = [];
  let position = 0;
  for (const item of held.items) {
    if (item.run === undefined) continue;
    pieces.push({ segment: item.run.segment, start: position, end: position + item.run.text.length });
    position += item.run.text.length;
  }
  return pieces;
}

/** Adds a block boundary (`*-start` / `*-end`) to the hold, after the text before it. */
export function holdChunk(held: HeldChannel, chunk: ChunkType): void {
  held.items.push({ chunk });
}

/** The held text as one string. */
export function heldText(held: HeldChannel): string {
  let text = '';
  for (const item of held.items) if (item.run !== undefined) text += item.run.text;
  return text;
}

function deltaLike(template: ChunkType, id: string, text: string): ChunkType {
  switch (template.type) {
    case 'reasoning-delta':
      return chunkLike(template, 'reasoning-delta', { ...template.payload, id, text });
    case 'tool-call-delta':
      return chunkLike(template, 'tool-call-delta', { ...template.payload, argsTextDelta: text });
    case 'text-delta':
      return chunkLike(template, 'text-delta', { ...template.payload, id, text });
    default:
      return template;
  }
}

/**
 * Emits the held content up to held-text offset `upTo` with `regions` (sorted, disjoint, within
 * `[0, upTo]`) replaced, and removes it from the hold. Boundary chunks at or before `upTo` are
 * emitted too, except those at the very end of the hold when `keepTrailing` is set (a block end
 * is held so the next block can continue a match).
 */
export function releaseHeld(held: HeldChannel, upTo: number, regions: readonly HeldRegion[], keepTrailing: boolean): ChunkType[] {
  const outputs: ChunkType[] = [];
  let position = 0;
  let regionIndex = 0;
  let consumed = 0;
  for (const item of held.items) {
    if (item.chunk !== undefined) {
      if (position > upTo || (keepTrailing && position === held.length)) break;
      outputs.push(item.chunk);
      consumed++;
      continue;
    }
    const run = item.run;
    const runStart = position;
    const runEnd = position + run.text.length;
    if (runStart >= upTo && run.text.length > 0) break;
    const sliceEnd = Math.min(runEnd, upTo);
    let text = '';
    let cursor = runStart;
    while (cursor < sliceEnd) {
      const region = regions[regionIndex];
      if (region === undefined || region.start >= sliceEnd) {
        text += run.text.slice(cursor - runStart, sliceEnd - runStart);
        cursor = sliceEnd;
        break;
      }
      if (region.start >= cursor) {
        text += run.text.slice(cursor - runStart, region.start - runStart) + region.replacement;
        cursor = region.start;
      }
      const regionEnd = Math.min(region.end, sliceEnd);
      cursor = Math.max(cursor, regionEnd);
      if (region.end <= sliceEnd) regionIndex++;
      else break;
    }
    // Regions continuing past this run were already replaced in it: skip their characters.
    if (text !== '') outputs.push(deltaLike(run.template, run.id, text));
    if (sliceEnd < runEnd) {
      run.text = run.text.slice(sliceEnd - runStart);
      position = upTo;
      break;
    }
    position = runEnd;
    consumed++;
  }
  held.items.splice(0, consumed);
  held.length -= upTo;
  return outputs;
}
