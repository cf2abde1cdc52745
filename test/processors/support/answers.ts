/** Long streamed answers for the model-backed processors' stream tests. */
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import type { ChunkType } from '../../../src/contract/chunk-types.js';
import { chunk } from '../../../src/testing/chunk-builders.js';

/** About `tokens` tokens of prose, sentence by sentence. */
export function proseOfTokens(tokens: number, marker?: { at: number; text: string }): string {
  const sentences: string[] = [];
  for (let index = 0; encode(sentences.join(' ')).length < tokens; index++) {
    sentences.push(marker !== undefined && index === marker.at ? marker.text : `Sentence ${index} explains one more small detail about the topic.`);
  }
  return sentences.join(' ');
}

/** `text` streamed as one text block, `size` characters per delta (about one token), then `finish`. */
export function streamedAnswer(text: string, size = 4): ChunkType[] {
  const deltas: ChunkType[] = [];
  for (let index = 0; index < text.length; index += size) deltas.push(chunk.textDelta(text.slice(index, index + size)));
  return [chunk.stepStart(), chunk.textStart(), ...deltas, chunk.textEnd(), chunk.stepFinish(), chunk.finish()];
}
