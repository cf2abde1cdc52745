/**
 * Boundaries are boundaries: which streamed texts a match of `RegexFilterProcessor` may join.
 *
 * A *segment* is one text block as the client shows it: a `text-*` or `reasoning-*` block between
 * its start and end (within one step), or one tool call's input. Matches are found in each segment
 * on its own — the last characters it released (its context) plus what it holds, the pieces of an
 * interleaved block put back together. A segment that opened while no other block of its channel
 * was open follows the one that ended last (its *predecessor*, across a step boundary too): a match
 * crossing from one to the next is kept only if it overlaps no match found in either alone. So a
 * secret split across blocks or steps is still caught whole (neither half matches alone), while
 * an address that ends one block is not extended into the next block's first word
 * (`ada@example.com` + `Done!` is an address and a word, not `ada@example.comDone`). A rejected
 * attempt's segments are forgotten: the retried attempt follows what the last accepted step ended
 * with.
 */
import type { HeldPiece } from './held-stream.js';
import type { NormalizedText } from './normalized-text.js';
import type { RegexMatcher } from './regex-matcher.js';
import type { ScanRegion } from './text-scan.js';

/** Characters of released text a segment keeps as context for later scans. */
export const CONTEXT_SIZE = 32;

/** One block as the client shows it. */
export interface Segment {
  readonly blockId: string;
  /** The block that ended just before this one opened, while it can still be joined. */
  predecessor: Segment | undefined;
  /** The last `CONTEXT_SIZE` characters released (original text). */
  context: string;
  /** Characters released so far. */
  released: number;
  /** The matches of the context alone, while the context is this text (a released block is scanned once). */
  contextScan?: { context: string; json: boolean; regions: ScanRegion[] } | undefined;
}

interface ChannelSegments {
  /** The open segments by block id. */
  open: Record<string, Segment>;
  lastEnded?: Segment | undefined;
}

/**
 * The segments of a run's stream, kept in the processor's run state: plain data (JSON, so a durable
 * run can snapshot it at a step boundary and go on from the copy).
 */
export interface SegmentState {
  channels: Record<string, ChannelSegments>;
  /** Each channel's last ended segment when the current attempt began (restored if it is rejected). */
  attemptBase: Record<string, Segment | null>;
}

export function createSegmentState(): SegmentState {
  return { channels: {}, attemptBase: {} };
}

function channelOf(state: SegmentState, channel: string): ChannelSegments {
  let segments = state.channels[channel];
  if (segments === undefined) {
    segments = { open: {} };
    state.channels[channel] = segments;
  }
  return segments;
}

/**
 * The segment of block `blockId`: the open one, or a new one (`opening`: a `*-start` always opens
 * a new one). Tool-call input (`chains: false`) never follows another segment.
 */
export function segmentFor(state: SegmentState, channel: string, blockId: string, opening: boolean, chains = true): Segment {
  const segments = channelOf(state, channel);
  const open = Object.hasOwn(segments.open, blockId) ? segments.open[blockId] : undefined;
  if (open !== undefined && !opening) return open;
  if (open !== undefined) endSegment(state, channel, blockId);
  const predecessor = chains && Object.keys(segments.open).length === 0 ? segments.lastEnded : undefined;
  const segment: Segment = { blockId, predecessor, context: '', released: 0 };
  defineEntry(segments.open, blockId, segment);
  return segment;
}

/** Block `blockId` ended (`*-end`). */
export function endSegment(state: SegmentState, channel: string, blockId: string): void {
  const segments = channelOf(state, channel);
  if (!Object.hasOwn(segments.open, blockId)) return;
  const segment = segments.open[blockId];
  delete segments.open[blockId];
  segments.lastEnded = segment;
}

/** Sets `record[key]` as an own property (a block id `__proto__` stays a key). */
function defineEntry<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A step boundary (`step-start`, `step-finish`): every open block ends; a new attempt begins. */
export function endStep(state: SegmentState): void {
  for (const [channel, segments] of Object.entries(state.channels)) {
    for (const blockId of Object.keys(segments.open)) endSegment(state, channel, blockId);
    state.attemptBase[channel] = segments.lastEnded ?? null;
  }
}

/** The current attempt was rejected (a retry): its blocks leave no context. */
export function rejectAttempt(state: SegmentState): void {
  for (const [channel, segments] of Object.entries(state.channels)) {
    segments.open = {};
    segments.lastEnded = state.attemptBase[channel] ?? undefined;
  }
}

/** A text assembled for a scan: each character's held-text offset, or -1 when already released. */
export interface Assembled {
  text: string;
  held: Int32Array;
}

/** A match to enforce: its region in an assembled text (the text is what `enforce` reports on). */
export interface Candidate {
  source: Assembled;
  region: ScanRegion;
  /** First and last-plus-one held offsets the region covers. */
  firstHeld: number;
  endHeld: number;
  /** Whether it begins in already released text. */
  startsReleased: boolean;
}

function assemble(segment: Segment, pieces: readonly HeldPiece[], heldText: string): Assembled {
  let text = segment.context;
  let length = segment.context.length;
  for (const piece of pieces) length += piece.end - piece.start;
  const held = new Int32Array(length).fill(-1);
  let at = segment.context.length;
  for (const piece of pieces) {
    text += heldText.slice(piece.start, piece.end);
    for (let offset = piece.start; offset < piece.end; offset++) held[at++] = offset;
  }
  return { text, held };
}

function concat(parts: readonly Assembled[]): Assembled {
  const length = parts.reduce((sum, part) => sum + part.text.length, 0);
  const held = new Int32Array(length);
  let at = 0;
  for (const part of parts) {
    held.set(part.held, at);
    at += part.text.length;
  }
  return { text: parts.map((part) => part.text).join(''), held };
}

function candidate(source: Assembled, region: ScanRegion): Candidate | undefined {
  let firstHeld = -1;
  let endHeld = -1;
  for (let index = region.start; index < region.end; index++) {
    const offset = source.held[index] as number;
    if (offset === -1) continue;
    if (firstHeld === -1 || offset < firstHeld) firstHeld = offset;
    if (offset + 1 > endHeld) endHeld = offset + 1;
  }
  if (firstHeld === -1) return undefined; // all of it released: handled when it was
  return { source, region, firstHeld, endHeld, startsReleased: source.held[region.start] === -1 };
}

/** The matches to consider, and the one held segment's text and view when the hold has only one. */
export interface SegmentScan {
  candidates: Candidate[];
  single: { source: Assembled; view: NormalizedText } | undefined;
}

/** Whether the segment's released text is all in its context (so it joins its predecessor seamlessly). */
const joinable = (segment: Segment) => segment.predecessor !== undefined && segment.released <= segment.context.length;

/**
 * Every match to consider in the held text: each segment's own matches, and the matches crossing
 * from a segment into its successor that overlap no match of either alone.
 */
export function findCandidates(matcher: RegexMatcher, heldText: string, pieces: readonly HeldPiece[], json: boolean): SegmentScan {
  const bySegment = new Map<Segment, HeldPiece[]>();
  for (const piece of pieces) {
    const segment = piece.segment as Segment;
    const list = bySegment.get(segment);
    if (list === undefined) bySegment.set(segment, [piece]);
    else list.push(piece);
  }
  const scanned = new Map<Segment, { source: Assembled; view: NormalizedText | undefined; regions: ScanRegion[] }>();
  const scan = (segment: Segment) => {
    let result = scanned.get(segment);
    if (result === undefined) {
      const pieces = bySegment.get(segment) ?? [];
      const source = assemble(segment, pieces, heldText);
      const cached = pieces.length === 0 && segment.contextScan?.context === segment.context && segment.contextScan.json === json ? segment.contextScan : undefined;
      if (cached !== undefined) result = { source, view: undefined, regions: cached.regions };
      else {
        const segmentView = matcher.viewOf(source.text, json);
        result = { source, view: segmentView, regions: matcher.regionsOf(source.text, 0, segmentView) };
        if (pieces.length === 0) segment.contextScan = { context: segment.context, json, regions: result.regions };
      }
      scanned.set(segment, result);
    }
    return result;
  };
  const candidates: Candidate[] = [];
  for (const segment of bySegment.keys()) {
    const { source, regions } = scan(segment);
    for (const region of regions) {
      const found = candidate(source, region);
      if (found !== undefined) candidates.push(found);
    }
  }
  // Chains: a held segment back through its joinable predecessors (those still held, then at most
  // CONTEXT_SIZE characters of released ones), each chain once, from its last held segment.
  const predecessors = new Set<Segment>();
  for (const segment of bySegment.keys()) if (joinable(segment)) predecessors.add(segment.predecessor as Segment);
  for (const last of bySegment.keys()) {
    if (predecessors.has(last) || !joinable(last)) continue;
    const chain: Segment[] = [last];
    let releasedContext = 0;
    let current = last;
    while (joinable(current) && releasedContext < CONTEXT_SIZE) {
      current = current.predecessor as Segment;
      chain.unshift(current);
      if (!bySegment.has(current)) releasedContext += current.context.length;
    }
    // What lies further back is out of reach of this and every later chain: let it go.
    if (releasedContext >= CONTEXT_SIZE) current.predecessor = undefined;
    candidates.push(...crossingCandidates(matcher, chain.map(scan), json));
  }
  const only = bySegment.size === 1 ? scanned.get(bySegment.keys().next().value as Segment) : undefined;
  return { candidates, single: only?.view === undefined ? undefined : { source: only.source, view: only.view } };
}

/** Matches of a chain's joined text that cross a boundary and overlap no match of one segment alone. */
function crossingCandidates(matcher: RegexMatcher, members: ReadonlyArray<{ source: Assembled; regions: ScanRegion[] }>, json: boolean): Candidate[] {
  const joined = concat(members.map((member) => member.source));
  const boundaries: number[] = [];
  const local: Array<[number, number]> = [];
  let offset = 0;
  for (const member of members) {
    if (offset > 0) boundaries.push(offset);
    for (const region of member.regions) local.push([offset + region.start, offset + region.end]);
    offset += member.source.text.length;
  }
  const found: Candidate[] = [];
  for (const region of matcher.regionsOf(joined.text, 0, matcher.viewOf(joined.text, json))) {
    if (!boundaries.some((boundary) => region.start < boundary && boundary < region.end)) continue;
    if (local.some(([start, end]) => start < region.end && region.start < end)) continue;
    const crossing = candidate(joined, region);
    if (crossing !== undefined) found.push(crossing);
  }
  return found;
}

/** Appends the released characters `[0, cut)` of the held text to each segment's context. */
export function recordReleased(pieces: readonly HeldPiece[], heldText: string, cut: number): void {
  for (const piece of pieces) {
    if (piece.start >= cut) break;
    const segment = piece.segment as Segment;
    const released = heldText.slice(piece.start, Math.min(piece.end, cut));
    segment.context = (segment.context + released).slice(-CONTEXT_SIZE);
    segment.released += released.length;
    // Past its context, a segment no longer joins its predecessor seamlessly: let it go.
    if (segment.released > segment.context.length) segment.predecessor = undefined;
  }
}
