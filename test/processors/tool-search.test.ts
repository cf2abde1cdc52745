import { describe, expect, it } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { z } from 'zod';
import { processInputStep, type StepInput } from '../../src/operators/process-input-step.js';
import { createRunContext } from '../../src/operators/run-context.js';
import type { AgentTool, AgentToolSet } from '../../src/contract/tool-types.js';
import { Bm25Index, tokenize } from '../../src/processors/internal/bm25.js';
import { ToolSearchProcessor } from '../../src/processors/tool-search.js';
import { mockModel } from '../../src/testing/mock-model.js';

const model = mockModel();
const noop = () => 'ok';

function catalogue(): AgentToolSet {
  const tools: AgentToolSet = {
    getWeatherForecast: { description: 'Weather forecast (temperature, rain) for a city', inputSchema: z.object({ city: z.string() }), execute: noop },
    send_email: { description: 'Send an email message to a recipient', inputSchema: z.object({ to: z.string(), subject: z.string() }), execute: noop },
    createCalendarEvent: { description: 'Create an event in the calendar', inputSchema: { type: 'object', properties: { title: { type: 'string' } } }, execute: noop },
    convert_currency: { description: 'Convert an amount between currencies using exchange rates', execute: noop },
  };
  for (let index = 0; index < 120; index++) tools[`filler_${index}`] = { description: `Internal maintenance task number ${index}`, execute: noop };
  return tools;
}

async function step(processor: ToolSearchProcessor, ctx = createRunContext(), input: Partial<StepInput> = {}): Promise<StepInput> {
  return lastValueFrom(of<StepInput>({ stepNumber: 0, model, ...input }).pipe(processInputStep([processor], ctx)));
}

function run(tool: AgentTool | undefined, input: unknown): unknown {
  return (tool?.execute as ((input: unknown) => unknown) | undefined)?.(input);
}

describe('BM25', () => {
  it('splits identifiers and drops stop words', () => {
    expect(tokenize('getWeatherForecast for the send_email-tool')).toEqual(['get', 'weather', 'forecast', 'send', 'email']);
  });

  it('ranks rarer, more frequent matches higher and ignores documents without a match', () => {
    const index = new Bm25Index([
      { id: 'a', text: 'apple apple banana' },
      { id: 'b', text: 'banana cherry' },
      { id: 'c', text: 'cherry date' },
    ]);
    expect(index.search('apple banana', 5).map((hit) => hit.id)).toEqual(['a', 'b']);
    expect(index.search('zebra', 5)).toEqual([]);
  });
});

describe('ToolSearchProcessor', () => {
  it('has the reference id', () => {
    expect(new ToolSearchProcessor({ tools: {} }).id).toBe('tool-search');
  });

  it('exposes only the meta-tools (plus the step tools), not the catalogue', async () => {
    const result = await step(new ToolSearchProcessor({ tools: catalogue() }), createRunContext(), { tools: { own: { execute: noop } } });
    expect(Object.keys(result.tools ?? {}).sort()).toEqual(['load_tool', 'own', 'search_tools']);
  });

  it('search_tools ranks the catalogue with BM25', async () => {
    const result = await step(new ToolSearchProcessor({ tools: catalogue() }));
    const found = run(result.tools?.search_tools, { query: 'what is the weather forecast in Paris' }) as { results: Array<{ name: string }> };
    expect(found.results[0]?.name).toBe('getWeatherForecast');
    const mail = run(result.tools?.search_tools, { query: 'email somebody', limit: 1 }) as { results: Array<{ name: string }> };
    expect(mail.results.map((hit) => hit.name)).toEqual(['send_email']);
    const byParameter = run(result.tools?.search_tools, { query: 'title' }) as { results: Array<{ name: string }> };
    expect(byParameter.results[0]?.name).toBe('createCalendarEvent');
  });

  it('load_tool adds the tool from the next step on, per run', async () => {
    const processor = new ToolSearchProcessor({ tools: catalogue() });
    const ctx = createRunContext();
    const first = await step(processor, ctx);
    expect(run(first.tools?.load_tool, { name: 'convert_currency' })).toEqual(expect.objectContaining({ loaded: true }));
    const second = await step(processor, ctx, { stepNumber: 1 });
    expect(Object.keys(second.tools ?? {}).sort()).toEqual(['convert_currency', 'load_tool', 'search_tools']);
    const otherRun = await step(processor, createRunContext());
    expect(Object.keys(otherRun.tools ?? {})).not.toContain('convert_currency');
  });

  it('load_tool reports an unknown name with suggestions', async () => {
    const result = await step(new ToolSearchProcessor({ tools: catalogue() }));
    expect(run(result.tools?.load_tool, { name: 'send_mail' })).toEqual({
      loaded: false,
      error: 'No tool named "send_mail".',
      suggestions: expect.arrayContaining(['send_email']),
    });
  });

  it('adds its tools to an activeTools list when the step has one', async () => {
    const processor = new ToolSearchProcessor({ tools: catalogue() });
    const ctx = createRunContext();
    const first = await step(processor, ctx, { activeTools: ['own'] });
    expect(first.activeTools).toEqual(['own', 'search_tools', 'load_tool']);
    run(first.tools?.load_tool, { name: 'send_email' });
    const second = await step(processor, ctx, { activeTools: ['own'] });
    expect(second.activeTools).toEqual(['own', 'search_tools', 'load_tool', 'send_email']);
  });
});
