/**
 * The `streamParts` a `processOutputStream` hook gets: a read-only view of its log in the chain
 * (src/operators/internal/stream-chain.ts), and of the list `runProcessor` (rxagent/testing) gives
 * it, so that a processor's unit test fails where its run would. The log is shared by every processor in step with the chain and is the run's
 * state (a snapshot keeps it), so a processor that empties, splices, overwrites, sorts or freezes
 * it would blind the processors after it — a guard looking back over `streamParts` — and corrupt
 * what the run restores. The view is a Proxy over the log's array, made once per processor per run
 * (and again if the processor gets its own log): reading works as on the array itself (`length`,
 * indexes, `at`, `slice`, `filter`, iteration, `Array.isArray`, JSON) and sees the log grow; a write
 * is a `ProcessorError` naming the processor and the hook, and nothing is written.
 *
 * The chunk objects in the log are not frozen: the current one is the part the hook is given, and
 * editing a part in place is how a hook rewrites it (a tool call's `args`).
 */
import type { ChunkType } from './chunk-types.js';
import { ProcessorError } from './errors/processor-error.js';

/** A property key as the error names it (`[3]`, `.length`), at most 40 characters. */
function keyName(key: string | symbol): string {
  if (typeof key === 'symbol') return `[${key.toString().slice(0, 40)}]`;
  return /^\d+$/.test(key) ? `[${key.slice(0, 40)}]` : `.${key.slice(0, 40)}`;
}

function refused(processorId: string, what: string): never {
  throw new ProcessorError(
    processorId,
    'processOutputStream',
    `${what}: streamParts is read-only (the log of the chunks the processors saw, shared with the others and kept with the run); copy it (streamParts.slice()) for a list of your own.`,
  );
}

/**
 * A read-only view of `log` for processor `processorId` (see the module comment).
 *
 * @example
 * ```ts
 * const parts = readOnlyStreamParts(log.toArray(), 'guard');
 * parts.at(-1); // the current chunk
 * parts.length = 0; // throws a ProcessorError naming "guard" and processOutputStream
 * ```
 */
export function readOnlyStreamParts(log: ChunkType[], processorId: string): ChunkType[] {
  return new Proxy(log, {
    set: (_log, key) => refused(processorId, `set streamParts${keyName(key)}`),
    deleteProperty: (_log, key) => refused(processorId, `deleted streamParts${keyName(key)}`),
    defineProperty: (_log, key) => refused(processorId, `defined streamParts${keyName(key)}`),
    preventExtensions: () => refused(processorId, 'froze streamParts (or made it non-extensible)'),
    setPrototypeOf: () => refused(processorId, 'set the prototype of streamParts'),
  });
}
