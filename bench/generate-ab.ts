/**
 * `generate()` with no processors against the AI SDK's `generateText` on the same minimal model,
 * alternating in one process, many calls per sample (the suite's quick profile takes 30 calls a
 * sample, too few for sub-millisecond calls on a loaded machine). Prints a table: median ms/call of
 * each and their ratio.
 *
 *   RXAGENT_BENCH_SRC=dist node --import tsx bench/generate-ab.ts [rounds=7] [calls=400]
 */
import { aiSdkSubject } from './lib/ai-sdk-subject.js';
import { rxagentSubject } from './lib/rxagent-subject.js';
import { minimalModel, textAnswerParts } from './minimal-model.js';
import { markdownTable } from './lib/stats.js';

const [roundsArg = '7', callsArg = '400'] = process.argv.slice(2);
const rounds = Number(roundsArg);
const calls = Number(callsArg);
const parts = textAnswerParts(1);
const subjects = [rxagentSubject, aiSdkSubject].map((subject) => ({ name: subject.name, agent: subject.agent({ model: minimalModel(() => parts) }), samples: [] as number[] }));

for (let round = -1; round < rounds; round++) {
  for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
    const started = performance.now();
    for (let call = 0; call < calls; call++) await subject.agent.generate('Hello');
    if (round >= 0) subject.samples.push((performance.now() - started) / calls); // round -1 warms up
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const [rx, sdk] = subjects.map((subject) => median(subject.samples)) as [number, number];
console.log(`generate() K=0 vs generateText, ${rounds} rounds × ${calls} calls, alternating; Node ${process.version}`);
console.log(markdownTable(['workload', 'rxagent (ms/call)', 'AI SDK generateText (ms/call)', 'ratio'], [['generate(), K=0', rx.toFixed(3), sdk.toFixed(3), (rx / sdk).toFixed(2)]]));
