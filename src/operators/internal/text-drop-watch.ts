/**
 * Notices a `processOutputStream` that drops every text chunk of a run: text entered the chain,
 * none left it by the run's `finish`, and one or more processors returned `null` for text deltas.
 * Each such processor is warned about once per process (src/contract/warn-once.ts): returning
 * `null` for every delta is a common way to write a filter that was meant to rewrite the text, and
 * the run then "succeeds" with an empty reply. One watch per chain (per run); it looks at each
 * chunk leaving the chain (one type test) until text has left it, and at drops.
 */
import { isObservable, tap, type Observable } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { Processor } from '../../contract/processor-types.js';
import { warnOnce } from '../../contract/warn-once.js';

/**
 * The text accounting of one run's output chain.
 *
 * @example
 * ```ts
 * const watch = new TextDropWatch();
 * watch.entered(chunk);                    // counts text in
 * const out = watch.out(chain.pass(chunk)); // counts text out; warns at finish
 * ```
 */
export class TextDropWatch {
  #textIn = 0;
  #textOut = 0;
  #droppers: Map<Processor, number> | undefined;

  /** `processor` dropped `chunk` (returned `null` for it). */
  dropped(processor: Processor, chunk: ChunkType): void {
    if (chunk.type !== 'text-delta') return;
    this.#droppers ??= new Map();
    this.#droppers.set(processor, (this.#droppers.get(processor) ?? 0) + 1);
  }

  /** `chunk` entered the chain at its start. */
  entered(chunk: ChunkType): void {
    if (this.#textOut === 0 && chunk.type === 'text-delta') this.#textIn++;
  }

  /** What a pass of the chain gave in the end (a chunk, `null`, or the Observable of one). */
  out(result: ChunkType | null | Observable<ChunkType | null>): ChunkType | null | Observable<ChunkType | null> {
    // once text reached the client the run cannot warn: nothing more to count (no `then` per async chunk)
    if (this.#textOut > 0 || result === null) return result;
    if (isObservable(result)) return (result as Observable<ChunkType | null>).pipe(tap((chunk) => this.#left(chunk)));
    return this.#left(result as ChunkType);
  }

  #left(chunk: ChunkType | null): ChunkType | null {
    if (chunk === null) return chunk;
    if (chunk.type === 'text-delta') this.#textOut++;
    else if (chunk.type === 'finish') this.#finished();
    return chunk;
  }

  #finished(): void {
    const droppers = this.#droppers;
    if (droppers === undefined || this.#textIn === 0 || this.#textOut > 0) return;
    for (const [processor, count] of droppers) {
      warnOnce(
        processor,
        'drops-all-text',
        `[rxagent] processor "${processor.id}": processOutputStream dropped every text chunk of a run (returned null/undefined for ${count} ` +
          `text-delta chunk${count === 1 ? '' : 's'}) and no text reached the client. Returning null drops a chunk; to change its text return ` +
          '{ ...part, payload: { ...part.payload, text } }, to end the run call abort(reason). (Warned once per processor.)',
      );
    }
  }
}
