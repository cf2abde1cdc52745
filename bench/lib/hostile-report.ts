/** The hostile-input rows as a table, and the check `bench:check` applies to them. */
import { measureHostile, worstRows, type HostileRow } from './hostile.js';
import { fmt, markdownTable } from './stats.js';

/**
 * The longest event-loop stall allowed on a 100 KB hostile input (ms): the CPU time of a guard's
 * longest synchronous hook call (CPU time, so other processes on a shared machine do not fail the
 * check). `RXAGENT_BENCH_STALL_MS` overrides it.
 */
export const HOSTILE_STALL_LIMIT_MS = Number(process.env.RXAGENT_BENCH_STALL_MS ?? 50) || 50;

/** Measures, and returns the table of the worst input per processor and path plus the failed checks. */
export async function hostileReport(options: Parameters<typeof measureHostile>[0]): Promise<{ rows: HostileRow[]; table: string; failures: string[] }> {
  const rows = await measureHostile(options);
  const worst = worstRows(rows);
  const failures = worst
    .filter((row) => row.owner === 'guards' && row.stallMs > HOSTILE_STALL_LIMIT_MS)
    .map((row) => `  ${row.processor} (${row.path}, ${row.input}): ${fmt(row.stallMs)} ms`);
  const table = markdownTable(
    ['hostile input, 100 KB (worst of 10 inputs)', 'worst input', 'longest hook call, CPU ms', 'same, wall ms', 'longest loop delay ms', 'total wall ms', 'checked'],
    worst.map((row) => [
      `${row.processor}, ${row.path}`,
      row.input,
      fmt(row.stallMs),
      fmt(row.wallMs),
      fmt(row.loopMs),
      fmt(row.totalMs),
      row.owner === 'guards' ? `≤ ${HOSTILE_STALL_LIMIT_MS}` : '–',
    ]),
  );
  return { rows, table, failures };
}
