/**
 * The stream half of `RegexFilterProcessor`: streamed text, reasoning and tool-call input held
 * back (see `held-stream.ts`) and scanned incrementally; every other chunk's text-bearing fields
 * filtered whole.
 */
import type { AbortFunction, ChunkType, ProcessorState } from '../../contract/index.js';
import type { RegexFilterChannel } from '../regex-filter-types.js';
import { channelOf, heldRuns, heldText, holdChunk, holdText, openChannel, releaseHeld, type HeldChannel, type HeldRegion } from './held-stream.js';
import type { NormalizedText } from './normalized-text.js';
import type { RegexMatcher } from './regex-matcher.js';
import { filterFile } from './regex-messages.js';
import { createSegmentState, endSegment, endStep, findCandidates, recordReleased, rejectAttempt, segmentFor, type Assembled, type Candidate, type SegmentScan, type SegmentState } from './regex-segments.js';

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

const STREAM_KEY = 'regexFilterStream';
/**
 * Most original characters one character of the view may come from (`&#x10FFFF;`, `\uD83D\uDE00`,
 * `%F0%9F%98%80`): the hold keeps `carryover` characters *of the view*, up to this many times as
 * many original ones.
 */
const MAX_EXPANSION = 12;

/** The stream's state in one run (under the processor's `state`). */
interface StreamState {
  /** The channel held now (one at a time; another channel's chunk releases it first). */
  hold: HeldChannel | undefined;
  segments: SegmentState;
  /** Starts of matches released before their continuation arrived, per attempt (step). */
  fragments: Array<{ text: string; attempt: number }>;
  attempt: number;
  retryCount: number;
}

function streamState(state: ProcessorState, retryCount: number): StreamState {
  let stream = state[STREAM_KEY] as StreamState | undefined;
  if (stream === undefined) {
    stream = { hold: undefined, segments: createSegmentState(), fragments: [], attempt: 0, retryCount };
    state[STREAM_KEY] = stream;
  }
  return stream;
}

/**
 * The starts of matches that continued past a step boundary (released before the continuation
 * arrived), for the stored reply to drop; rejected attempts' are gone.
 */
export function streamFragments(state: ProcessorState): string[] {
  return ((state[STREAM_KEY] as StreamState | undefined)?.fragments ?? []).map((fragment) => fragment.text);
}

/**
 * Where to cut the held text (of length `textLength`) so that `carryover` characters of the view
 * stay held: encoded text reads shorter than it is written, so a secret written as
 * `\u0073\u006b…` is held as long as `sk…` would be. The view is the one held segment's (its
 * context first); with several segments, the held text's own.
 */
function holdCut(filter: StreamFilter, text: string, json: boolean, single: SegmentScan['single']): number {
  const { carryover } = filter;
  const plain = Math.max(0, text.length - carryover);
  const { source, view } = single ?? { source: undefined, view: filter.matcher.viewOf(text, json) };
  // the text in stored order (display-order paragraphs, when the view has them, come after it)
  const viewLength = view.storedLength ?? view.text.length;
  if (view.starts === undefined) return source === undefined ? plain : Math.min(plain, Math.max(0, heldOffset(source, viewLength - carryover)));
  const at = viewLength - carryover;
  const original = at <= 0 ? 0 : (view.starts[at] as number);
  const viewCut = source === undefined ? original : Math.max(0, heldOffset(source, original));
  return Math.max(0, text.length - carryover * MAX_EXPANSION, Math.min(plain, viewCut));
}

/** The held offset of an assembled text's index (0 when it is in the released context). */
function heldOffset(source: Assembled, index: number): number {
  if (index <= 0) return 0;
  const offset = index < source.held.length ? (source.held[index] as number) : (source.held[source.held.length - 1] as number) + 1;
  return offset === -1 ? 0 : offset;
}

/** The rejected attempt leaves nothing behind: no context, no fragments. */
function forgetAttempt(stream: StreamState): void {
  rejectAttempt(stream.segments);
  stream.fragments = stream.fragments.filter((fragment) => fragment.attempt !== stream.attempt);
}

/** The chunks to emit for `part` (held text released before it, in order). */
export function streamOutputs(filter: StreamFilter, part: ChunkType, state: ProcessorState, abort: AbortFunction, retryCount: number): ChunkType[] {
  const stream = streamState(state, retryCount);
  const outputs: ChunkType[] = [];
  // `payload?.stepResult?`: a hand-built chunk (`{ type: 'step-finish' }`, as the reference's tests pass) may lack them
  if (part.type === 'step-finish' && part.payload?.stepResult?.reason === 'retry') {
    // The rejected attempt's held text goes out before its end marker (it belongs to that attempt).
    if (stream.hold !== undefined) outputs.push(...releaseReady(filter, stream, stream.hold, abort, true));
    stream.hold = undefined;
    forgetAttempt(stream);
    stream.retryCount = retryCount;
    outputs.push(part);
    return outputs;
  }
  if (retryCount !== stream.retryCount) {
    // A new attempt with no retry marker seen: what is held is a rejected draft, dropped unshown.
    stream.hold = undefined;
    forgetAttempt(stream);
    stream.retryCount = retryCount;
  }
  let held = stream.hold;
  const channel = channelOf(part);
  const checked = channel !== undefined && filter.channels.has(channel.channel.startsWith('tool-input:') ? 'tool-input' : (channel.channel as RegexFilterChannel));
  if (held !== undefined && (!checked || held.channel !== channel?.channel)) {
    outputs.push(...releaseReady(filter, stream, held, abort, true));
    held = undefined;
    stream.hold = undefined;
  }
  if (channel === undefined || !checked) {
    if (part.type === 'step-start' || part.type === 'step-finish') {
      endStep(stream.segments);
      if (part.type === 'step-start') stream.attempt++;
    }
    outputs.push(filterChunk(filter, part, abort));
    return outputs;
  }
  const toolInput = channel.channel.startsWith('tool-input:');
  if (channel.text === undefined) {
    if (part.type.endsWith('-end')) endSegment(stream.segments, channel.channel, channel.id);
    else segmentFor(stream.segments, channel.channel, channel.id, true, !toolInput);
    // A block boundary is held behind the text before it, so the order of chunks is kept.
    if (held !== undefined && held.items.length > 0) holdChunk(held, part);
    else outputs.push(part);
    return outputs;
  }
  const segment = segmentFor(stream.segments, channel.channel, channel.id, false, !toolInput);
  if (held === undefined) {
    held = openChannel(channel.channel);
    stream.hold = held;
  }
  holdText(held, channel.id, channel.text, part, segment);
  if (held.length >= held.nextScanAt) outputs.push(...releaseReady(filter, stream, held, abort, false));
  return outputs;
}

/** Scans the held text and releases what can no longer be part of a match (all of it when `flushing`). */
function releaseReady(filter: StreamFilter, stream: StreamState, held: HeldChannel, abort: AbortFunction, flushing: boolean): ChunkType[] {
  const text = heldText(held);
  const pieces = heldRuns(held);
  // Tool-call input is JSON text: matched as the client's parse and the tool read it.
  const json = held.channel.startsWith('tool-input:');
  const { candidates, single } = findCandidates(filter.matcher, text, pieces, json);
  let cut = flushing ? text.length : holdCut(filter, text, json, single);
  if (!flushing) {
    // Hold every match reaching past the cut (holding one may make another straddle the new cut).
    for (let moved = true; moved; ) {
      moved = false;
      for (const found of candidates) {
        if (found.firstHeld < cut && found.endHeld > cut) {
          cut = found.firstHeld;
          moved = true;
        }
      }
    }
    // A match may hold the text back only up to `maxHold`; past that, the cut goes through it.
    if (text.length - cut > filter.maxHold) cut = Math.max(0, text.length - filter.carryover);
  }
  const regions = heldRegionsOf(filter, stream, candidates.filter((found) => found.firstHeld < cut), cut, held.channel, abort);
  const outputs = cut > 0 || flushing ? releaseHeld(held, cut, regions, !flushing) : [];
  recordReleased(pieces, text, cut);
  // The next scan once `scanStep` new characters arrived, or half as many as stay held (encoded
  // text holds more): each character is scanned a bounded number of times.
  held.nextScanAt = held.length + Math.max(filter.scanStep, held.length >> 1);
  return outputs;
}

/**
 * Enforces the released matches (per assembled text) and turns their replacements into regions of
 * the held text: the replacement where the match's first held character is, its other held
 * characters removed (an interleaved block's pieces, or the next block's start).
 */
function heldRegionsOf(filter: StreamFilter, stream: StreamState, released: readonly Candidate[], cut: number, channel: string, abort: AbortFunction): HeldRegion[] {
  const bySource = new Map<Candidate['source'], Candidate[]>();
  for (const found of released) bySource.set(found.source, [...(bySource.get(found.source) ?? []), found]);
  const json = channel.startsWith('tool-input:');
  const regions: HeldRegion[] = [];
  for (const [source, found] of bySource) {
    const replacements = filter.matcher.enforce(source.text, found.map((item) => item.region), 'output', abort, 'streaming content');
    for (const { region, startsReleased } of found) {
      const replacement = replacements.get(region);
      if (replacement === undefined) continue;
      let firstHeldIndex = region.start;
      while ((source.held[firstHeldIndex] as number) === -1) firstHeldIndex++;
      if (startsReleased && channel === 'text' && replacement !== source.text.slice(region.start, region.end)) {
        // A match begun in text released before a tool call (the next step continues it): that
        // part has streamed; the stored reply loses it (see processOutputResult).
        stream.fragments.push({ text: source.text.slice(region.start, firstHeldIndex), attempt: stream.attempt });
      }
      // in JSON text the replacement is written as the inside of a JSON string
      let pending: string | undefined = json ? JSON.stringify(replacement).slice(1, -1) : replacement;
      for (let index = firstHeldIndex; index < region.end; ) {
        const start = source.held[index] as number;
        let end = start;
        while (index < region.end && (source.held[index] as number) === end && end < cut) {
          index++;
          end++;
        }
        if (end > start) {
          regions.push({ start, end, replacement: pending ?? '' });
          pending = undefined;
        }
        while (index < region.end && ((source.held[index] as number) === -1 || (source.held[index] as number) >= cut)) index++;
      }
    }
  }
  return regions.sort((a, b) => a.start - b.start);
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
    case 'file': {
      if (!channels.has('file')) return part;
      const { data, mimeType, filename } = part.payload;
      const file = filterFile(filter, { type: 'file', data, mimeType, ...(filename === undefined ? {} : { filename }) }, 'output', abort, location);
      if (file.data === data && file.mimeType === mimeType && file.filename === filename) return part;
      return { ...part, payload: { ...part.payload, data: file.data, mimeType: file.mimeType, ...(file.filename === undefined ? {} : { filename: file.filename }) } };
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
