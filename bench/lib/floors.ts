/**
 * The floors: the same parts through the cheapest possible pipelines, in the same process.
 * - a synchronous RxJS `map` per stage over the pre-built parts;
 * - `for await` over the model's `ReadableStream` plus one awaited async function per stage;
 * - `for await` over the model's `ReadableStream` plus one plain synchronous function per stage
 *   (what K synchronous processors cost at the least: one async hop per part, K calls).
 */
import { from, map, type OperatorFunction } from 'rxjs';
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { MinimalModel } from '../minimal-model.js';

type Part = LanguageModelV4StreamPart;
const identity = (value: Part): Part => value;
const asyncIdentity = async (value: Part): Promise<Part> => value;

const floorCallOptions: LanguageModelV4CallOptions = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'floor' }] }] };

/** All parts through `stages` synchronous `map`s. */
export function syncMapFloor(parts: readonly Part[], stages: number): Promise<void> {
  const operators: OperatorFunction<Part, Part>[] = Array.from({ length: stages }, () => map(identity));
  const source = from(parts).pipe(...(operators as [OperatorFunction<Part, Part>]));
  return new Promise((resolve, reject) => {
    let count = 0;
    source.subscribe({
      next: () => {
        count++;
      },
      error: reject,
      complete: () => (count === parts.length ? resolve() : reject(new Error('floor lost parts'))),
    });
  });
}

/** `for await` over `doStream`'s stream, `stages` awaited async functions per part. */
export async function forAwaitFloor(model: MinimalModel, stages: number): Promise<void> {
  const { stream } = await model.doStream(floorCallOptions);
  for await (const part of stream) {
    let current = part;
    for (let stage = 0; stage < stages; stage++) current = await asyncIdentity(current);
    if (current === undefined) throw new Error('floor lost a part');
  }
}

/** `for await` over `doStream`'s stream, `stages` synchronous functions per part. */
export async function forAwaitSyncFloor(model: MinimalModel, stages: number): Promise<void> {
  const { stream } = await model.doStream(floorCallOptions);
  for await (const part of stream) {
    let current = part;
    for (let stage = 0; stage < stages; stage++) current = identity(current);
    if (current === undefined) throw new Error('floor lost a part');
  }
}
