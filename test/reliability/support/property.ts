/**
 * How the reliability properties run: `RXAGENT_PROPERTY_RUNS` cases each (default 1,000; the
 * `test:soak` script sets 20,000), seeded by `RXAGENT_PROPERTY_SEED` (a number, or `random`;
 * default: a fixed seed per property, so CI is reproducible). The seed and the case count of
 * every property are printed; a failure prints fast-check's shrunk counterexample, its seed and
 * path (rerun with `RXAGENT_PROPERTY_SEED=<seed>`).
 */
import fc from 'fast-check';

/** Cases per property. */
export const PROPERTY_RUNS = Math.max(1, Number.parseInt(process.env.RXAGENT_PROPERTY_RUNS ?? '1000', 10) || 1000);

/** A vitest timeout that grows with the case count (1,000 cases: 60 s). */
export const PROPERTY_TIMEOUT_MS = Math.max(60_000, Math.ceil(PROPERTY_RUNS / 1000) * 60_000);

function hash(text: string): number {
  let value = 2166136261;
  for (let index = 0; index < text.length; index++) value = Math.imul(value ^ text.charCodeAt(index), 16777619);
  return value | 0;
}

/** The seed of property `name`. */
export function seedFor(name: string): number {
  const fromEnv = process.env.RXAGENT_PROPERTY_SEED;
  if (fromEnv === 'random') return (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
  if (fromEnv !== undefined && fromEnv !== '' && Number.isFinite(Number(fromEnv))) return Number(fromEnv) | 0;
  return hash(name);
}

/**
 * Checks `predicate` (which throws on a violation) over `runs` generated values and prints the
 * case count and the seed.
 */
export async function checkProperty<T>(name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, runs = PROPERTY_RUNS): Promise<void> {
  const seed = seedFor(name);
  let executed = 0;
  const started = performance.now();
  try {
    await fc.assert(
      fc.asyncProperty(arbitrary, async (value) => {
        executed++;
        await predicate(value);
      }),
      { numRuns: runs, seed },
    );
  } catch (error) {
    console.log(`[property] ${name}: FAILED after ${executed} cases (seed ${seed}); rerun with RXAGENT_PROPERTY_SEED=${seed}`);
    throw error;
  }
  console.log(`[property] ${name}: ${runs} cases passed (seed ${seed}, ${Math.round(performance.now() - started)} ms)`);
}

/** Throws with every problem found (a property's assertion). */
export function expectNone(problems: readonly string[], context: string): void {
  if (problems.length > 0) throw new Error(`${context}:\n  - ${problems.join('\n  - ')}`);
}
