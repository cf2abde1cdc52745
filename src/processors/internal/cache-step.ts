/**
 * What of a step changes the model's answer besides the prompt, model and settings: the tools the
 * model is offered (name, kind, description, input schema as the provider gets it, provider
 * options), the active tool names, the tool choice, the provider options and the structured-output
 * schema. `ResponseCache` digests it in `processInputStep` and keys the step's request with it.
 */
import { toToolSchema } from '../../model/index.js';
import { z } from 'zod';
import { toolDescription, type AgentToolSet, type ProcessInputStepArgs } from '../../contract/index.js';
import { canonicalDigest } from './cache-key.js';

/** A tool's schema as the provider gets it (the loop's own conversion, `toToolSchema`), a promise only when the library's is one. */
function schemaForm(schema: unknown): unknown {
  return toToolSchema(schema).jsonSchema;
}

/** The structured-output schema as a response format (zod 4 directly; others as tool schemas are). */
function responseSchemaForm(schema: unknown): unknown {
  if (typeof schema === 'object' && schema !== null && '_zod' in schema) return z.toJSONSchema(schema as z.ZodType);
  return schemaForm(schema);
}

/** One offered tool as the provider gets it (its schema possibly still a promise). */
interface ToolForm {
  name: string;
  kind: 'function' | 'provider';
  description?: string | undefined;
  schema?: unknown;
  id?: string | undefined;
  args?: unknown;
  providerOptions?: unknown;
}

function toolForms(tools: AgentToolSet | undefined, activeTools: readonly string[] | undefined): ToolForm[] {
  if (tools === undefined) return [];
  return Object.keys(tools)
    .filter((name) => activeTools === undefined || activeTools.includes(name))
    .map((name): ToolForm => {
      const tool = tools[name];
      if (tool?.type === 'provider' || tool?.type === 'provider-defined') return { name, kind: 'provider', id: tool.id, args: tool.args };
      return {
        name,
        kind: 'function',
        description: tool?.description === undefined ? undefined : toolDescription(tool),
        schema: schemaForm(tool?.inputSchema),
        providerOptions: tool?.providerOptions,
      };
    });
}

const isThenable = (value: unknown): value is PromiseLike<unknown> => typeof (value as { then?: unknown } | null)?.then === 'function';

/**
 * The digest of what `args` offers the model beyond the prompt; a promise only when a schema's
 * JSON form is one. Throws when a part cannot be keyed (the step is then not cached).
 */
export function stepDigest(args: Pick<ProcessInputStepArgs, 'tools' | 'activeTools' | 'toolChoice' | 'providerOptions' | 'structuredOutput'>): string | Promise<string> {
  const { tools, activeTools, toolChoice, providerOptions, structuredOutput } = args;
  const offered = toolForms(tools, activeTools);
  const structuredModel = structuredOutput?.model;
  const structured =
    structuredOutput === undefined
      ? undefined
      : {
          schema: responseSchemaForm(structuredOutput.schema),
          instructions: structuredOutput.instructions,
          model: typeof structuredModel === 'object' ? [structuredModel.provider, structuredModel.modelId] : structuredModel,
        };
  const schemas = [...offered.map((tool) => tool.schema), structured?.schema];
  const digest = (resolved: readonly unknown[]): string =>
    canonicalDigest({
      tools: offered.map((tool, index) => ({ ...tool, schema: resolved[index] })),
      activeTools,
      toolChoice,
      providerOptions,
      structured: structured === undefined ? undefined : { ...structured, schema: resolved[offered.length] },
    });
  return schemas.some(isThenable) ? Promise.all(schemas).then(digest) : digest(schemas);
}
