/** The tools of a step as the provider call wants them (`LanguageModelV4CallOptions.tools`, `toolChoice`). */
import type { LanguageModelV4FunctionTool, LanguageModelV4ProviderTool, LanguageModelV4ToolChoice } from '@ai-sdk/provider';
import type { JSONSchema7 } from '@ai-sdk/provider';
import type { AgentToolChoice, AgentToolSet } from '../../processor/tool-types.js';
import { toToolSchema } from './tool-schema.js';

/** The provider tool definitions for the active tools. */
export async function prepareTools(
  tools: AgentToolSet | undefined,
  activeTools: readonly string[] | undefined,
): Promise<Array<LanguageModelV4FunctionTool | LanguageModelV4ProviderTool> | undefined> {
  if (tools === undefined) return undefined;
  const names = Object.keys(tools).filter((name) => activeTools === undefined || activeTools.includes(name));
  if (names.length === 0) return undefined;
  return Promise.all(
    names.map(async (name): Promise<LanguageModelV4FunctionTool | LanguageModelV4ProviderTool> => {
      const tool = tools[name];
      if (tool?.type === 'provider' || tool?.type === 'provider-defined') {
        return { type: 'provider', id: (tool.id ?? name) as `${string}.${string}`, name, args: tool.args ?? {} };
      }
      const inputSchema = (await toToolSchema(tool?.inputSchema).jsonSchema) as JSONSchema7;
      return {
        type: 'function',
        name,
        inputSchema,
        ...(tool?.description === undefined ? {} : { description: tool.description }),
        ...(tool?.providerOptions === undefined ? {} : { providerOptions: tool.providerOptions as never }),
      };
    }),
  );
}

/** The provider tool choice. */
export function prepareToolChoice(toolChoice: AgentToolChoice | undefined): LanguageModelV4ToolChoice | undefined {
  if (toolChoice === undefined) return undefined;
  if (typeof toolChoice === 'string') return { type: toolChoice };
  return { type: 'tool', toolName: toolChoice.toolName };
}
