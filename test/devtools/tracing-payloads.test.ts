/**
 * The tracing contract the inspector builds on: `onHook` events carry `input` / `output` / `error`
 * only when `includePayloads` is set, and model-backed processors report their model calls to
 * `onJudge` (with the prompt and answer only under `includePayloads`). Tracing never changes a run.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { Agent, TripWire, type AgentChunk, type ChunkType, type JudgeCallEvent, type Processor, type ProcessorHookEvent, type TracingContext } from 'rxagent';
import { ModerationProcessor } from 'rxagent/processors';
import { scriptedModel } from 'rxagent/testing';

const shout: Processor = {
  id: 'shout',
  processOutputStream: ({ part }) => (part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part),
};
const dropReasoning: Processor = {
  id: 'drop-reasoning',
  processOutputStream: ({ part }) => (part.type.startsWith('reasoning-') ? null : part),
};
const noBye: Processor = {
  id: 'no-bye',
  processOutputStream: ({ part, abort }) => {
    if (part.type === 'text-delta' && /bye/i.test(part.payload.text)) abort('no goodbyes', { metadata: { word: 'bye' } });
    return part;
  },
};

function judgeModel() {
  return scriptedModel({
    modelId: 'judge-1',
    rules: [{ match: /\bhate\b/i, reply: { text: '{"category_scores":[{"category":"harassment","score":0.9}],"reason":"hostile"}' } }],
    fallback: { text: '{"category_scores":[],"reason":"fine"}' },
  });
}

function agent(outputProcessors: Processor[], text = 'hello there', moderation = false): Agent {
  return new Agent({
    id: 'traced',
    model: scriptedModel({ rules: [], fallback: { text, reasoning: 'thinking' } }),
    outputProcessors,
    inputProcessors: moderation ? [new ModerationProcessor({ model: judgeModel(), lastMessageOnly: true })] : [],
  });
}

async function run(subject: Agent, tracingContext: TracingContext, input = 'hi'): Promise<ChunkType[]> {
  return lastValueFrom(subject.stream$(input, { tracingContext }).pipe(toArray()));
}

describe('tracingContext.includePayloads', () => {
  it('leaves events without payloads when unset', async () => {
    const events: ProcessorHookEvent[] = [];
    await run(agent([shout]), { onHook: (event) => events.push(event) });
    expect(events.length).toBeGreaterThan(3);
    for (const event of events) {
      expect(Object.keys(event).sort()).toEqual(['endTime', 'hook', 'outcome', 'processorId', 'startTime']);
    }
  });

  it('gives each processOutputStream event the chunk in and the chunk out', async () => {
    const events: ProcessorHookEvent[] = [];
    const chunks = await run(agent([dropReasoning, shout]), { includePayloads: true, onHook: (event) => events.push(event) });
    const drops = events.filter((event) => event.processorId === 'drop-reasoning' && event.outcome === 'drop');
    expect(drops.map((event) => (event.input as ChunkType).type)).toEqual(['reasoning-start', 'reasoning-delta', 'reasoning-end']);
    expect(drops.every((event) => event.output === null)).toBe(true);
    const shouted = events.filter((event) => event.processorId === 'shout' && (event.input as ChunkType).type === 'text-delta');
    expect(shouted.length).toBeGreaterThan(0);
    for (const event of shouted) {
      const input = event.input as AgentChunk<'text-delta'>;
      const output = event.output as AgentChunk<'text-delta'>;
      expect(output).not.toBe(input);
      expect(output.payload.text).toBe(input.payload.text.toUpperCase());
      // what the run emitted is the object the last processor returned
      expect(chunks).toContain(output);
    }
    // the second processor got exactly what the first passed on
    const firstOut = events.find((event) => event.processorId === 'drop-reasoning' && (event.input as ChunkType).type === 'text-start')?.output;
    const secondIn = events.find((event) => event.processorId === 'shout' && (event.input as ChunkType).type === 'text-start')?.input;
    expect(secondIn).toBe(firstOut);
  });

  it('reports an abort with the TripWire as error and no output', async () => {
    const events: ProcessorHookEvent[] = [];
    const chunks = await run(agent([noBye], 'ok bye now'), { includePayloads: true, onHook: (event) => events.push(event) });
    expect(chunks.at(-1)?.type).toBe('tripwire');
    const aborted = events.find((event) => event.outcome === 'abort');
    expect(aborted?.processorId).toBe('no-bye');
    expect(TripWire.isInstance(aborted?.error)).toBe(true);
    expect((aborted?.error as TripWire).reason).toBe('no goodbyes');
    expect(aborted && 'output' in aborted).toBe(false);
  });

  it('gives other hooks a copy of their arguments taken before the call', async () => {
    const events: ProcessorHookEvent[] = [];
    const stepper: Processor = {
      id: 'stepper',
      processOutputStep: (args) => {
        (args as unknown as Record<string, unknown>).stepNumber = 99; // what the hook does to its args does not show in `input`
        return undefined;
      },
    };
    await run(agent([stepper]), { includePayloads: true, onHook: (event) => events.push(event) });
    const step = events.find((event) => event.hook === 'processOutputStep');
    expect((step?.input as { stepNumber: number; text: string }).stepNumber).toBe(0);
    expect((step?.input as { text: string }).text).toBe('hello there');
    expect(step?.output).toBeUndefined();
  });

  it('never lets a throwing onHook change the run', async () => {
    const plain = await run(agent([shout]), {});
    const traced = await run(agent([shout]), {
      includePayloads: true,
      onHook: () => {
        throw new Error('tracer bug');
      },
    });
    const strip = (chunks: ChunkType[]) => chunks.map((chunk) => ({ type: chunk.type, payload: 'payload' in chunk ? JSON.stringify({ ...chunk.payload, messageId: undefined }) : undefined }));
    expect(strip(traced)).toEqual(strip(plain));
  });
});

describe('tracingContext.onJudge', () => {
  it('reports each judging call of a model-backed processor, with prompt and answer under includePayloads', async () => {
    const judged: JudgeCallEvent[] = [];
    const chunks = await run(agent([], 'hello', true), { includePayloads: true, onJudge: (event) => judged.push(event) }, 'I hate queues');
    expect(chunks.at(-1)?.type).toBe('tripwire');
    expect(judged).toHaveLength(1);
    const [call] = judged as [JudgeCallEvent];
    expect(call).toMatchObject({ processorId: 'moderation', provider: 'rxagent-offline', modelId: 'judge-1', outcome: 'ok' });
    expect(call.endTime).toBeGreaterThanOrEqual(call.startTime);
    expect(call.input?.prompt).toContain('I hate queues');
    expect(call.output).toEqual({ categories: { harassment: 0.9 }, reason: 'hostile' });
  });

  it('reports a failed judging call as an error outcome (the error strategy still applies)', async () => {
    const judged: JudgeCallEvent[] = [];
    const broken = new Agent({
      id: 'broken-judge',
      model: scriptedModel({ rules: [], fallback: { text: 'fine' } }),
      inputProcessors: [new ModerationProcessor({ model: scriptedModel({ rules: [], fallback: { text: 'not json' } }) })],
    });
    const chunks = await run(broken, { includePayloads: true, onJudge: (event) => judged.push(event) });
    expect(chunks.at(-1)?.type).toBe('tripwire'); // an unreadable answer fails closed (contentErrorStrategy 'strict', issue 24 §9)
    expect(judged.map((event) => event.outcome)).toEqual(['error']);
    expect(String((judged[0]?.output as Error).message)).toMatch(/json|malformed/i);
  });

  it('sends no prompt without includePayloads, and a throwing onJudge changes nothing', async () => {
    const judged: JudgeCallEvent[] = [];
    await run(agent([], 'hello', true), { onJudge: (event) => judged.push(event) }, 'hello');
    expect(judged).toHaveLength(1);
    expect('input' in (judged[0] as object)).toBe(false);
    const chunks = await run(agent([], 'hello', true), {
      onJudge: () => {
        throw new Error('tracer bug');
      },
    }, 'I hate queues');
    expect(chunks.at(-1)?.type).toBe('tripwire');
  });
});
