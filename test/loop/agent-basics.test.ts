import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';

describe('Agent basics', () => {
  it('streams a one-step text run with start, step brackets and finish', async () => {
    const model = mockModel({ parts: [...textParts('Hello world', { chunkSize: 3 }), finishPart('stop')] });
    const agent = new Agent({ id: 'a', instructions: 'Be brief.', model });
    const chunks = await lastValueFrom(agent.stream$('Hi').pipe(toArray()));
    const types = chunks.map((chunk) => chunk.type);
    expect(types[0]).toBe('start');
    expect(types.at(-1)).toBe('finish');
    expect(types.filter((type) => type === 'step-start')).toHaveLength(1);
    expect(types.filter((type) => type === 'step-finish')).toHaveLength(1);
    const text = chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join('');
    expect(text).toBe('Hello world');
    const prompt = model.calls[0]?.prompt;
    expect(prompt?.[0]).toEqual({ role: 'system', content: 'Be brief.' });
    const result = await agent.generate('Hi');
    expect(result.text).toBe('Hello world');
    expect(result.finishReason).toBe('stop');
  });

  it('stream$() gives chunks only: a run refused before it starts is start, error and nothing else', async () => {
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [finishPart('stop')] }) });
    const chunks = await lastValueFrom(agent.stream$('').pipe(toArray()));
    expect(chunks.map((chunk) => chunk.type)).toEqual(['start', 'error']);
    const ran = await lastValueFrom(agent.stream$('Hi').pipe(toArray()));
    expect(ran.every((chunk) => typeof chunk.type === 'string')).toBe(true);
  });

  it('runs a two-step tool loop with processors in the specification order', async () => {
    const log: string[] = [];
    const logger = (id: string): Processor => ({
      id,
      processInput: () => void log.push(`${id}:processInput`),
      processInputStep: ({ stepNumber }) => void log.push(`${id}:processInputStep:${stepNumber}`),
      processLLMRequest: ({ stepNumber }) => void log.push(`${id}:processLLMRequest:${stepNumber}`),
      processLLMResponse: ({ stepNumber }) => void log.push(`${id}:processLLMResponse:${stepNumber}`),
    });
    const output: Processor = {
      id: 'out',
      processOutputStream: ({ part }) => {
        if (part.type === 'tool-result' || part.type === 'finish') log.push(`out:processOutputStream:${part.type}`);
        return part;
      },
      processOutputStep: ({ stepNumber }) => void log.push(`out:processOutputStep:${stepNumber}`),
      processToolResult: ({ toolName }) => void log.push(`out:processToolResult:${toolName}`),
      processOutputResult: () => void log.push('out:processOutputResult'),
    };
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [...toolCallParts('weather', { city: 'Paris' }), finishPart('tool-calls')]
          : [...textParts('It is sunny.'), finishPart('stop')],
    });
    const agent = new Agent({
      id: 'a',
      model,
      tools: {
        weather: { inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => ({ city, sky: 'sunny' }) },
      },
      inputProcessors: [logger('in')],
      outputProcessors: [output],
    });
    const result = await agent.generate('Weather in Paris?');
    expect(result.text).toBe('It is sunny.');
    expect(result.toolResults).toEqual([{ toolCallId: 'call-weather', toolName: 'weather', args: { city: 'Paris' }, result: { city: 'Paris', sky: 'sunny' } }]);
    expect(log).toEqual([
      'in:processInput',
      'in:processInputStep:0',
      'in:processLLMRequest:0',
      'in:processLLMResponse:0',
      'out:processOutputStep:0',
      'out:processToolResult:weather',
      'out:processOutputStream:tool-result',
      'in:processInputStep:1',
      'in:processLLMRequest:1',
      // the last step's output ends with `finish` (as in the reference), before its message is built
      'out:processOutputStream:finish',
      'in:processLLMResponse:1',
      'out:processOutputStep:1',
      'out:processOutputResult',
    ]);
    const secondPrompt = model.calls[1]?.prompt ?? [];
    expect(JSON.stringify(secondPrompt)).toContain('sunny');
  });

  it('ends with one tripwire chunk when an output processor aborts', async () => {
    const model = mockModel({ parts: [...textParts('this is secret stuff', { chunkSize: 5 }), finishPart('stop')] });
    const guard: Processor = {
      id: 'guard',
      processOutputStream: ({ part, abort }) => {
        if (part.type === 'text-delta' && part.payload.text.includes('cret')) abort('no secrets');
        return part;
      },
    };
    const agent = new Agent({ id: 'a', model, outputProcessors: [guard] });
    const chunks = await lastValueFrom(agent.stream$('x').pipe(toArray()));
    const last = chunks.at(-1);
    expect(last?.type).toBe('tripwire');
    expect(last?.type === 'tripwire' && last.payload).toEqual({ reason: 'no secrets', retry: false, processorId: 'guard' });
    expect(chunks.map((chunk) => chunk.type)).not.toContain('finish');
    const result = await agent.generate('x');
    expect(result.tripwire?.processorId).toBe('guard');
    expect(result.finishReason).toBe('other');
    expect(result.text).toBe('');
  });
});

describe('order of hooks, one-step text run', () => {
  it('is the exact specification order', async () => {
    const log: string[] = [];
    const both: Processor = {
      id: 'p',
      processInput: () => void log.push('processInput'),
      processInputStep: () => void log.push('processInputStep'),
      processLLMRequest: () => void log.push('processLLMRequest'),
      processLLMResponse: () => void log.push('processLLMResponse'),
    };
    const output: Processor = {
      id: 'o',
      processOutputStream: ({ part }) => (log.push(`processOutputStream:${part.type}`), part),
      processOutputStep: () => void log.push('processOutputStep'),
      processToolResult: () => void log.push('processToolResult'),
      processOutputResult: () => void log.push('processOutputResult'),
    };
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('Hi'), finishPart()] }), inputProcessors: [both], outputProcessors: [output] });
    await agent.generate('x');
    expect(log).toEqual([
      'processInput',
      'processInputStep',
      'processLLMRequest',
      'processOutputStream:step-start',
      'processOutputStream:text-start',
      'processOutputStream:text-delta',
      'processOutputStream:text-end',
      'processOutputStream:finish',
      'processLLMResponse',
      'processOutputStep',
      'processOutputStream:step-finish',
      'processOutputResult',
    ]);
  });
});
