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
console.log(`smoke cjs: ok (${Object.keys(pkg.exports).filter((key) => key !== './package.json' && !key.includes('*')).length} entry points; ./types/* is declarations only)`);
