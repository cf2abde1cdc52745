/**
 * Runs one workload of the suite over and over, for a CPU profile of rxagent's hot path:
 *
 *   node_modules/.bin/node --import tsx --cpu-prof --cpu-prof-dir=.prof bench/profile.ts "stream$(), K=10 sync" 30
 *
 * The row is matched by prefix (see `rowName` in bench/lib/suite.ts); sizes are the full profile's.
 */
import { rxagentSubject } from './lib/rxagent-subject.js';
import { profiles, timeWorkload, workloads } from './lib/suite.js';

const [prefix = 'stream$(), K=0 sync', repsArg = '20'] = process.argv.slice(2);
const workload = workloads(profiles.full).find((candidate) => candidate.row.startsWith(prefix) && candidate.by !== 'floor');
if (workload === undefined) throw new Error(`no rxagent workload starts with ${JSON.stringify(prefix)}`);
for (let rep = 0; rep < Number(repsArg); rep++) {
  const timing = await timeWorkload(workload, rxagentSubject);
  process.stdout.write(`${workload.row}: ${timing.wall.toFixed(3)}\n`);
}
