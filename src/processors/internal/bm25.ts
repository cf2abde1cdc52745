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
}

/** One document holding a term, and how often. */
interface Posting {
  document: number;
  frequency: number;
}

/**
 * BM25 over `documents` (`k1` term saturation, `b` length normalisation). An inverted index: a
 * query costs its length plus the postings of its distinct terms, whatever the catalogue's size —
 * never documents × terms (a model's query of 100,000 distinct words took seconds).
 */
export class Bm25Index {
  private readonly documents: IndexedDocument[];
  private readonly postings = new Map<string, Posting[]>();
  private readonly averageLength: number;
  private readonly k1: number;
  private readonly b: number;

  constructor(documents: ReadonlyArray<{ id: string; text: string }>, options: { k1?: number; b?: number } = {}) {
    this.k1 = options.k1 ?? 1.2;
    this.b = options.b ?? 0.75;
    this.documents = documents.map(({ id, text }, document) => {
      const tokens = tokenize(text);
      const frequencies = new Map<string, number>();
      for (const token of tokens) frequencies.set(token, (frequencies.get(token) ?? 0) + 1);
      for (const [token, frequency] of frequencies) {
        const list = this.postings.get(token);
        if (list === undefined) this.postings.set(token, [{ document, frequency }]);
        else list.push({ document, frequency });
      }
      return { id, length: tokens.length };
    });
    const totalLength = this.documents.reduce((sum, document) => sum + document.length, 0);
    this.averageLength = this.documents.length === 0 ? 0 : totalLength / this.documents.length;
  }

  /** The documents matching at least one query term, best first (ties keep catalogue order). */
  search(query: string, limit: number): Bm25Hit[] {
    const count = this.documents.length;
    const scores = new Map<number, number>();
    for (const term of new Set(tokenize(query))) {
      const list = this.postings.get(term);
      if (list === undefined) continue;
      const idf = Math.log(1 + (count - list.length + 0.5) / (list.length + 0.5));
      for (const { document, frequency } of list) {
        const length = (this.documents[document] as IndexedDocument).length;
        const lengthRatio = this.averageLength === 0 ? 1 : length / this.averageLength;
        const score = (idf * frequency * (this.k1 + 1)) / (frequency + this.k1 * (1 - this.b + this.b * lengthRatio));
        scores.set(document, (scores.get(document) ?? 0) + score);
      }
    }
    const hits: Array<Bm25Hit & { document: number }> = [];
    for (const [document, score] of scores) if (score > 0) hits.push({ id: (this.documents[document] as IndexedDocument).id, score, document });
    return hits
      .sort((left, right) => right.score - left.score || left.document - right.document)
      .slice(0, Math.max(0, limit))
      .map(({ id, score }) => ({ id, score }));
  }
}
