/** Small statistics and table helpers for the benchmarks. */

/** Median, min and max of some samples. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

/** Summarises `samples` (NaN everywhere when empty). */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  const sorted = [...samples].sort((left, right) => left - right);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, n: sorted.length };
}

/** Samples grouped by subject and row name. */
export class Samples {
  readonly #byKey = new Map<string, number[]>();

  add(subject: string, row: string, value: number): void {
    const key = `${subject}\u0000${row}`;
    let list = this.#byKey.get(key);
    if (list === undefined) {
      list = [];
      this.#byKey.set(key, list);
    }
    list.push(value);
  }

  get(subject: string, row: string): number[] {
    return this.#byKey.get(`${subject}\u0000${row}`) ?? [];
  }

  summary(subject: string, row: string): Summary {
    return summarize(this.get(subject, row));
  }

  median(subject: string, row: string): number {
    return this.summary(subject, row).median;
  }
}

/** A number with 3 significant digits (or '-' for NaN). */
export function fmt(value: number): string {
  if (!Number.isFinite(value)) return '-';
  const abs = Math.abs(value);
  if (abs >= 1000) return value.toFixed(0);
  if (abs >= 100) return value.toFixed(1);
  if (abs >= 10) return value.toFixed(2);
  if (abs >= 1) return value.toFixed(2);
  if (abs >= 0.01) return value.toFixed(3);
  if (abs === 0) return '0';
  return value.toPrecision(2);
}

/** A Markdown table (also readable in a terminal). */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (column === 0 ? `${'-'.repeat(width + 1)}-` : `${'-'.repeat(width + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Milliseconds since an arbitrary origin, high resolution. */
export function now(): number {
  return performance.now();
}

/** Lets pending macrotasks run (timers, I/O) and gives the GC a chance between samples. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A full GC when `--expose-gc` is on (no-op otherwise). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    gc();
    gc();
  }
}
