/**
 * The default tokenizer (`o200k_base`, its ranks from `gpt-tokenizer`'s data file — an optional peer
 * dependency), loaded when a `TokenLimiterProcessor` without a `tokenCounter` is built: the file is
 * read with asynchronous I/O and parsed in slices of a few milliseconds (`o200k-tokenizer.ts`), so
 * loading never stalls the event loop (importing `gpt-tokenizer`'s encoding module blocked it for
 * 250–600 ms at once). The data stays out of `rxagent/processors` and out of the process of anyone
 * who passes their own `tokenCounter`. Loaded once per process (a dependency's data, not per-run
 * state); until then `defaultTokenizer.current` is `undefined` and the hooks that need it wait for
 * `defaultTokenizer.load()` once, then run synchronously.
 */
import { loadO200k, O200K_DATA_FILE, type Tokenizer } from './o200k-tokenizer.js';

export type { Tokenizer };

/** What the default encoding is loaded from (for messages; the package is a peer dependency, never bundled). */
export const TOKENIZER_MODULE = O200K_DATA_FILE;

/** Loads a tokenizer once and keeps it (later calls share the first attempt, its failure too). */
export interface TokenizerLoader {
  /** The tokenizer once loaded, else `undefined`. */
  readonly current: Tokenizer | undefined;
  /** Loads it (once); rejects with {@link missingTokenizerError} when the module cannot be loaded. */
  load(): Promise<Tokenizer>;
}

/** A loader over `importer` (tests inject a failing one). */
export function createTokenizerLoader(importer: () => Promise<Tokenizer>): TokenizerLoader {
  let current: Tokenizer | undefined;
  let loading: Promise<Tokenizer> | undefined;
  return {
    get current() {
      return current;
    },
    load() {
      loading ??= importer().then(
        (module) => (current = module),
        (error: unknown) => {
          throw missingTokenizerError(error);
        },
      );
      return loading;
    },
  };
}

/** An error saying that the optional peer dependency is missing, and what to do. */
export function missingTokenizerError(cause: unknown): Error {
  return new Error(
    `TokenLimiterProcessor: the default token counter needs the optional peer dependency "gpt-tokenizer" (${TOKENIZER_MODULE}), ` +
      'which could not be loaded. Install it (npm install gpt-tokenizer) or pass your own `tokenCounter`.',
    { cause },
  );
}

/** The process's default tokenizer: `o200k_base`, loaded in slices on first use. */
export const defaultTokenizer: TokenizerLoader = createTokenizerLoader(loadO200k);
