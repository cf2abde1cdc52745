/** A small Okapi BM25 index for ranking short documents (tool descriptions) against a query. */

const STOP_WORDS = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'in', 'into', 'is', 'it', 'of', 'on', 'or',
  'the', 'this', 'that', 'to', 'with', 'when', 'use', 'using', 'tool', 'tools',
]);

/** Lower-cased word tokens: camelCase, snake_case and kebab-case names are split; stop words dropped. */
export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((token) => token.length > 0 && !STOP_WORDS.has(token));
}

/** One ranked document. */
export interface Bm25Hit {
  id: string;
  score: number;
}

interface IndexedDocument {
  id: string;
  length: number;
  frequencies: Map<string, number>;
}

/** BM25 over `documents` (`k1` term saturation, `b` length normalisation). */
export class Bm25Index {
  private readonly documents: IndexedDocument[];
  private readonly documentFrequency = new Map<string, number>();
  private readonly averageLength: number;
  private readonly k1: number;
  private readonly b: number;

  constructor(documents: ReadonlyArray<{ id: string; text: string }>, options: { k1?: number; b?: number } = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    this.documents = documents.map(({ id, text }) => {
      const tokens = tokenize(text);
      const frequencies = new Map<string, number>();
      for (const token of tokens) frequencies.set(token, (frequencies.get(token) ?? 0) + 1);
      for (const token of frequencies.keys()) this.documentFrequency.set(token, (this.documentFrequency.get(token) ?? 0) + 1);
      return { id, length: tokens.length, frequencies };
    });
    const totalLength = this.documents.reduce((sum, document) => sum + document.length, 0);
    this.averageLength = this.documents.length === 0 ? 0 : totalLength / this.documents.length;
  }

  /** The documents matching at least one query term, best first (ties keep catalogue order). */
  search(query: string, limit: number): Bm25Hit[] {
    const terms = [...new Set(tokenize(query))];
    const count = this.documents.length;
    const hits: Bm25Hit[] = [];
    for (const document of this.documents) {
      let score = 0;
      for (const term of terms) {
        const frequency = document.frequencies.get(term);
        if (frequency === undefined) continue;
        const documentFrequency = this.documentFrequency.get(term) ?? 0;
        const idf = Math.log(1 + (count - documentFrequency + 0.5) / (documentFrequency + 0.5));
        const lengthRatio = this.averageLength === 0 ? 1 : document.length / this.averageLength;
        score += (idf * frequency * (this.k1 + 1)) / (frequency + this.k1 * (1 - this.b + this.b * lengthRatio));
      }
      if (score > 0) hits.push({ id: document.id, score });
    }
    return hits.sort((left, right) => right.score - left.score).slice(0, Math.max(0, limit));
  }
}
