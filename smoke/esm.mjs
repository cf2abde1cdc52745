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
console.log(`smoke esm: ok (${Object.keys(pkg.exports).filter((key) => key !== './package.json' && !key.includes('*')).length} entry points; ./types/* is declarations only)`);
