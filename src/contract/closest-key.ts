/** The closest known key to a misspelt one, for "did you mean …?" hints in option errors. */

/**
 * Edit distance between `a` and `b` counting an insertion, a deletion, a substitution or a swap of
 * two adjacent characters as one edit (optimal string alignment), case-insensitive.
 */
export function editDistance(a: string, b: string): number {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  // rows[i][j]: distance between the first i characters of `left` and the first j of `right`
  const rows: number[][] = Array.from({ length: left.length + 1 }, (_, i) => Array.from({ length: right.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= left.length; i++) {
    const row = rows[i]!;
    const above = rows[i - 1]!;
    for (let j = 1; j <= right.length; j++) {
      const cost = left[i - 1] === right[j - 1] ? 0 : 1;
      let best = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && left[i - 1] === right[j - 2] && left[i - 2] === right[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      row[j] = best;
    }
  }
  return rows[left.length]![right.length]!;
}

/**
 * The known key nearest to `key` by {@link editDistance}, or `undefined` when none is close enough
 * to be a plausible typo (allowed: 2 edits, or a third of the longer name's length if more).
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(key, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const limit = Math.max(2, Math.floor(Math.max(key.length, best?.length ?? 0) / 3));
  return bestDistance <= limit ? best : undefined;
}
