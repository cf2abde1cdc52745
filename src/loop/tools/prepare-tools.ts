/** The tools of a step as the provider call wants them (`LanguageModelV4CallOptions.tools`, `toolChoice`). */
import type { LanguageModelV4FunctionTool, LanguageModelV4ProviderTool, LanguageModelV4ToolChoice } from '@ai-sdk/provider';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { isPromiseLike, thenMaybe, type MaybePromise } from '../../contract/maybe-async.js';
import type { AgentToolChoice, AgentToolSet } from '../../contract/tool-types.js';
import { toolDescription } from '../../contract/tool-description.js';
import { toToolSchema } from '../../model/tool-schema.js';

type ProviderTool = LanguageModelV4FunctionTool | LanguageModelV4ProviderTool;

/**
 * The provider tool definitions for the active tools: synchronous unless a schema's JSON schema
 * is a promise (zod and plain JSON schemas are not), so a step with tools stays on virtual time.
 */
export function prepareTools(tools: AgentToolSet | undefined, activeTools: readonly string[] | undefined): MaybePromise<ProviderTool[] | undefined> {
  if (tools === undefined) return undefined;
  const names = Object.keys(tools).filter((name) => activeTools === undefined || activeTools.includes(name));
  if (names.length === 0) return undefined;
  const prepared = names.map((name): MaybePromise<ProviderTool> => {
    const tool = tools[name];
    if (tool?.type === 'provider' || tool?.type === 'provider-defined') {
      return { type: 'provider', id: (tool.id ?? name) as `${string}.${string}`, name, args: tool.args ?? {} };
    }
    const jsonSchema = toToolSchema(tool?.inputSchema).jsonSchema;
    return thenMaybe(isPromiseLike<JSONSchema7>(jsonSchema) ? Promise.resolve(jsonSchema) : jsonSchema, (inputSchema) => ({
      type: 'function',
      name,
      inputSchema,
      ...(tool?.description === undefined ? {} : { description: toolDescription(tool) }),
      ...(tool?.providerOptions === undefined ? {} : { providerOptions: tool.providerOptions as never }),
    }));
  });
  return prepared.some((definition) => isPromiseLike(definition)) ? Promise.all(prepared) : (prepared as ProviderTool[]);
}

/** The provider tool choice. */
export function prepareToolChoice(toolChoice: AgentToolChoice | undefined): LanguageModelV4ToolChoice | undefined {
  if (toolChoice === undefined) return undefined;
  if (typeof toolChoice === 'string') return { type: toolChoice };
  return { type: 'tool', toolName: toolChoice.toolName };
}
