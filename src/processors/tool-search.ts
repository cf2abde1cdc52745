import { z } from 'zod';
import {
  InvalidProcessorOptionError,
  type AgentTool,
  type AgentToolSet,
  type ProcessInputStepArgs,
  type ProcessInputStepResult,
  type Processor,
  type ProcessorState,
  toolDescription,
} from '../contract/index.js';
import { Bm25Index } from './internal/bm25.js';
import { wholeNumberOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames, readingOption } from './internal/option-keys.js';

/**
 * Options of {@link ToolSearchProcessor}.
 *
 * @example
 * ```ts
 * const options: ToolSearchOptions = { tools: allTools, maxResults: 8 };
 * ```
 */
export interface ToolSearchOptions {
  /** The catalogue the model can search and load from (name → tool). */
  tools: AgentToolSet;
  /** Most results `search_tools` returns. Default 5. */
  maxResults?: number;
  /** @deprecated The reference's option: accepted without effect (warned once); loaded tools join the step's tools from the next step on. */
  includeResolvedTools?: boolean;
  /** @deprecated The reference's option: accepted without effect (warned once); the model finds tools through `search_tools`. */
  injectCatalog?: boolean;
  /** @deprecated The reference's option: accepted without effect (warned once); use `maxResults` (its `topK`). */
  search?: {
    /** The reference's result count (here `maxResults`). */
    topK?: number;
    /** The reference's score floor (no equivalent here). */
    minScore?: number;
    /** The reference's automatic loading (no equivalent here: the model calls `load_tool`). */
    autoLoad?: boolean;
  };
  /** @deprecated The reference's option: accepted without effect (warned once); loaded tools are kept in the run's state. */
  storage?: 'in-memory' | 'context';
  /** @deprecated The reference's option: accepted without effect (warned once); loaded tools last for the run. */
  ttl?: number;
  /** @deprecated The reference's option: accepted without effect (warned once); every tool in `tools` can be found and loaded, so pass only the tools the model may load. */
  filter?: (args: never) => unknown;
}

/** The option names {@link ToolSearchProcessor} knows (the reference's among them). */
const TOOL_SEARCH_OPTION_KEYS = optionKeys(
  'tool-search',
  optionNames<ToolSearchOptions>({ tools: true, maxResults: true, includeResolvedTools: true, injectCatalog: true, search: true, storage: true, ttl: true, filter: true }),
  {
    includeResolvedTools: "loaded tools join the step's tools from the next step on",
    injectCatalog: 'the model finds tools through search_tools',
    search: 'use maxResults (its topK); there is no minScore or autoLoad',
    storage: "loaded tools are kept in the run's state",
    ttl: 'loaded tools last for the run',
    filter: 'every tool in tools can be found and loaded: pass only the tools the model may load',
  },
);

/**
 * One `search_tools` result.
 *
 * @example
 * ```ts
 * const [best]: ToolSearchResult[] = new ToolSearchProcessor({ tools }).search('send an email');
 * ```
 */
export interface ToolSearchResult {
  /** A human-readable name. */
  name: string;
  /** What the processor does. */
  description: string;
  /** The relevance score. */
  score: number;
}

/**
 * The meta-tool names the processor adds.
 *
 * @example
 * ```ts
 * const metaTools = [TOOL_SEARCH_TOOL_NAMES.search, TOOL_SEARCH_TOOL_NAMES.load]; // ['search_tools', 'load_tool']
 * ```
 */
export const TOOL_SEARCH_TOOL_NAMES = {
  /** The best matches for `query`. */
  search: 'search_tools',
  /** Loads the named tool for the rest of the run. */
  load: 'load_tool',
} as const;

const searchInput = z.object({
  query: z.string().describe('What the tool should do, in a few words'),
  limit: z.number().int().positive().max(50).optional().describe('How many results (default 5)'),
});
const loadInput = z.object({ name: z.string().describe('The exact tool name from search_tools') });

function describeSchema(schema: unknown): string {
  if (schema === null || typeof schema !== 'object') return '';
  let json: unknown = (schema as { jsonSchema?: unknown }).jsonSchema ?? schema;
  if (typeof (schema as { _zod?: unknown })._zod === 'object') {
    try {
      json = z.toJSONSchema(schema as z.ZodType);
    } catch {
      return '';
    }
  }
  const properties = (json as { properties?: Record<string, { description?: unknown }> }).properties;
  if (properties === undefined || typeof properties !== 'object') return '';
  return Object.entries(properties)
    .map(([name, property]) => `${name} ${typeof property?.description === 'string' ? property.description : ''}`)
    .join(' ');
}

/** `tools[name]` when the catalogue has a tool of that very name: never an `Object.prototype` member (`constructor`, `__proto__`…). */
function ownTool(tools: AgentToolSet, name: unknown): AgentTool | undefined {
  return typeof name === 'string' && Object.hasOwn(tools, name) ? tools[name] : undefined;
}

function loadedOf(state: ProcessorState): string[] {
  const loaded = state.loaded;
  if (Array.isArray(loaded)) return loaded as string[];
  const fresh: string[] = [];
  state.loaded = fresh;
  return fresh;
}

/**
 * Lets the model work with a large tool catalogue without sending every tool definition on every
 * call: the model gets two meta-tools, `search_tools` (BM25 ranking over the tools' names,
 * descriptions and parameter names) and `load_tool`, and each tool it loads is added to the
 * step's tools from the next step on. No model call.
 *
 * Loaded tools are kept per run in the processor's `state` (a new run starts with none loaded).
 * When the step has an `activeTools` list, the meta-tools and loaded tools are added to it.
 *
 * Hook: `processInputStep` (register it as an input processor).
 *
 * @example
 * ```ts
 * import { ToolSearchProcessor } from 'rxagent/processors';
 * const agent = new Agent({ id: 'a', instructions: '…', model, inputProcessors: [new ToolSearchProcessor({ tools: allHundredTools })] });
 * ```
 */
export class ToolSearchProcessor implements Processor<'tool-search'> {
  /** The processor's id. */
  readonly id = 'tool-search';
  /** A human-readable name. */
  readonly name = 'Tool Search';
  /** What the processor does. */
  readonly description = 'Lets the model search a tool catalogue and load tools on demand.';
  private readonly catalogue: AgentToolSet;
  private readonly maxResults: number;
  private readonly index: Bm25Index;

  constructor(options: ToolSearchOptions) {
    checkOptionKeys(TOOL_SEARCH_OPTION_KEYS, options);
    const tools: unknown = options.tools;
    if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) throw new InvalidProcessorOptionError('tool-search', 'tools', tools, 'an object of tools by name');
    for (const name of Object.keys(tools)) {
      // a tool given as a getter that throws names it (Object.entries would throw a plain error)
      const tool: unknown = readingOption('tool-search', `tools.${name}`, () => (tools as Record<string, unknown>)[name]);
      if (typeof tool !== 'object' || tool === null) throw new InvalidProcessorOptionError('tool-search', `tools.${name}`, tool, 'a tool');
      if (name === TOOL_SEARCH_TOOL_NAMES.search || name === TOOL_SEARCH_TOOL_NAMES.load) {
        throw new InvalidProcessorOptionError('tool-search', `tools.${name}`, name, `a tool named otherwise (${name} is the processor's own tool)`);
      }
    }
    this.catalogue = options.tools;
    this.maxResults = wholeNumberOption('tool-search', 'maxResults', options.maxResults, 5, 1);
    this.index = new Bm25Index(
      Object.entries(options.tools).map(([name, tool]) => ({
        id: name,
        // the tool is the caller's object: a getter or trap that throws here names the tool
        text: readingOption('tool-search', `tools.${name}`, () => `${name} ${name} ${toolDescription(tool)} ${describeSchema(tool.inputSchema)}`),
      })),
    );
  }

  /** Ranks the catalogue against `query` (BM25), best first. */
  search(query: string, limit: number = this.maxResults): ToolSearchResult[] {
    return this.index.search(query, limit).map((hit) => ({
      name: hit.id,
      description: toolDescription(ownTool(this.catalogue, hit.id)),
      score: Math.round(hit.score * 1000) / 1000,
    }));
  }

  /** The `processInputStep` hook (see `Processor.processInputStep` for when it runs and what it may return). */
  processInputStep({ tools, activeTools, state }: ProcessInputStepArgs): ProcessInputStepResult {
    const loaded = loadedOf(state);
    const loadedTools: AgentToolSet = {};
    for (const name of loaded) {
      const tool = ownTool(this.catalogue, name);
      // defined, not assigned: a tool named `__proto__` is a key, never the object's prototype
      if (tool !== undefined) Object.defineProperty(loadedTools, name, { value: tool, enumerable: true, writable: true, configurable: true });
    }
    const added = { ...this.metaTools(state), ...loadedTools };
    const result: ProcessInputStepResult = { tools: { ...tools, ...added } };
    if (activeTools !== undefined) result.activeTools = [...new Set([...activeTools, ...Object.keys(added)])];
    return result;
  }

  private metaTools(state: ProcessorState): AgentToolSet {
    const searchTool: AgentTool = {
      description:
        'Search the catalogue of available tools by what they do. Returns tool names with descriptions; ' +
        'call load_tool with a name to be able to use that tool from the next step on.',
      inputSchema: searchInput,
      execute: (input: z.infer<typeof searchInput>) => {
        const results = this.search(input.query, Math.min(input.limit ?? this.maxResults, 50));
        return { results, ...(results.length === 0 ? { hint: 'No tool matched; try other words.' } : {}) };
      },
    };
    const loadTool: AgentTool = {
      description: 'Load a tool found with search_tools by its exact name. It can be called from the next step on.',
      inputSchema: loadInput,
      execute: (input: z.infer<typeof loadInput>) => {
        const tool = ownTool(this.catalogue, input.name);
        if (tool === undefined) {
          return { loaded: false, error: `No tool named "${input.name}".`, suggestions: this.search(input.name, 3).map((hit) => hit.name) };
        }
        const loaded = loadedOf(state);
        if (!loaded.includes(input.name)) loaded.push(input.name);
        return { loaded: true, name: input.name, description: toolDescription(tool) };
      },
    };
    return { [TOOL_SEARCH_TOOL_NAMES.search]: searchTool, [TOOL_SEARCH_TOOL_NAMES.load]: loadTool };
  }
}
