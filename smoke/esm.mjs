// Imports the built package by name (through package.json "exports") from ESM.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const require = createRequire(import.meta.url);
// Resolve the package by its own name: Node resolves self-references through "exports".
const { MessageList, Agent, TripWire } = await import('rxagent');
const list = new MessageList().add('Hello from ESM', 'input');
if (list.get.all.db().length !== 1) throw new Error('MessageList did not hold the message');
if (typeof Agent !== 'function' || !TripWire.isInstance(new TripWire('x', {}, 'p'))) throw new Error('main exports missing');
for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json' && !key.includes('*'))) {
  const name = subpath === '.' ? 'rxagent' : `rxagent/${subpath.slice(2)}`;
  const module = await import(name);
  if (Object.keys(module).length === 0) throw new Error(`${name} exports nothing`);
  require.resolve(name);
}
// an Agent from `rxagent` runs in a loop composed from `rxagent/loop`: the entries share one Agent class
{
  const { withAgentRun, runInput, runStep, runCommit, isStepEnd, endWithTerminal } = await import('rxagent/loop');
  const { mockModel, textParts, finishPart } = await import('rxagent/testing');
  const { concat, filter, lastValueFrom, toArray } = await import('rxjs');
  const agent = new Agent({ id: 'smoke', model: mockModel({ parts: [...textParts('ok'), finishPart('stop')] }) });
  const run$ = withAgentRun({ agent, input: 'hi' }, (run) =>
    concat(runInput(run), runStep(run, 0).pipe(filter((item) => !isStepEnd(item))), runCommit(run)).pipe(endWithTerminal({ runId: run.runId })),
  );
  const types = (await lastValueFrom(run$.pipe(toArray()))).map((chunk) => chunk.type);
  if (types[0] !== 'start' || types.at(-1) !== 'finish') throw new Error(`rxagent/loop: a composed loop gave ${types.join(', ')}`);
}
console.log(`smoke esm: ok (${Object.keys(pkg.exports).filter((key) => key !== './package.json' && !key.includes('*')).length} entry points; ./types/* is declarations only)`);
