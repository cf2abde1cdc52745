/**
 * `npm run inspect`: the run inspector on the offline demo agent (no API key). Open the printed
 * address, chat, and watch each run as a marble timeline: processor hooks, chunks in and out,
 * the moderation judge's call, the tool call, the retry of a curt reply, the tripwire on a secret.
 *
 * `npm run inspect -- --journal $DATABASE_URL` also lists the recent runs of that PostgreSQL run
 * journal (any instance's, ended or not) and opens them in the page after the fact;
 * `--run <id>` opens one at once (its address is printed). `--schema` names the journal's schema
 * (default `rxagent`).
 *
 * PORT / HOST choose where it listens (127.0.0.1:3211; PORT=0 for any free port).
 */
import { parseArgs } from 'node:util';
import { inspect } from 'rxagent/devtools';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { createDemoAgent, DEMO_PROMPTS } from './demo-agent.js';

const { values: args } = parseArgs({ options: { journal: { type: 'string' }, run: { type: 'string' }, schema: { type: 'string' } } });
if (args.run !== undefined && args.journal === undefined) {
  console.error('inspect: --run <id> opens a run from a journal: give --journal <postgres://…> too.');
  process.exit(2);
}
const journal = args.journal === undefined ? undefined : new PostgresRunJournal({ connectionString: args.journal, ...(args.schema === undefined ? {} : { schema: args.schema }) });

const server = await inspect(createDemoAgent(), {
  port: process.env.PORT === undefined ? 3211 : Number(process.env.PORT),
  host: process.env.HOST ?? '127.0.0.1',
  suggestions: DEMO_PROMPTS,
  ...(journal === undefined ? {} : { journal }),
});
console.log(`rxagent inspector: ${server.url}  (offline demo agent; Ctrl+C to stop)`);
console.log(`Try: ${DEMO_PROMPTS.map((prompt) => JSON.stringify(prompt)).join(', ')}`);
if (journal !== undefined) {
  const runs = await server.inspector.journalRuns(journal, 20);
  console.log(runs.length === 0 ? 'journal: no runs yet' : `journal: ${runs.length} recent runs (open them from the page's Journal list):`);
  for (const run of runs) {
    const owner = run.owner === undefined ? '' : `, owner ${run.owner}`;
    console.log(`  ${run.runId}  ${run.agentId}  ${run.status}${run.epoch > 1 ? ' (taken over)' : ''}  epoch ${run.epoch}${owner}  updated ${run.updatedAt.toISOString()}`);
  }
  if (args.run !== undefined) {
    await server.inspector.openJournalRun(journal, args.run);
    console.log(`opened ${args.run}: ${server.url}#run=${encodeURIComponent(args.run)}`);
  }
}
const stop = (): void =>
  void server
    .close()
    .then(() => journal?.close())
    .then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
