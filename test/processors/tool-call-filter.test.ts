import { describe, expect, it } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { processLLMRequest } from '../../src/operators/process-llm-request.js';
import { ToolCallFilter } from '../../src/processors/tool-call-filter.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { contextWith, dbMessage, listWith, textMessage } from './support/harness.js';

const model = mockModel();
const output = { type: 'json' as const, value: { ok: true } };

function conversation(): LanguageModelV4Prompt {
  return [
    { role: 'system', content: 'be helpful' },
    { role: 'user', content: [{ type: 'text', text: 'weather and news?' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', toolCallId: 'w1', toolName: 'weather', input: { city: 'Paris' } },
        { type: 'tool-call', toolCallId: 's1', toolName: 'search', input: { q: 'news' } },
      ],
    },
    {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'w1', toolName: 'weather', output },
        { type: 'tool-result', toolCallId: 's1', toolName: 'search', output },
      ],
    },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 's2', toolName: 'search', input: { q: 'more' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 's2', toolName: 'search', output }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Sunny; nothing new.' }] },
    { role: 'user', content: [{ type: 'text', text: 'and tomorrow?' }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'w2', toolName: 'weather', input: { city: 'Paris', day: 1 } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'w2', toolName: 'weather', output }] },
  ];
}

async function filtered(filter: ToolCallFilter, prompt: LanguageModelV4Prompt): Promise<LanguageModelV4Prompt> {
  const list = listWith([textMessage('u1', 'user', 'and tomorrow?')]);
  const request = await lastValueFrom(of({ prompt, model, stepNumber: 0 }).pipe(processLLMRequest([filter], contextWith(list))));
  return request.prompt;
}

const toolParts = (prompt: LanguageModelV4Prompt): string[] =>
  prompt.flatMap((message) =>
    message.role === 'assistant' || message.role === 'tool'
      ? message.content.flatMap((part) => (part.type === 'tool-call' || part.type === 'tool-result' ? [`${part.type}:${part.toolCallId}`] : []))
      : [],
  );

describe('ToolCallFilter', () => {
  it('has the reference id and implements processLLMRequest only', () => {
    const filter = new ToolCallFilter();
    expect(filter.id).toBe('tool-call-filter');
    expect(Object.keys(Object.getOwnPropertyDescriptors(ToolCallFilter.prototype)).filter((key) => key.startsWith('process'))).toEqual([
      'processLLMRequest',
    ]);
  });

  it('drops every tool call and result before the current turn by default, and messages left empty', async () => {
    const prompt = await filtered(new ToolCallFilter(), conversation());
    expect(toolParts(prompt)).toEqual(['tool-call:w2', 'tool-result:w2']);
    expect(prompt.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'assistant', 'user', 'assistant', 'tool']);
    expect(prompt[2]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] });
  });

  it('exclude drops only the named tools', async () => {
    const prompt = await filtered(new ToolCallFilter({ exclude: ['search'] }), conversation());
    expect(toolParts(prompt)).toEqual(['tool-call:w1', 'tool-result:w1', 'tool-call:w2', 'tool-result:w2']);
  });

  it('preserveCurrentTurn: false filters the turn in progress too', async () => {
    const prompt = await filtered(new ToolCallFilter({ preserveCurrentTurn: false }), conversation());
    expect(toolParts(prompt)).toEqual([]);
    expect(prompt.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'and tomorrow?' }] });
  });

  it('returns nothing (no rewrite) when no tool part is excluded', () => {
    const prompt = conversation();
    expect(new ToolCallFilter({ exclude: ['calendar'] }).filterPrompt(prompt)).toBe(prompt);
  });

  it('leaves the stored history untouched', async () => {
    const stored = dbMessage('a0', 'assistant', [
      { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'w1', toolName: 'weather', args: {}, result: 'sunny' } },
    ]);
    const list = listWith([textMessage('u1', 'user', 'hi')], { memory: [stored] });
    const before = JSON.stringify(list.get.all.db());
    await lastValueFrom(of({ prompt: conversation(), model, stepNumber: 0 }).pipe(processLLMRequest([new ToolCallFilter()], contextWith(list))));
    expect(JSON.stringify(list.get.all.db())).toBe(before);
  });
});

describe('ToolCallFilter: the reference options', () => {
  const ids = (prompt: LanguageModelV4Prompt) =>
    prompt.flatMap((message) =>
      message.role === 'assistant' || message.role === 'tool'
        ? message.content.flatMap((part) => (part.type === 'tool-call' || part.type === 'tool-result' ? [`${part.type}:${part.toolCallId}`] : []))
        : [],
    );

  it('filterAfterToolSteps: n keeps the last n tool-producing steps (history and current turn alike), 0 keeps none', () => {
    const one = new ToolCallFilter({ filterAfterToolSteps: 1 }).filterPrompt(conversation());
    expect(ids(one)).toEqual(['tool-call:w2', 'tool-result:w2']);
    const two = new ToolCallFilter({ filterAfterToolSteps: 2 }).filterPrompt(conversation());
    expect(ids(two)).toEqual(['tool-call:s2', 'tool-result:s2', 'tool-call:w2', 'tool-result:w2']);
    expect(ids(new ToolCallFilter({ filterAfterToolSteps: 0 }).filterPrompt(conversation()))).toEqual([]);
  });

  it('exclude: [] filters nothing', () => {
    const prompt = conversation();
    expect(new ToolCallFilter({ exclude: [] }).filterPrompt(prompt)).toBe(prompt);
  });

  it('a call and its result go together, by id: no orphaned result or dangling call is sent', () => {
    const prompt: LanguageModelV4Prompt = [
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'x1', toolName: 'search', input: {} }] },
      // a result recorded under another name (renamed tool) still belongs to call x1
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'x1', toolName: 'search_v2', output }] },
      { role: 'user', content: [{ type: 'text', text: 'next' }] },
    ];
    expect(ids(new ToolCallFilter({ exclude: ['search'] }).filterPrompt(prompt))).toEqual([]);
  });

  it('preserveModelOutput: the removed result is left as "<tool> result:" text where the call was', () => {
    const prompt: LanguageModelV4Prompt = [
      { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool-call', toolCallId: 'w1', toolName: 'weather', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'w1', toolName: 'weather', output: { type: 'json', value: { tempC: 21 } } }] },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ];
    const result = new ToolCallFilter({ preserveModelOutput: true }).filterPrompt(prompt);
    expect(ids(result)).toEqual([]);
    expect(result[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'text', text: 'weather result:\n{"tempC":21}' }] });
    expect(result).toHaveLength(3);
  });

  it("with the run state, the calls this run made are kept even after a later user message; history's are filtered", () => {
    const filter = new ToolCallFilter();
    const state = {};
    const history: LanguageModelV4Prompt = [
      { role: 'user', content: [{ type: 'text', text: 'old' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'h1', toolName: 'search', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'h1', toolName: 'search', output }] },
      { role: 'user', content: [{ type: 'text', text: 'new' }] },
    ];
    expect(ids(filter.filterPrompt(history, state))).toEqual([]);
    const later: LanguageModelV4Prompt = [
      ...history,
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'r1', toolName: 'search', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'r1', toolName: 'search', output }] },
      { role: 'user', content: [{ type: 'text', text: 'a user turn added mid-run (e.g. retry feedback)' }] },
    ];
    expect(ids(filter.filterPrompt(later, state))).toEqual(['tool-call:r1', 'tool-result:r1']);
    expect(ids(filter.filterPrompt(later))).toEqual([]);
  });
});
