/**
 * What a workload retains, from two heap snapshots of one process: the objects of `live` that
 * `base` did not have (V8 keeps object ids across snapshots), per unit (`divisor`: e.g. the
 * number of in-flight runs), grouped four ways: by node type; by type and constructor (closures by
 * their script and position); plain objects by their property names; property / element stores,
 * cons strings and closure contexts by what holds them.
 *
 *   RXAGENT_BENCH_HEAPSNAPSHOT=/tmp/mem node --expose-gc --import tsx bench/memory-worker.ts rxagent 200 200 5
 *   node --max-old-space-size=6000 --import tsx bench/heap-diff.ts /tmp/mem-base.heapsnapshot /tmp/mem-live.heapsnapshot 200
 *
 * Under tsx every module is one line (`minifyWhitespace`), so a closure's position is `file:1:column`
 * of that output; `--rows=N` lists N rows per table (default 40); `--locate` prints the code there (the module transformed again as tsx does it).
 * A closure listed under "dictionary properties" had its `name` redefined by `keepNames` (tsx, and
 * tsup with `keepNames`): 256 bytes more per closure.
 */
import { readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]]; location_fields: string[] } };
  nodes: number[];
  edges: number[];
  strings: string[];
  locations: number[];
}

const argv = process.argv.slice(2);
const locate = argv.includes('--locate');
/** `--rows=N`: rows per table (default 40). */
const rowLimit = Number(argv.find((arg) => arg.startsWith('--rows='))?.slice('--rows='.length) ?? 40);
const [basePath, livePath, divisorArg = '1'] = argv.filter((arg) => !arg.startsWith('--'));
if (basePath === undefined || livePath === undefined) throw new Error('usage: heap-diff.ts BASE.heapsnapshot LIVE.heapsnapshot [divisor] [--locate]');
const divisor = Number(divisorArg);
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Snapshot;

const baseIds = new Set<number>();
{
  const base = read(basePath);
  const fields = base.snapshot.meta.node_fields;
  const idIndex = fields.indexOf('id');
  for (let at = 0; at < base.nodes.length; at += fields.length) baseIds.add(base.nodes[at + idIndex] as number);
}

const live = read(livePath);
const meta = live.snapshot.meta;
const width = meta.node_fields.length;
const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((field) => meta.node_fields.indexOf(field)) as [number, number, number, number, number];
const edgeWidth = meta.edge_fields.length;
const count = live.nodes.length / width;
const field = (node: number, at: number) => live.nodes[node * width + at] as number;
const typeOf = (node: number) => meta.node_types[0][field(node, typeAt)] as string;
const nameOf = (node: number) => live.strings[field(node, nameAt)] as string;
const isNew = (node: number) => !baseIds.has(field(node, idAt));
const firstEdge = new Int32Array(count + 1);
for (let node = 0, edge = 0; node < count; node++) {
  firstEdge[node] = edge;
  edge += field(node, edgeCountAt) * edgeWidth;
  firstEdge[node + 1] = edge;
}
const edgeType = (edge: number) => meta.edge_types[0][live.edges[edge] as number] as string;
const edgeName = (edge: number) => {
  const type = edgeType(edge);
  const name = live.edges[edge + 1] as number;
  return type === 'element' || type === 'hidden' ? `[${name}]` : (live.strings[name] as string);
};
const edgeTo = (edge: number) => (live.edges[edge + 2] as number) / width;
const child = (node: number, name: string): number | undefined => {
  for (let edge = firstEdge[node] as number; edge < (firstEdge[node + 1] as number); edge += edgeWidth) if (edgeName(edge) === name) return edgeTo(edge);
  return undefined;
};

// closure positions
const locations = new Map<number, [number, number]>();
{
  const fields = meta.location_fields;
  const [objectAt, lineAt, columnAt] = ['object_index', 'line', 'column'].map((name) => fields.indexOf(name)) as [number, number, number];
  for (let at = 0; at < live.locations.length; at += fields.length) {
    locations.set((live.locations[at + objectAt] as number) / width, [live.locations[at + lineAt] as number, live.locations[at + columnAt] as number]);
  }
}
function scriptOf(closure: number): string {
  const shared = child(closure, 'shared');
  const script = shared === undefined ? undefined : child(shared, 'script');
  if (script === undefined) return '?';
  const source = child(script, 'name');
  return (source === undefined ? nameOf(script) : nameOf(source)).replace(/^.*\/(src|node_modules)\//, '$1/');
}
const where = (closure: number) => {
  const position = locations.get(closure);
  return `${scriptOf(closure)}:${position ? `${position[0] + 1}:${position[1] + 1}` : '?'}`;
};

// the first new holder of each new node
const holder = new Map<number, [number, string]>();
for (let node = 0; node < count; node++) {
  for (let edge = firstEdge[node] as number; edge < (firstEdge[node + 1] as number); edge += edgeWidth) {
    const to = edgeTo(edge);
    if (edgeType(edge) !== 'weak' && !holder.has(to) && isNew(to)) holder.set(to, [node, edgeName(edge)]);
  }
}
const propertyNames = (node: number) => {
  const names: string[] = [];
  for (let edge = firstEdge[node] as number; edge < (firstEdge[node + 1] as number); edge += edgeWidth) if (edgeType(edge) === 'property') names.push(edgeName(edge));
  return names;
};
const describe = (node: number) =>
  typeOf(node) === 'object' && nameOf(node) === 'Object' ? `{${propertyNames(node).slice(0, 8).join(',')}}` : `${typeOf(node)}:${nameOf(node).slice(0, 40)}${typeOf(node) === 'closure' ? `@${where(node)}` : ''}`;

type Groups = Map<string, { count: number; bytes: number }>;
const groups = new Map<string, Groups>();
const add = (table: string, key: string, bytes: number) => {
  const rows = groups.get(table) ?? new Map();
  groups.set(table, rows);
  const row = rows.get(key) ?? { count: 0, bytes: 0 };
  row.count++;
  row.bytes += bytes;
  rows.set(key, row);
};
let total = 0;
for (let node = 0; node < count; node++) {
  if (!isNew(node)) continue;
  const type = typeOf(node);
  const name = nameOf(node);
  const bytes = field(node, sizeAt);
  total += bytes;
  add('by type', type, bytes);
  add('by type and name', `${type}\t${type.endsWith('string') ? '' : type === 'closure' ? `${name} @${where(node)}` : name.slice(0, 80)}`, bytes);
  const held = holder.get(node);
  let owner = held;
  if (type === 'concatenated string') {
    // the string a cons chain belongs to: the first holder that is not part of the chain
    for (let guard = 0; owner !== undefined && typeOf(owner[0]) === 'concatenated string' && guard < 100_000; guard++) owner = holder.get(owner[0]);
  }
  // an array's store: name the array's own holder too
  const outer = owner !== undefined && typeOf(owner[0]) === 'object' && nameOf(owner[0]) === 'Array' ? holder.get(owner[0]) : undefined;
  const by = owner === undefined ? '?' : `${outer === undefined ? '' : `${describe(outer[0])} .${outer[1]} > `}${describe(owner[0])} .${owner[1]}`;
  if (type === 'object' && name === 'Object') add('plain objects by properties', describe(node), bytes);
  else if (type === 'array' || type === 'concatenated string' || name === 'system / Context') add(`${type} ${name} by holder`, by, bytes);
  if (type === 'object' && (name === 'Map' || name === 'Set' || name === 'Observable' || name === 'SafeSubscriber' || (describe(node) === '{}' || describe(node) === '{__proto__}'))) add(`${name === 'Object' ? 'object {}' : name} by holder`, by, bytes);
  if (type === 'closure') {
    const properties = child(node, 'properties');
    if (properties !== undefined && isNew(properties) && nameOf(properties) === '(object properties)') add('closures with dictionary properties', `${name} @${where(node)}`, bytes);
  }
}

const transformed = new Map<string, string>();
function codeAt(key: string): string {
  const match = /(src\/[^:]+):1:(\d+)/.exec(key);
  if (!locate || match === null) return '';
  const [, file = '', column = '0'] = match;
  let code = transformed.get(file);
  if (code === undefined) {
    code = transformSync(readFileSync(file, 'utf8'), { loader: 'ts', format: 'esm', target: 'node22', minifyWhitespace: true, keepNames: true, sourcefile: file }).code;
    transformed.set(file, code);
  }
  return `  | ${code.slice(Number(column) - 1, Number(column) + 69)}`;
}

const kib = (bytes: number) => (bytes / divisor / 1024).toFixed(2);
console.log(`new in ${livePath}: ${kib(total)} KiB per unit (÷ ${divisor})`);
for (const [table, rows] of groups) {
  console.log(`\n== ${table}`);
  for (const [key, row] of [...rows].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, rowLimit)) {
    if (row.bytes / divisor < 24) break;
    console.log(`${(row.bytes / divisor).toFixed(0).padStart(7)} B ${(row.count / divisor).toFixed(1).padStart(6)} #  ${key.replace('\t', '  ')}${codeAt(key)}`);
  }
}
