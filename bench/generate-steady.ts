/**
 * `generate('Hello')` with no processors on the minimal model (one one-character answer), in
 * steady state: rxagent against the AI SDK's `generateText`, each in its own process, the two
 * alternating. A process makes `warmup` calls, then `rounds` rounds of `calls` calls, and reports
 * the median of its rounds' process CPU (user + system) per call. Prints a table: each process's
 * median, the medians of both, and their ratio.
 *
 * 3,000 warm-up calls are not enough on a 2-core machine (the rounds after them still compile);
 * 20,000 are. The suite's `generate()` rows (50 calls a sample) measure that warm-up.
 *
 *   RXAGENT_BENCH_SRC=dist node --import tsx bench/generate-steady.ts [processes=3] [warmup=20000] [rounds=9] [calls=4000]
 *   RXAGENT_BENCH_SRC=dist node --import tsx bench/generate-steady.ts --subject <rxagent|ai-sdk> [warmup] [rounds] [calls]   (one process)
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { markdownTable } from './lib/stats.js';
import type { BenchSubject } from './lib/subject.js';
import { minimalModel, textAnswerParts } from './minimal-model.js';

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** One subject in this process: the median µs of process CPU per call over the rounds, and each round's. */
async function measure(name: string, warmup: number, rounds: number, calls: number): Promise<{ median: number; rounds: number[] }> {
  const subject: BenchSubject = name === 'ai-sdk' ? (await import('./lib/ai-sdk-subject.js')).aiSdkSubject : (await import('./lib/rxagent-subject.js')).rxagentSubject;
  const parts = textAnswerParts(1);
  const agent = subject.agent({ model: minimalModel(() => parts) });
  for (let call = 0; call < warmup; call++) await agent.generate('Hello');
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = process.cpuUsage();
    for (let call = 0; call < calls; call++) await agent.generate('Hello');
    const used = process.cpuUsage(started);
    samples.push((used.user + used.system) / calls);
  }
  return { median: median(samples), rounds: samples };
}

const args = process.argv.slice(2);
if (args[0] === '--subject') {
  const [, name = 'rxagent', warmup = '20000', rounds = '9', calls = '4000'] = args;
  console.log(JSON.stringify(await measure(name, Number(warmup), Number(rounds), Number(calls))));
} else {
  const [processes = '3', warmup = '20000', rounds = '9', calls = '4000'] = args;
  const subjects = ['rxagent', 'ai-sdk'] as const;
  const medians: Record<(typeof subjects)[number], number[]> = { rxagent: [], 'ai-sdk': [] };
  for (let index = 0; index < Number(processes); index++) {
    for (const name of index % 2 === 0 ? subjects : [...subjects].reverse()) {
      const output = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--subject', name, warmup, rounds, calls], { encoding: 'utf8' });
      medians[name].push((JSON.parse(output.trim().split('\n').pop() as string) as { median: number }).median);
    }
  }
  const rx = median(medians.rxagent);
  const sdk = median(medians['ai-sdk']);
  console.log(`generate() K=0, steady state: ${processes} processes each, alternating, ${warmup} warm-up calls, median of ${rounds} rounds × ${calls} calls; Node ${process.version}`);
  console.log(
    markdownTable(
      ['workload', 'rxagent (µs/call, each process)', 'AI SDK generateText', 'rxagent / generateText (medians)'],
      [['generate(), K=0', medians.rxagent.map((value) => value.toFixed(1)).join(', '), medians['ai-sdk'].map((value) => value.toFixed(1)).join(', '), (rx / sdk).toFixed(2)]],
    ),
  );
}
