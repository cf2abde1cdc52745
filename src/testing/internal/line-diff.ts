/**
 * A readable line diff (`- expected`, `+ actual`, two lines of context, long equal stretches
 * folded): what the conformance kit prints where a mode's output differs from the live run's.
 */

/** The longest common subsequence table of `a` and `b`, walked into `' '`/`'-'`/`'+'` lines. */
function editScript(a: readonly string[], b: readonly string[]): Array<{ op: ' ' | '-' | '+'; line: string }> {
  const rows = a.length + 1;
  const columns = b.length + 1;
  const table = new Uint32Array(rows * columns);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * columns + j] = a[i] === b[j] ? table[(i + 1) * columns + j + 1]! + 1 : Math.max(table[(i + 1) * columns + j]!, table[i * columns + j + 1]!);
    }
  }
  const script: Array<{ op: ' ' | '-' | '+'; line: string }> = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      script.push({ op: ' ', line: a[i]! });
      i++;
      j++;
    } else if (i < a.length && (j === b.length || table[(i + 1) * columns + j]! >= table[i * columns + j + 1]!)) {
      script.push({ op: '-', line: a[i]! });
      i++;
    } else {
      script.push({ op: '+', line: b[j]! });
      j++;
    }
  }
  return script;
}

/** Whether two line lists are equal. */
export function sameLines(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((line, index) => line === b[index]);
}

/**
 * `expected` against `actual` as diff lines (`- ` only in expected, `+ ` only in actual, `  `
 * both), `context` equal lines kept around each change, at most `maxLines` lines.
 */
export function lineDiff(expected: readonly string[], actual: readonly string[], { context = 2, maxLines = 40 } = {}): string[] {
  const script = editScript(expected, actual);
  const near = script.map((entry, index) => entry.op !== ' ' || script.slice(Math.max(0, index - context), index + context + 1).some((other) => other.op !== ' '));
  const out: string[] = [];
  let folded = 0;
  for (const [index, entry] of script.entries()) {
    if (!near[index]) {
      folded++;
      continue;
    }
    if (folded > 0) out.push(`  … ${folded} equal line${folded === 1 ? '' : 's'}`);
    folded = 0;
    out.push(`${entry.op} ${entry.line}`);
  }
  if (folded > 0) out.push(`  … ${folded} equal line${folded === 1 ? '' : 's'}`);
  return out.length > maxLines ? [...out.slice(0, maxLines), `  … ${out.length - maxLines} more diff lines`] : out;
}
