/**
 * Event-loop delay while the default tokenizer loads, during a `TokenLimiterProcessor`'s first call
 * (issue 24 §17). Each measurement runs in a fresh process (an empty module cache, as after a
 * deploy): a 1 ms ticker records the longest gap between its ticks (what another user's stream
 * would wait) while the first `processOutputStream` call waits for the tokenizer, and the CPU time
 * the process used between those two ticks (on a loaded machine a wall-clock gap may be the
 * scheduler's, not ours: the CPU-busy gap is the stall the process itself caused).
 *
 *   npx tsx bench/tokenizer-load.ts            rxagent's loader (ranks parsed in slices) vs importing gpt-tokenizer's encoding module
 *   npm run bench -- --tokenizer               the same, from bench/run.ts
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fmt, markdownTable } from './lib/stats.js';

type Loader = 'rxagent' | 'gpt-tokenizer import' | 'idle';

/** One measurement in this process (run by the child). */
interface Figures {
  longestGapMs: number;
  longestBusyMs: number;
  loadMs: number;
  firstCallMs: number;
}

async function measureHere(loader: Loader): Promise<Figures> {
  // rxagent's modules are imported (and compiled by tsx) before the measurement: only the tokenizer's load is timed
  const { TokenLimiterProcessor } = await import('../src/processors/token-limiter.js');
  const { chunk } = await import('../src/testing/chunk-builders.js');
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let longestGapMs = 0;
  let longestBusyMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    longestGapMs = Math.max(longestGapMs, now - last);
    longestBusyMs = Math.max(longestBusyMs, (cpu.user + cpu.system) / 1000);
    last = now;
    lastCpu = process.cpuUsage();
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 50)); // the ticker runs steadily before the load starts
  longestGapMs = 0;
  longestBusyMs = 0;
  last = performance.now();
  lastCpu = process.cpuUsage();
  const started = performance.now();
  let firstCallMs = Number.NaN;
  if (loader === 'rxagent') {
    const limiter = new TokenLimiterProcessor({ limit: 1_000 });
    const args = { part: chunk.textDelta('Hello brave new world'), state: {}, abort: () => undefined } as unknown as Parameters<typeof limiter.processOutputStream>[0];
    await limiter.processOutputStream(args);
    firstCallMs = performance.now() - started;
  } else if (loader === 'idle') {
    // nothing loads: the gaps this machine shows on its own over the same time (scheduling noise)
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    firstCallMs = performance.now() - started;
  } else {
    const module = await import('gpt-tokenizer/encoding/o200k_base');
    module.countTokens('Hello brave new world');
    firstCallMs = performance.now() - started;
  }
  const loadMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 20));
  clearInterval(ticker);
  return { longestGapMs, longestBusyMs, loadMs, firstCallMs };
}

/** Runs `loader` in a fresh child process and returns its figures. */
function measureInChild(loader: Loader): Figures {
  const script = fileURLToPath(import.meta.url);
  const output = execFileSync(process.execPath, ['--import', 'tsx', script, '--child', loader], { encoding: 'utf8' });
  return JSON.parse(output.trim().split('\n').at(-1) as string) as Figures;
}

/** The table: `runs` fresh processes per loader, alternated. */
export function tokenizerLoadReport(runs = 3): { table: string; rows: Array<{ loader: Loader; longestGapMs: number[]; longestBusyMs: number[]; firstCallMs: number[] }> } {
  const rows = (['rxagent', 'gpt-tokenizer import', 'idle'] as const).map((loader) => ({ loader, longestGapMs: [] as number[], longestBusyMs: [] as number[], firstCallMs: [] as number[] }));
  for (let run = 0; run < runs; run++) {
    for (const row of run % 2 === 0 ? rows : [...rows].reverse()) {
      const figures = measureInChild(row.loader);
      row.longestGapMs.push(figures.longestGapMs);
      row.longestBusyMs.push(figures.longestBusyMs);
      row.firstCallMs.push(figures.firstCallMs);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  const table = markdownTable(
    ['first TokenLimiter call in a fresh process (median of runs)', 'longest event-loop gap ms', 'gaps (each run)', 'longest CPU-busy gap ms', 'busy gaps (each run)', 'first call resolves after ms'],
    rows.map((row) => [
      row.loader === 'rxagent' ? 'rxagent: ranks read async, parsed in slices'
      : row.loader === 'idle' ? 'nothing loading for 1 s (this machine\'s own scheduling noise)'
      : "before: import('gpt-tokenizer/encoding/o200k_base')",
      fmt(median(row.longestGapMs)),
      row.longestGapMs.map(fmt).join(', '),
      fmt(median(row.longestBusyMs)),
      row.longestBusyMs.map(fmt).join(', '),
      fmt(median(row.firstCallMs)),
    ]),
  );
  return { table, rows };
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') {
  process.stdout.write(`${JSON.stringify(await measureHere(argv[1] as Loader))}\n`);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${tokenizerLoadReport(Number(argv[0] ?? 3) || 3).table}\n`);
}
