/**
 * Issue 13 §3: the runtime never writes into a caller's RequestContext. Two users sharing one
 * `defaultOptions.requestContext` never read each other's `resourceId` (or anything a run set)
 * inside tools and processors; the caller's own values stay readable in every run.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { RequestContext } from '../../src/contract/request-context.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { Memory } from '../../src/memory/memory.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function toolAgent(shared: RequestContext, seen: Array<{ resource: string | undefined; thread: string | undefined; tenant: unknown; note: unknown }>) {
  const model = mockModel({
    // A tool call first; once the prompt carries the tool result, the answer.
    parts: ({ options }) =>
      options.prompt.at(-1)?.role === 'tool' ? [...textParts('ok'), finishPart('stop')] : [...toolCallParts('whoami', {}), finishPart('tool-calls')],
  });
  const marker: Processor = {
    id: 'marker',
    // A hook writes into the run's context: the value stays in that run.
    processInput: ({ requestContext, runId }) => {
      requestContext.set('note', `set by ${runId}`);
    },
  };
  return new Agent({
    id: 'shared-context',
    model,
    memory: new Memory({ storage: new InMemoryStorage() }),
    inputProcessors: [marker],
    defaultOptions: { requestContext: shared },
    tools: {
      whoami: {
        inputSchema: z.object({}),
        execute: async (_input: Record<string, never>, { requestContext }: { requestContext: RequestContext }) => {
          const resourceBefore = requestContext.resourceId;
          await tick(resourceBefore === 'alice' ? 30 : 1); // interleave the two runs
          seen.push({ resource: requestContext.resourceId, thread: requestContext.threadId, tenant: requestContext.get('tenant'), note: requestContext.get('note') });
          return requestContext.resourceId ?? 'nobody';
        },
      },
    },
  });
}

describe('RequestContext isolation between runs', () => {
  it('two users sharing defaultOptions.requestContext each see their own resourceId in tools', async () => {
    const shared = new RequestContext([['tenant', 'acme']]);
    const seen: Array<{ resource: string | undefined; thread: string | undefined; tenant: unknown; note: unknown }> = [];
    const agent = toolAgent(shared, seen);
    const [alice, bob] = await Promise.all([
      agent.generate('who am I?', { memory: { thread: 'thread-alice', resource: 'alice' }, runId: 'run-alice' }),
      agent.generate('who am I?', { memory: { thread: 'thread-bob', resource: 'bob' }, runId: 'run-bob' }),
    ]);
    expect(alice.toolResults.map((result) => result.result)).toEqual(['alice']);
    expect(bob.toolResults.map((result) => result.result)).toEqual(['bob']);
    expect(seen).toHaveLength(2);
    expect(seen).toContainEqual({ resource: 'alice', thread: 'thread-alice', tenant: 'acme', note: 'set by run-alice' });
    expect(seen).toContainEqual({ resource: 'bob', thread: 'thread-bob', tenant: 'acme', note: 'set by run-bob' });
    // Nothing a run set reached the caller's context.
    expect(shared.all).toEqual({ tenant: 'acme' });
  });

  it('a run without memory does not see the ids an earlier run with memory used', async () => {
    const shared = new RequestContext();
    const seen: Array<{ resource: string | undefined; thread: string | undefined; tenant: unknown; note: unknown }> = [];
    const agent = toolAgent(shared, seen);
    await agent.generate('first', { memory: { thread: 't1', resource: 'alice' } });
    await agent.generate('second');
    expect(seen[1]).toMatchObject({ resource: undefined, thread: undefined });
    expect(shared.size()).toBe(0);
  });

  it('a per-call requestContext is not written either, and its values are read', async () => {
    const callContext = new RequestContext([['tenant', 'globex']]);
    const seen: Array<{ resource: string | undefined; thread: string | undefined; tenant: unknown; note: unknown }> = [];
    const agent = toolAgent(new RequestContext(), seen);
    await agent.generate('hi', { requestContext: callContext, memory: { thread: 't', resource: 'carol' } });
    expect(seen[0]).toMatchObject({ resource: 'carol', tenant: 'globex' });
    expect(callContext.all).toEqual({ tenant: 'globex' });
  });
});
