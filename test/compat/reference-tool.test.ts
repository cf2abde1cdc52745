/**
 * A tool made with the reference's `createTool` (`@mastra/core/tools`, pinned in bench/peer) is an
 * `AgentTool` as it is: it type-checks (strict, against the reference's own declarations) and runs
 * inside an rxagent Agent, reading what rxagent passes (`requestContext`, `abortSignal`, a no-op
 * `observe`). Like the compatibility suite, this fails (does not skip) when bench/peer is missing.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, RequestContext, type AgentTool, type AgentToolSet } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const toolsEntry = join(root, 'bench/peer/node_modules/@mastra/core/dist/tools/index.js');

function requireReference(): void {
  if (!existsSync(toolsEntry)) {
    throw new Error('the reference @mastra/core is not installed in bench/peer (npm test installs it: scripts/ensure-peer.mjs)');
  }
}

interface CreateToolModule {
  createTool: (options: Record<string, unknown>) => AgentTool;
}

describe("the reference's createTool as an AgentTool", () => {
  it('type-checks: a createTool tool is assignable to AgentTool and AgentToolSet (strict, the reference’s own .d.ts)', () => {
    requireReference();
    const dir = join(root, '.rxagent/reference-tool');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'tool-types.ts');
    writeFileSync(
      file,
      `import { z } from 'zod';
import { createTool } from '../../bench/peer/node_modules/@mastra/core/dist/tools/index.js';
import type { AgentFunctionTool, AgentTool, AgentToolSet } from '../../src/index.js';
const weather = createTool({
  id: 'weather',
  description: 'Weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }, { requestContext, observe }) => observe.span('lookup', () => ({ city, unit: requestContext?.get('unit') })),
});
export const asTool: AgentTool = weather;
export const tools: AgentToolSet = { weather };
// an inline tool still gets rxagent's options as its typed second argument
export const inline: AgentToolSet = {
  echo: { description: 'Echo', execute: async (input: { text: string }, { toolCallId, abortSignal, writer }) => [input.text, toolCallId, abortSignal.aborted, typeof writer.custom] },
};
// and a function tool is still told apart from a reference tool by its id
// @ts-expect-error -- an AgentFunctionTool has no id
export const withId: AgentFunctionTool = { id: 'x', execute: () => 1 };
`,
    );
    const program = ts.createProgram([file], {
      strict: true,
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      skipLibCheck: true,
      noEmit: true,
    });
    const problems = ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(problems).toEqual([]);
  }, 120_000);

  it('runs in an Agent: execute gets the validated input, the run’s requestContext, an abortSignal and a working observe', async () => {
    requireReference();
    const { createTool } = (await import(pathToFileURL(toolsEntry).href)) as CreateToolModule;
    const seen: Record<string, unknown> = {};
    const weather = createTool({
      id: 'weather',
      description: 'Weather for a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async (input: { city: string }, context: { requestContext?: RequestContext; abortSignal?: AbortSignal; observe: { span<T>(name: string, fn: () => T): Promise<T>; log(level: string, message: string): void } }) => {
        seen['unit'] = context.requestContext?.get('unit');
        seen['aborted'] = context.abortSignal?.aborted;
        context.observe.log('info', 'looking up');
        return context.observe.span('lookup', () => ({ city: input.city, tempC: 21 }));
      },
    });
    const model = scriptedModel({
      rules: [
        { match: ({ toolResults }) => toolResults.length === 0, reply: { toolCalls: [{ toolName: 'weather', args: { city: 'Paris' } }] } },
        { match: () => true, reply: ({ toolResults }) => ({ text: JSON.stringify(toolResults[0]?.output) }) },
      ],
    });
    const tools: AgentToolSet = { weather };
    const agent = new Agent({ id: 'weather', instructions: 'Be brief.', model, tools });
    const result = await agent.generate('Weather in Paris?', { requestContext: new RequestContext({ unit: 'C' }) });
    expect(result.toolResults[0]?.result).toEqual({ city: 'Paris', tempC: 21 });
    expect(result.text).toBe('{"city":"Paris","tempC":21}');
    expect(seen).toEqual({ unit: 'C', aborted: false });
  });

  it('its input schema is validated before execute (a wrong input is a tool-error the model sees)', async () => {
    requireReference();
    const { createTool } = (await import(pathToFileURL(toolsEntry).href)) as CreateToolModule;
    let calls = 0;
    const weather = createTool({ id: 'weather', description: 'Weather', inputSchema: z.object({ city: z.string() }), execute: async () => ++calls });
    const model = scriptedModel({
      rules: [
        { match: ({ toolResults }) => toolResults.length === 0, reply: { toolCalls: [{ toolName: 'weather', args: { city: 42 } }] } },
        { match: () => true, reply: { text: 'done' } },
      ],
    });
    const chunks = await new Agent({ id: 'w', instructions: 'x', model, tools: { weather } }).generate('go');
    expect(calls).toBe(0);
    expect(chunks.steps[0]?.toolResults[0]?.isError).toBe(true);
  });
});
