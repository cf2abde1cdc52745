/**
 * Steady-state CPU of one `generate('Hello')` with no processors on the minimal model (one
 * one-character answer), for one subject per process: `warmup` calls, then `rounds` rounds of
 * `calls` calls; prints the median process CPU (user + system) per call in µs. Run the subjects in
 * separate processes, alternately.
 *
 *   RXAGENT_BENCH_SRC=dist node --import tsx bench/generate-steady.ts <rxagent|ai-sdk> [warmup=3000] [rounds=5] [calls=4000]
 */
import { minimalModel, textAnswerParts } from './minimal-model.js';
import type { BenchSubject } from './lib/subject.js';

const [name = 'rxagent', warmupArg = '3000', roundsArg = '5', callsArg = '4000'] = process.argv.slice(2);
const subject: BenchSubject =
  name === 'ai-sdk' ? (await import('./lib/ai-sdk-subject.js')).aiSdkSubject : (await import('./lib/rxagent-subject.js')).rxagentSubject;
const parts = textAnswerParts(1);
const agent = subject.agent({ model: minimalModel(() => parts) });

for (let call = 0; call < Number(warmupArg); call++) await agent.generate('Hello');
if (process.env.GENERATE_STEADY_MARK) console.log('--- measured phase');
const samples: number[] = [];
for (let round = 0; round < Number(roundsArg); round++) {
  const started = process.cpuUsage();
  for (let call = 0; call < Number(callsArg); call++) await agent.generate('Hello');
  const used = process.cpuUsage(started);
  samples.push((used.user + used.system) / Number(callsArg));
}
const sorted = [...samples].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)] as number;
console.log(`${subject.name} generate() steady: median ${median.toFixed(1)} µs/call process CPU (rounds: ${samples.map((s) => s.toFixed(1)).join(', ')}); Node ${process.version}`);
