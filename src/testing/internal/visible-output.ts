/**
 * What a run shows a user, as lines that compare across runs: the chunks a client keeps (an attempt
 * closed with `step-finish { reason: 'retry' }` — a rejected attempt, or a dead owner's rolled-back
 * tail — is dropped with its step), and the messages memory saved; ids, run ids, step numbers,
 * clocks and usage left out (they differ between a live run and its retried or restored twin
 * without anything visible differing).
 */
import type { ChunkType } from '../../contract/index.js';

/** Keys whose values differ between equivalent runs (generated ids, clocks, counters of attempts, usage). */
const VOLATILE_KEYS: ReadonlySet<string> = new Set([
  'id',
  'runId',
  'messageId',
  'stepNumber',
  'timestamp',
  'createdAt',
  'updatedAt',
  'usage',
  'totalUsage',
  'request',
  'response',
  'warnings',
  'providerMetadata',
  'providerOptions',
  'threadId',
  'resourceId',
]);

/** JSON with the volatile keys left out and object keys sorted (so two equal values print alike). */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, key, item: unknown) {
    if (key !== '' && VOLATILE_KEYS.has(key)) return undefined;
    if (item instanceof Error) return { name: item.name, message: item.message };
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
      const sorted: Record<string, unknown> = {};
      for (const name of Object.keys(item).sort()) sorted[name] = (item as Record<string, unknown>)[name];
      return sorted;
    }
    return item;
  }) ?? 'undefined';
}

/** The chunks a client keeps: each attempt closed with `reason: 'retry'` removed back to its `step-start`. */
export function keptChunks(chunks: readonly ChunkType[]): ChunkType[] {
  const kept: ChunkType[] = [];
  for (const chunk of chunks) {
    if (chunk.type === 'step-finish' && chunk.payload.stepResult.reason === 'retry') {
      let index = kept.length - 1;
      while (index >= 0 && kept[index]!.type !== 'step-start') index--;
      kept.length = Math.max(0, index);
      continue;
    }
    kept.push(chunk);
  }
  return kept;
}

/** One chunk as a line: its type and what a user sees of it. */
function chunkLine(chunk: ChunkType): string | undefined {
  switch (chunk.type) {
    case 'start':
    case 'response-metadata':
      return undefined;
    case 'step-start':
      return 'step-start';
    case 'step-finish':
      return `step-finish ${chunk.payload.stepResult.reason}${chunk.payload.stepResult.isContinued ? ' (continued)' : ''}`;
    case 'finish':
      return `finish ${stableJson((chunk.payload as { stepResult?: { reason?: unknown } }).stepResult?.reason ?? null)}`;
    case 'error': {
      const error = chunk.payload.error as { name?: unknown; message?: unknown } | undefined;
      return `error ${String(error?.name ?? 'Error')}: ${String(error?.message ?? error)}`;
    }
    default:
      return 'payload' in chunk ? `${chunk.type} ${stableJson(chunk.payload)}` : `${chunk.type} ${stableJson({ ...chunk, type: undefined })}`;
  }
}

/** The chunks a client keeps, one line each. */
export function chunkLines(chunks: readonly ChunkType[]): string[] {
  return keptChunks(chunks).flatMap((chunk) => chunkLine(chunk) ?? []);
}

/** A stored message as memory returns it (the fields the lines read). */
export interface StoredMessageLike {
  readonly role: string;
  readonly content: unknown;
}

/** The messages memory saved, one line per part (`role: part`). */
export function messageLines(messages: readonly StoredMessageLike[]): string[] {
  return messages.flatMap((message) => {
    const parts = (message.content as { parts?: unknown[] } | undefined)?.parts;
    if (!Array.isArray(parts)) return [`${message.role}: ${stableJson(message.content)}`];
    return parts.filter((part) => (part as { type?: unknown }).type !== 'step-start').map((part) => `${message.role}: ${stableJson(part)}`);
  });
}
