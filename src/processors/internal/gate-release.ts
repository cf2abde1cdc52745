/**
 * The gate's held content and how judged content is released: the streams and spans the gate
 * keeps, a held delta released up to where its stream is judged (with the verdicts' regions
 * replaced), and consecutive released deltas merged.
 */
import type { ChunkType } from '../../contract/index.js';
import { chunkLike } from './chunks.js';
import type { HeldRegion } from './held-stream.js';
import { valueRegions, type JudgedChannel, type Verdict } from './judged-spans.js';

/** One judge call's (or one merged set of calls') verdict, once it arrived. */
export interface Judgment {
  verdict: Verdict | undefined;
  readonly done: Promise<void>;
}

/** A judged piece of a stream: offsets `[start, end)` and its judgment. */
export interface Span {
  readonly start: number;
  readonly end: number;
  /** What the judge saw: the span's own text, after `context` characters of the window before it. */
  text: string | undefined;
  /** Characters at the start of `text` that belong to the window before (already judged; never released again). */
  context: number;
  readonly judgment: Judgment;
  regions: HeldRegion[] | undefined;
}

/** One judged stream: a text or reasoning block (and the blocks continuing it), or a tool call's input. */
export interface JudgedStream {
  readonly channel: 'text' | 'reasoning' | 'tool-input';
  readonly key: string;
  pending: string;
  pendingStart: number;
  spans: Span[];
  windows: number;
  /**
   * The first window, until the second is cut: the second window is judged after it, with its text
   * in front when it was kept (a value cut by the first window's word cut is judged whole once).
   */
  lead: Span | undefined;
  readonly open: Set<string>;
  closed: boolean;
}

/** A held item in arrival order: a delta of a stream, or a whole chunk (judged or not). */
export type Entry =
  | { kind: 'delta'; stream: JudgedStream; start: number; text: string; chunk: ChunkType }
  | { kind: 'chunk'; chunk: ChunkType; judgment: Judgment | undefined; channel: JudgedChannel | undefined; span: Span | undefined };

/** A new, empty stream. */
export function newStream(channel: JudgedStream['channel'], key: string): JudgedStream {
  return { channel, key, pending: '', pendingStart: 0, spans: [], windows: 0, lead: undefined, open: new Set(), closed: false };
}

/** The regions of a settled span (absolute offsets into its stream). */
function regionsOf(span: Span, json: boolean): HeldRegion[] {
  if (span.regions !== undefined) return span.regions;
  const verdict = span.judgment.verdict as Verdict;
  const text = span.text ?? '';
  let regions: HeldRegion[] = [];
  if (verdict.action === 'drop') regions = [{ start: span.context, end: text.length, replacement: '' }];
  else if (verdict.action === 'replace') regions = valueRegions(text, verdict.replacements, json);
  // Offsets into the stream; a region reaching back into the context is cut at the span's start
  // (that text was released before), one wholly inside it is already covered by the earlier span.
  const origin = span.start - span.context;
  span.regions = regions.flatMap((region) =>
    region.end <= span.context ? [] : [{ ...region, start: Math.max(span.start, region.start + origin), end: region.end + origin }],
  );
  return span.regions;
}

/**
 * Releases the judged prefix of a delta entry into `released`; true when all of it was released.
 * Spans are judged in order, so the prefix ends where the first unjudged span starts.
 */
export function releaseDelta(entry: Extract<Entry, { kind: 'delta' }>, released: ChunkType[]): boolean {
  const stream = entry.stream;
  const end = entry.start + entry.text.length;
  let judgedTo = entry.start;
  const regions: HeldRegion[] = [];
  for (const span of stream.spans) {
    if (span.end <= entry.start) continue;
    if (span.start >= end || span.judgment.verdict === undefined) break;
    regions.push(...regionsOf(span, stream.channel === 'tool-input'));
    judgedTo = Math.min(end, span.end);
  }
  if (judgedTo === entry.start) return false;
  const text = replaceRegions(entry.text, entry.start, judgedTo, regions);
  if (text !== '') released.push(deltaLike(entry.chunk, text));
  // spans wholly before what is left of this stream are no longer needed
  while (stream.spans.length > 1 && (stream.spans[0] as Span).end <= judgedTo) stream.spans.shift();
  if (judgedTo === end) return true;
  entry.text = entry.text.slice(judgedTo - entry.start);
  entry.start = judgedTo;
  return false;
}

/** `text` (stream offsets `[start, start + text.length)`) up to offset `upTo`, with `regions` applied. */
function replaceRegions(text: string, start: number, upTo: number, regions: readonly HeldRegion[]): string {
  let out = '';
  let cursor = start;
  for (const region of regions) {
    if (region.end <= cursor || region.start >= upTo) continue;
    if (region.start >= cursor) {
      out += text.slice(cursor - start, region.start - start) + region.replacement;
    }
    cursor = Math.min(region.end, upTo);
  }
  return out + text.slice(cursor - start, upTo - start);
}

function deltaLike(template: ChunkType, text: string): ChunkType {
  switch (template.type) {
    case 'reasoning-delta':
      return chunkLike(template, 'reasoning-delta', { ...template.payload, text });
    case 'tool-call-delta':
      return chunkLike(template, 'tool-call-delta', { ...template.payload, argsTextDelta: text });
    case 'text-delta':
      return chunkLike(template, 'text-delta', { ...template.payload, text });
    default:
      return template;
  }
}

/** Consecutive deltas of one block (or one tool call's input) merged into one. */
export function merged(chunks: readonly ChunkType[]): ChunkType[] {
  const out: ChunkType[] = [];
  for (const chunk of chunks) {
    const last = out[out.length - 1];
    if (last !== undefined && last.type === chunk.type) {
      if ((chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') && (last as typeof chunk).payload.id === chunk.payload.id) {
        out[out.length - 1] = deltaLike(last, (last as typeof chunk).payload.text + chunk.payload.text);
        continue;
      }
      if (chunk.type === 'tool-call-delta' && (last as typeof chunk).payload.toolCallId === chunk.payload.toolCallId) {
        out[out.length - 1] = deltaLike(last, (last as typeof chunk).payload.argsTextDelta + chunk.payload.argsTextDelta);
        continue;
      }
    }
    out.push(chunk);
  }
  return out;
}
