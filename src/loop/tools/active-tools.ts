/** The tools a step may run: those it offered the model. */
import type { AgentToolSet } from '../../contract/tool-types.js';

/**
 * The step's tools limited to `activeTools` (all of them when it is not set), own names only: a
 * model steered into calling a tool the caller switched off, or a name inherited from
 * `Object.prototype`, finds no tool (a `tool-error`, as for an unknown tool), and nothing runs.
 *
 * @example
 * ```ts
 * activeToolSet({ search, deleteAll }, ['search']); // { search }
 * ```
 */
export function activeToolSet(tools: AgentToolSet | undefined, activeTools: readonly string[] | undefined): AgentToolSet | undefined {
  if (tools === undefined || activeTools === undefined) return tools;
  const active: AgentToolSet = {};
  for (const name of activeTools) {
    if (Object.hasOwn(tools, name)) Object.defineProperty(active, name, { value: tools[name], enumerable: true, writable: true, configurable: true });
  }
  return active;
}
