/**
 * The stream half of `RegexFilterProcessor`: streamed text, reasoning and tool-call input held
 * back (see `held-stream.ts`) and scanned incrementally; every other chunk's text-bearing fields
 * filtered whole.
 */
import type { AbortFunction, ChunkType, ProcessorState } from '../../contract/index.js';
import type { RegexFilterChannel } from '../regex-filter-types.js';
import { channelOf, heldText, holdChunk, holdText, openChannel, releaseHeld, type HeldChannel, type HeldRegion } from './held-stream.js';
import type { NormalizedText } from './normalized-text.js';
import type { RegexMatcher } from './regex-matcher.js';

/** A matcher and how its stream is held. */
export interface StreamFilter {
  readonly matcher: RegexMatcher;
  readonly channels: ReadonlySet<RegexFilterChannel>;
  /** Trailing characters held back. */
  readonly carryover: number;
  /** Most text a straddling match may keep held. */
  readonly maxHold: number;
  /** New characters between scans. */
  readonly scanStep: number;
}

const HELD_KEY = 'regexFilterHeld';
const CONTEXT_KEY = 'regexFilterContext';
/** Starts of matches the stream released before their continuation arrived (state key). */
export const FRAGMENTS_KEY = 'regexFilterFragments';
/** Characters of already released text kept as look-behind context for the next scan. */
const CONTEXT_SIZE = 32;
/**
 * Most original characters one character of the view may come from (`&#x10FFFF;`, `\uD83D\uDE00`,
 * `%F0%9F%98%80`): the hold keeps `carryover` characters *of the view*, up to this many times as
 * many original ones.
 */
const MAX_EXPANSION = 12;

/**
 * Where to cut the held text (of length `textLength`, after `contextLength` characters of
 * context) so that `carryover` characters of the view stay held: encoded text reads shorter than
 * it is written, so a secret written as `\u0073\u006b…` is held as long as `sk…` would be.
 */
function holdCut(view: NormalizedText, contextLength: number, textLength: number, carryover: number): number {
  const plain = Math.max(0, textLength - carryover);
  if (view.starts === undefined) return plain;
  const at = view.text.length - carryover;
  const viewCut = at <= 0 ? 0 : (view.starts[at] as number) - contextLength;
  return Math.max(0, textLength - carryover * MAX_EXPANSION, Math.min(plain, viewCut));
}

/** The chunks to emit for `part` (held text released before it, in order). */
export function streamOutputs(filter: StreamFilter, part: ChunkType, state: ProcessorState, abort: AbortFunction): ChunkType[] {
  const outputs: ChunkType[] = [];
  let held = state[HELD_KEY] as HeldChannel | undefined;
  const channel = channelOf(part);
  const checked = channel !== undefined && filter.channels.has(channel.channel.startsWith('tool-input:') ? 'tool-input' : (channel.channel as RegexFilterChannel));
  if (held !== undefined && (!checked || held.channel !== channel?.channel)) {
    outputs.push(...releaseReady(filter, held, state, abort, true));
    held = undefined;
    state[HELD_KEY] = undefined;
  }
  if (channel === undefined || !checked) {
    outputs.push(filterChunk(filter, part, abort));
    return outputs;
  }
  if (channel.text === undefined) {
    // A block boundary (`text-end`, the next `text-start`) is held with the text before it, so a
    // match continuing in the next block of the channel is replaced whole. The hold is released
    // by any other chunk: a tool call, the step's end, or the `finish` the runtime sends through
    // the processors at the end of the last step's output, before the step's message is built.
    if (held !== undefined && held.items.length > 0) holdChunk(held, part);
    else outputs.push(part);
    return outputs;
  }
  if (held === undefined) {
    held = openChannel(channel.channel);
    state[HELD_KEY] = held;
  }
  holdText(held, channel.id, channel.text, part);
  if (held.length >= held.nextScanAt) outputs.push(...releaseReady(filter, held, state, abort, false));
  return outputs;
}

/** Scans the held text and releases what can no longer be part of a match (all of it when `flushing`). */
function releaseReady(filter: StreamFilter, held: HeldChannel, state: ProcessorState, abort: AbortFunction, flushing: boolean): ChunkType[] {
  const contexts = (state[CONTEXT_KEY] as Record<string, string> | undefined) ?? {};
  const context = contexts[held.channel] ?? '';
  const text = heldText(held);
  const logical = context + text;
  // Tool-call input is JSON text: matched as the client's parse and the tool read it.
  const json = held.channel.startsWith('tool-input:');
  const view = filter.matcher.viewOf(logical, json);
  // Scan from the context's start: a match begun in text already released (the previous block,
  // or a cut forced through a long match) has its continuation here redacted.
  const found = filter.matcher.regionsOf(logical, 0, view).filter((region) => region.end > context.length);
  let cut = flushing ? text.length : holdCut(view, context.length, text.length, filter.carryover);
  if (!flushing) {
    for (const region of found) {
      const start = region.start - context.length;
      if (start < cut && region.end - context.length > cut) cut = Math.max(0, start);
    }
    // A match may hold the text back only up to `maxHold`; past that, the cut goes through it.
    if (text.length - cut > filter.maxHold) cut = text.length - filter.carryover;
  }
  const released = found.filter((region) => region.start - context.length < cut);
  const replacements = filter.matcher.enforce(logical, released, 'output', abort, 'streaming content');
  const regions: HeldRegion[] = [];
  for (const region of released) {
    const replacement = replacements.get(region);
    if (replacement === undefined) continue;
    if (region.start < context.length && held.channel === 'text' && replacement !== logical.slice(region.start, region.end)) {
      // A match begun in text released before a tool call (the next step continues it): that
      // part has streamed; the stored reply loses it (see processOutputResult).
      const fragments = (state[FRAGMENTS_KEY] as string[] | undefined) ?? [];
      fragments.push(logical.slice(region.start, context.length));
      state[FRAGMENTS_KEY] = fragments;
    }
    // in JSON text the replacement is written as the inside of a JSON string
    const written = json ? JSON.stringify(replacement).slice(1, -1) : replacement;
    regions.push({ start: Math.max(0, region.start - context.length), end: Math.min(cut, region.end - context.length), replacement: written });
  }
  const outputs = cut > 0 || flushing ? releaseHeld(held, cut, regions, !flushing) : [];
  contexts[held.channel] = logical.slice(Math.max(0, context.length + cut - CONTEXT_SIZE), context.length + cut);
  state[CONTEXT_KEY] = contexts;
  held.nextScanAt = held.length + filter.scanStep;
  return outputs;
}

/** A chunk that is not held: its text-bearing fields go through the strategies. */
function filterChunk(filter: StreamFilter, part: ChunkType, abort: AbortFunction): ChunkType {
  const { matcher, channels } = filter;
  const location = 'streaming content';
  switch (part.type) {
    case 'tool-call': {
      if (!channels.has('tool-input')) return part;
      const args = matcher.filterValue(part.payload.args, 'output', abort, location);
      return args === part.payload.args ? part : { ...part, payload: { ...part.payload, args } };
    }
    case 'tool-result': {
      if (!channels.has('tool-result')) return part;
      const result = matcher.filterValue(part.payload.result, 'output', abort, location);
      const args = channels.has('tool-input') ? matcher.filterValue(part.payload.args, 'output', abort, location) : part.payload.args;
      return result === part.payload.result && args === part.payload.args ? part : { ...part, payload: { ...part.payload, result, args } };
    }
    case 'tool-error': {
      if (!channels.has('tool-error')) return part;
      const error = matcher.filterValue(part.payload.error, 'output', abort, location);
      const args = channels.has('tool-input') ? matcher.filterValue(part.payload.args, 'output', abort, location) : part.payload.args;
      return error === part.payload.error && args === part.payload.args ? part : { ...part, payload: { ...part.payload, error, args } };
    }
    case 'object':
    case 'object-result': {
      if (!channels.has('object')) return part;
      const object = matcher.filterValue(part.payload.object, 'output', abort, location);
      return object === part.payload.object ? part : ({ ...part, payload: { ...part.payload, object } } as ChunkType);
    }
    default:
      if (part.type.startsWith('data-') && channels.has('data')) {
        const data = (part as { data?: unknown }).data;
        const filtered = matcher.filterValue(data, 'output', abort, location);
        return filtered === data ? part : ({ ...part, data: filtered } as ChunkType);
      }
      return part;
  }
}
