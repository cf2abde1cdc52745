/**
 * Every string of a structured value (tool arguments, tool results, data chunks, stored parts):
 * values **and object keys**, at any depth, for the guards that check or rewrite them.
 *
 * The walk is iterative (an explicit work list, no recursion), so a value nested 100,000 levels
 * deep costs no stack; every container is visited once, so shared and cyclic references cost no
 * more than the value's size, and `transform` runs once per string occurrence in a container
 * (a shared container is transformed once). Containers walked: arrays, plain objects (prototype
 * `Object.prototype` or `null`) and `Error`s (`message`, `cause` and own enumerable properties).
 * Other class instances (dates, buffers, maps…) are left as they are: they reach a client or a
 * store only through their own serialisation.
 */

type Container = unknown[] | Record<string, unknown> | Error;

/** One container of the value: its entries and, once mapped, the new ones. */
interface Node {
  readonly source: Container;
  /** Entry names (array indices are not renamed; object keys and `Error` fields are). */
  readonly keys: string[];
  /** Each entry's value (a string: transformed). */
  readonly values: unknown[];
  /** New name of each renamed key (allocated on the first rename). */
  newKeys: Array<string | undefined> | undefined;
  /** The node of each entry that is a container (allocated on the first one). */
  children: Array<Node | undefined> | undefined;
  /** Containers that hold this one (to propagate a change upwards); the first one inline. */
  parent: Node | undefined;
  otherParents: Node[] | undefined;
  changed: boolean;
  copy: Container | undefined;
}

function isContainer(value: unknown): value is Container {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value) || value instanceof Error) return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A node for `container` (its entries read once, in order). */
function nodeFor(container: Container): Node {
  let keys: string[];
  let values: unknown[];
  if (Array.isArray(container)) {
    keys = [];
    values = Array.from(container);
  } else {
    keys = Object.keys(container);
    values = keys.map((key) => (container as Record<string, unknown>)[key]);
    if (container instanceof Error) {
      keys.unshift('message');
      values.unshift(container.message);
      if (Object.prototype.hasOwnProperty.call(container, 'cause')) {
        keys.push('cause');
        values.push(container.cause);
      }
    }
  }
  return { source: container, keys, values, newKeys: undefined, children: undefined, parent: undefined, otherParents: undefined, changed: false, copy: undefined };
}

/** The nodes of `root` (a container), every string transformed; `changed` set on each node that holds a change. */
function mapNodes(root: Container, transform: (text: string) => string): Node {
  const nodes = new Map<Container, Node>();
  // Breadth first: a container's strings, then its children's, in order.
  const pending: Node[] = [];
  const nodeOf = (container: Container, parent: Node | undefined): Node => {
    let node = nodes.get(container);
    if (node === undefined) {
      node = nodeFor(container);
      nodes.set(container, node);
      pending.push(node);
    }
    if (parent !== undefined) {
      if (node.parent === undefined) node.parent = parent;
      else (node.otherParents ??= []).push(parent);
    }
    return node;
  };
  const rootNode = nodeOf(root, undefined);
  const changed: Node[] = [];
  for (let next = 0; next < pending.length; next++) {
    const node = pending[next] as Node;
    const isError = node.source instanceof Error;
    const { keys, values } = node;
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as string;
      if (isError && (key === 'message' || key === 'cause')) continue;
      const newKey = transform(key);
      if (newKey === key) continue;
      (node.newKeys ??= new Array<string | undefined>(keys.length))[index] = newKey;
      node.changed = true;
    }
    for (let index = 0; index < values.length; index++) {
      const value = values[index];
      if (typeof value === 'string') {
        const next = transform(value);
        if (next === value) continue;
        values[index] = next;
        node.changed = true;
      } else if (isContainer(value)) {
        (node.children ??= new Array<Node | undefined>(values.length))[index] = nodeOf(value, node);
      }
    }
    if (node.changed) changed.push(node);
  }
  // A container changes when anything it holds changes (cycles included).
  const mark = (parent: Node | undefined): void => {
    if (parent === undefined || parent.changed) return;
    parent.changed = true;
    changed.push(parent);
  };
  while (changed.length > 0) {
    const node = changed.pop() as Node;
    mark(node.parent);
    for (const parent of node.otherParents ?? []) mark(parent);
  }
  for (const node of nodes.values()) if (node.changed) node.copy = shellOf(node);
  for (const node of nodes.values()) if (node.changed) fill(node);
  return rootNode;
}

/** An empty copy of a changed container (filled once every copy exists, so cycles resolve). */
function shellOf(node: Node): Container {
  const source = node.source;
  if (Array.isArray(source)) return new Array<unknown>(source.length);
  if (source instanceof Error) {
    // Same prototype (class and inherited `name` kept) without running a subclass constructor; the
    // stack keeps its frames under the new message.
    const copy = Object.create(Object.getPrototypeOf(source) as object) as Error;
    const message = node.values[0] as string;
    const header = `${source.name}: ${source.message}`;
    const frames = typeof source.stack === 'string' && source.stack.startsWith(header) ? source.stack.slice(header.length) : '';
    Object.defineProperty(copy, 'message', { value: message, writable: true, configurable: true, enumerable: false });
    Object.defineProperty(copy, 'stack', { value: `${source.name}: ${message}${frames}`, writable: true, configurable: true, enumerable: false });
    return copy;
  }
  return Object.getPrototypeOf(source) === null ? (Object.create(null) as Record<string, unknown>) : {};
}

/** The new value of entry `index`: a changed child's copy, or the (transformed) value. */
function valueOf(node: Node, index: number): unknown {
  const child = node.children?.[index];
  if (child === undefined) return node.values[index];
  return child.changed ? child.copy : child.source;
}

/** Writes a changed container's entries into its copy; renamed keys that collide get ` (2)`, ` (3)`… */
function fill(node: Node): void {
  const copy = node.copy as Container;
  if (Array.isArray(copy)) {
    for (let index = 0; index < node.values.length; index++) copy[index] = valueOf(node, index);
    return;
  }
  // Unchanged keys keep their names; a renamed key takes the next free name.
  const taken = new Set<string>();
  node.keys.forEach((key, index) => {
    if (node.newKeys?.[index] === undefined) taken.add(key);
  });
  node.keys.forEach((key, index) => {
    if (copy instanceof Error && key === 'message') return;
    let name = node.newKeys?.[index] ?? key;
    if (name !== key) {
      const base = name;
      for (let suffix = 2; taken.has(name); suffix++) name = `${base} (${suffix})`;
      taken.add(name);
    }
    // defineProperty, not assignment: a key named `__proto__` stays a plain property.
    Object.defineProperty(copy, name, {
      value: valueOf(node, index),
      enumerable: !(copy instanceof Error && key === 'cause'),
      writable: true,
      configurable: true,
    });
  });
}

/**
 * `value` with every string — values and object keys, at any depth — passed through `transform`.
 * Returns the same reference when nothing changed, and keeps the identity of every untouched
 * container; a changed container is copied (cycles and shared references are kept in the copy).
 * A renamed key that collides with another key of its object gets ` (2)`, ` (3)`… (keys that were
 * not renamed keep their names), so no value is lost. `Error`s are copied with a transformed
 * `message`; other class instances are left as they are.
 *
 * @example
 * ```ts
 * mapStrings({ 'ada@example.com': ['ada@example.com'] }, (text) => text.replace(/\S+@\S+/, '[EMAIL]'));
 * // { '[EMAIL]': ['[EMAIL]'] }
 * ```
 */
export function mapStrings(value: unknown, transform: (text: string) => string): unknown {
  if (typeof value === 'string') return transform(value);
  if (!isContainer(value)) return value;
  const root = mapNodes(value, transform);
  return root.changed ? root.copy : value;
}

/**
 * Every string of `value` — values and object keys (array indices excluded), at any depth, each
 * container once — in walk order.
 *
 * @example
 * ```ts
 * collectStrings({ 'ada@example.com': { note: 'hi' } }); // ['ada@example.com', 'note', 'hi']
 * ```
 */
export function collectStrings(value: unknown): string[] {
  const strings: string[] = [];
  mapStrings(value, (text) => {
    strings.push(text);
    return text;
  });
  return strings;
}
