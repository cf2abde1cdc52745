import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { streamModel } from '../../src/model/stream-model.js';

/** The recorded provider streams kept in the repository (`test/fixtures/providers`, see its MANIFEST). */
export const fixturesDir = fileURLToPath(new URL('../fixtures/providers/', import.meta.url));

export const fixture = (name: string): string => `${fixturesDir.replace(/\/?$/, '/')}${name}`;

export const userPrompt = (text = 'Hello'): LanguageModelV4CallOptions => ({
  prompt: [{ role: 'user', content: [{ type: 'text', text }] }],
});

export function collect(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions = userPrompt(),
): Promise<LanguageModelV4StreamPart[]> {
  return lastValueFrom(streamModel(model, options).pipe(toArray()));
}

export type PartOf<T extends LanguageModelV4StreamPart['type']> = Extract<LanguageModelV4StreamPart, { type: T }>;

export function partsOf<T extends LanguageModelV4StreamPart['type']>(
  parts: readonly LanguageModelV4StreamPart[],
  type: T,
): Array<PartOf<T>> {
  return parts.filter((part): part is PartOf<T> => part.type === type);
}

export const textOf = (parts: readonly LanguageModelV4StreamPart[]): string =>
  partsOf(parts, 'text-delta').map((part) => part.delta).join('');

export const reasoningOf = (parts: readonly LanguageModelV4StreamPart[]): string =>
  partsOf(parts, 'reasoning-delta').map((part) => part.delta).join('');

export const finishOf = (parts: readonly LanguageModelV4StreamPart[]): PartOf<'finish'> => {
  const finish = partsOf(parts, 'finish');
  if (finish.length !== 1) throw new Error(`expected exactly one finish part, got ${finish.length}`);
  return finish[0]!;
};

/** The JSON payloads of a fixture, parsed (to compute expectations independently of providers). */
export function fixtureEvents(lines: readonly string[]): Array<Record<string, unknown>> {
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}
