/**
 * A run with nothing asynchronous in it (a mock model given its parts, synchronous tools and
 * hooks) runs inside `subscribe`: a consumer that leaves early must stop it there, before it
 * starts a tool or another model call nobody listens to.
 */
import { describe, expect, it } from 'vitest';
import { from, take, takeWhile, tap } from 'rxjs';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import { closeBrackets } from '../../src/loop/run/close-brackets.js';
import { endWithTerminal } from '../../src/loop/run/end-with-terminal.js';
import { makeChunk } from '../../src/contract/make-chunk.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

function toolAgent(ran: number[]) {
  const model = mockModel({
    parts: ({ callIndex }) =>
      callIndex === 0 ? [...toolCallParts('add', { a: 1, b: 2 }, { streamInput: false }), finishPart('tool-calls')] : [...textParts('3'), finishPart()],
  });
  const agent = new Agent({
    id: 'a',
    model,
    tools: { add: { inputSchema: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }: { a: number; b: number }) => (ran.push(a + b), a + b) } },
  });
  return { model, agent };
}

describe('a synchronous run and a consumer that leaves during subscribe', () => {
  it('the whole run is synchronous: every chunk arrives inside subscribe', () => {
    const ran: number[] = [];
    const { agent } = toolAgent(ran);
    const types: string[] = [];
    agent.stream$('1 + 2?').subscribe((chunk) => types.push(chunk.type));
    expect(types).toContain('tool-result');
    expect(types.at(-1)).toBe('finish');
    expect(ran).toEqual([3]);
  });

  it('leaving at the tool-call chunk: the tool never runs', () => {
    const ran: number[] = [];
    const { agent, model } = toolAgent(ran);
    const types: string[] = [];
    agent.stream$('1 + 2?').pipe(take(3)).subscribe((chunk) => types.push(chunk.type));
    expect(types).toEqual(['start', 'step-start', 'tool-call']);
    expect(ran).toEqual([]);
    expect(model.calls).toHaveLength(1);
  });

  it('leaving at the first step-finish: the second model call is never made', () => {
    const ran: number[] = [];
    const { agent, model } = toolAgent(ran);
    const types: string[] = [];
    agent
      .stream$('1 + 2?')
      .pipe(takeWhile((chunk: ChunkType) => chunk.type !== 'step-finish', true))
      .subscribe((chunk) => types.push(chunk.type));
    expect(types).toEqual(['start', 'step-start', 'tool-call', 'tool-result', 'step-finish']);
    expect(ran).toEqual([3]);
    expect(model.calls).toHaveLength(1);
  });
});

describe('closeBrackets() and endWithTerminal() with a synchronous source', () => {
  const chunks = (): ChunkType[] => [
    makeChunk('r', 'start', {}),
    makeChunk('r', 'text-start', { id: 't' }),
    makeChunk('r', 'text-delta', { id: 't', text: 'a' }),
    makeChunk('r', 'text-delta', { id: 't', text: 'b' }),
    makeChunk('r', 'text-end', { id: 't' }),
  ];
  const operators = { closeBrackets: closeBrackets(), endWithTerminal: endWithTerminal({ runId: 'r' }) };
  for (const [name, operator] of Object.entries(operators)) {
    it(`${name}: the source stops at the chunk the consumer left on`, () => {
      const pulled: string[] = [];
      const source$ = from(chunks()).pipe(tap((chunk) => pulled.push(chunk.type)));
      source$.pipe(operator, take(2)).subscribe();
      expect(pulled).toEqual(['start', 'text-start']);
    });
  }
});
