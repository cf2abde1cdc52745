/**
 * What of a step changes the model's answer besides the prompt, model and settings: the tools the
 * model is offered, each written as the provider gets it (the loop's `prepareTools`: a function
 * tool's name, description, input schema and provider options — and the strictness and input
 * examples a caller's definition carries, as `processorsMiddleware` passes them —, a provider
 * tool's id, name and arguments), the active tool names, the tool choice, the provider options and
 * the structured-output schema, as `ResponseCache`'s `processInputStep` saw them. Only a request
 * handed to `processLLMRequest` without `callOptions` (what is sent besides the prompt) is keyed
 * with it: the loop and `processorsMiddleware` always pass them.
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
type ToolForm =
  | {
      type: 'function';
      name: string;
      description: string | undefined;
      inputSchema: unknown;
      providerOptions: unknown;
      strict: unknown;
      inputExamples: unknown;
    }
  | { type: 'provider'; id: string; name: string; args: unknown };

/** What a caller's tool definition may carry besides an agent tool's fields (a V4 function tool's). */
interface DefinitionExtras {
  strict?: unknown;
  inputExamples?: unknown;
}

/** The offered tools in the order the provider gets them, each as `prepareTools` writes it. */
function toolForms(tools: AgentToolSet | undefined, activeTools: readonly string[] | undefined): ToolForm[] {
  if (tools === undefined) return [];
  return Object.keys(tools)
    .filter((name) => activeTools === undefined || activeTools.includes(name))
    .map((name): ToolForm => {
      const tool = tools[name];
      if (tool?.type === 'provider' || tool?.type === 'provider-defined') return { type: 'provider', id: tool.id ?? name, name, args: tool.args ?? {} };
      const extras = (tool ?? {}) as DefinitionExtras;
      return {
        type: 'function',
        name,
        description: tool?.description === undefined ? undefined : toolDescription(tool),
        inputSchema: schemaForm(tool?.inputSchema),
        providerOptions: tool?.providerOptions,
        strict: extras.strict,
        inputExamples: extras.inputExamples,
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
  const schemas = [...offered.map((tool) => (tool.type === 'function' ? tool.inputSchema : undefined)), structured?.schema];
  const digest = (resolved: readonly unknown[]): string =>
    canonicalDigest({
      tools: offered.map((tool, index) => (tool.type === 'function' ? { ...tool, inputSchema: resolved[index] } : tool)),
      activeTools,
      toolChoice,
      providerOptions,
      structured: structured === undefined ? undefined : { ...structured, schema: resolved[offered.length] },
    });
  return schemas.some(isThenable) ? Promise.all(schemas).then(digest) : digest(schemas);
}
