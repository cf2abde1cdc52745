// Requires the built package by name from CommonJS (ai 7 is ESM-only: needs require(esm), Node >= 22.12).
const pkg = require('../package.json');
const { MessageList, TripWire } = require('rxagent');
const list = new MessageList().add('Hello from CJS', 'input');
if (list.get.all.db().length !== 1) throw new Error('MessageList did not hold the message');
if (!TripWire.isInstance(new TripWire('x', {}, 'p'))) throw new Error('TripWire missing');
for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json' && !key.includes('*'))) {
  const name = subpath === '.' ? 'rxagent' : `rxagent/${subpath.slice(2)}`;
  const module = require(name);
  if (Object.keys(module).length === 0) throw new Error(`${name} exports nothing`);
}
// an Agent from `rxagent` runs in a loop composed from `rxagent/loop`: the entries share one Agent class
{
  const { Agent } = require('rxagent');
  const { withAgentRun, runInput, runStep, runCommit, isStepEnd, endWithTerminal } = require('rxagent/loop');
  const { mockModel, textParts, finishPart } = require('rxagent/testing');
  const { concat, filter } = require('rxjs');
  const agent = new Agent({ id: 'smoke', model: mockModel({ parts: [...textParts('ok'), finishPart('stop')] }) });
  const types = [];
  // a run on a mock model given its parts is synchronous: every chunk arrives inside subscribe
  withAgentRun({ agent, input: 'hi' }, (run) =>
    concat(runInput(run), runStep(run, 0).pipe(filter((item) => !isStepEnd(item))), runCommit(run)).pipe(endWithTerminal({ runId: run.runId })),
  ).subscribe((chunk) => types.push(chunk.type));
  if (types[0] !== 'start' || types.at(-1) !== 'finish') throw new Error(`rxagent/loop: a composed loop gave ${types.join(', ')}`);
}
console.log(`smoke cjs: ok (${Object.keys(pkg.exports).filter((key) => key !== './package.json' && !key.includes('*')).length} entry points; ./types/* is declarations only)`);
