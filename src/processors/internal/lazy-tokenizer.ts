/**
 * The default tokenizer (`o200k_base` from `gpt-tokenizer`, an optional peer dependency), loaded on
 * first use with a dynamic `import()`: its ~2 MB of merge data stay out of `rxagent/processors`
 * and out of the process of anyone who passes their own `tokenCounter`. Loaded once per process
 * (the module cache of a dependency, not per-run state); until then `defaultTokenizer.current` is
 * `undefined` and the hooks that need it wait for `defaultTokenizer.load()` once, then run synchronously.
 */

/** The part of `gpt-tokenizer/encoding/o200k_base` rxagent uses. */
export interface Tokenizer {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
  encode(text: string, options: { disallowedSpecial: Set<string> }): number[];
  decode(tokens: Iterable<number>): string;
}

/** The module specifier of the default encoding (for messages; the bundler leaves the package external: a peer dependency). */
export const TOKENIZER_MODULE = 'gpt-tokenizer/encoding/o200k_base';

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

/** The process's default tokenizer: `o200k_base`, imported on first use. */
export const defaultTokenizer: TokenizerLoader = createTokenizerLoader(() => import('gpt-tokenizer/encoding/o200k_base'));
