/** The demo's memory: an embedded libSQL file under the OS temp dir (when rxagent/memory exists). */
export async function demoMemory(): Promise<
  { memory: import('../../src/loop/agent-types.js').AgentMemory; label: string; count(thread: string): Promise<number>; close(): Promise<void> } | undefined
> {
  return undefined;
}
