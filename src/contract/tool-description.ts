/** A tool's description as the model reads it. */
import type { AgentTool } from './tool-types.js';

/**
 * The text of a tool's description: AI SDK 7 lets it be a function of the tool context, which
 * rxagent calls with an empty context (it has none). `''` when the tool has none.
 *
 * @example
 * ```ts
 * toolDescription({ description: () => 'Weather for a city' }); // 'Weather for a city'
 * ```
 */
export function toolDescription(tool: Pick<AgentTool, 'description'> | undefined): string {
  const description = tool?.description;
  if (description === undefined) return '';
  return typeof description === 'function' ? (description as (options: { context: Record<string, unknown> }) => string)({ context: {} }) : description;
}
