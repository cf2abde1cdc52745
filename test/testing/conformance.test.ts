/**
 * The conformance kit (issue 34 §5) on processors a user writes: one that conforms, and three
 * broken on purpose — per-run data in an instance field, a `Map` in `state`, and a word budget that
 * counts a rejected attempt's words — each caught with its cause, the mode it showed in, and a diff.
 * Options written wrong are `TypeError`s that say what was wrong.
 */
import { describe, expect, it } from 'vitest';
import type { ChunkType, Processor } from 'rxagent';
import { ConformanceError, DEFAULT_CONVERSATIONS, checkProcessor, expectConformance, type Conversation } from 'rxagent/testing';

/** Conforms: its per-run data (words seen in the current attempt) is in `state`, keyed on `retryCount`. */
const shouting: Processor = {
  id: 'shouting',
  processOutputStream: ({ part, state, retryCount }) => {
    if (part.type !== 'text-delta') return part;
    state['attempt'] = retryCount;
    return { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } };
  },
};

/** Broken: numbers its deltas with an instance field (outlives the run, never restored). */
class Numbering implements Processor {
  readonly id = 'numbering';
  count = 0;
  processOutputStream({ part }: { part: ChunkType }): ChunkType {
    if (part.type !== 'text-delta') return part;
    this.count++;
    return { ...part, payload: { ...part.payload, text: `[${this.count}]${part.payload.text}` } };
  }
}

/** Broken: counts tool calls per tool in a `Map` kept in `state` (not JSON: no snapshot, no durable commit). */
const callCounter: Processor = {
  id: 'call-counter',
  processOutputStream: ({ part, state }) => {
    if (part.type === 'tool-call') {
      const seen = (state['seen'] ??= new Map<string, number>()) as Map<string, number>;
      seen.set(part.payload.toolName, (seen.get(part.payload.toolName) ?? 0) + 1);
    }
    return part;
  },
};

/** Broken: a word budget for the whole run that also counts the words of a rejected attempt. */
const wordBudget: Processor = {
  id: 'word-budget',
  processOutputStream: ({ part, state }) => {
    if (part.type !== 'text-delta') return part;
    const words = ((state['words'] as number | undefined) ?? 0) + part.payload.text.split(/\s+/).filter(Boolean).length;
    state['words'] = words;
    return words > 12 ? null : part;
  },
};

async function failure(promise: Promise<unknown>): Promise<ConformanceError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(ConformanceError.isInstance(error)).toBe(true);
  return error as ConformanceError;
}

describe('expectConformance on a user processor', () => {
  it('resolves with the report for a processor that keeps its per-run data in state', async () => {
    const report = await expectConformance(shouting);
    expect(report).toMatchObject({ ok: true, processorId: 'shouting', modes: ['live', 'retried', 'restored', 'taken-over'], findings: [] });
    expect(report.conversations).toEqual(DEFAULT_CONVERSATIONS.map((conversation) => conversation.name));
    // live twice + retried per conversation, a restore per commit point, two workers per crash point
    expect(report.runs).toBeGreaterThan(40);
    expect(report.text).toMatch(/^processor "shouting" conforms: /);
  });

  it('state in an instance field: the field named with its values, the second run on the instance differs', async () => {
    const error = await failure(expectConformance(new Numbering()));
    const { findings } = error.report;
    expect(new Set(findings.map((finding) => finding.cause))).toEqual(new Set(['state-outside-state']));
    expect(findings[0]).toMatchObject({ conversation: 'text streaming', mode: 'live', compared: 'fields', diff: ['this.count: 0 → 14'] });
    const again = findings.find((finding) => finding.mode === 'live' && finding.compared === 'chunks');
    expect(again?.diff).toContain('- text-delta {"text":"[1]It is su"}');
    expect(again?.diff).toContain('+ text-delta {"text":"[15]It is su"}');
    expect(error.message).toContain('✗ state kept outside `state`');
    expect(error.message).toContain('this.count: 0 → 14');
  });

  it('state in an instance field, a new instance per process (a factory): the restored and taken-over runs lose the count', async () => {
    const report = await checkProcessor(() => new Numbering(), { conversations: [DEFAULT_CONVERSATIONS[2]!], modes: ['restored', 'taken-over'] });
    expect(report.ok).toBe(false);
    const modes = new Set(report.findings.map((finding) => finding.mode));
    expect(modes).toEqual(new Set(['live', 'restored', 'taken-over']));
    const takenOver = report.findings.find((finding) => finding.mode === 'taken-over');
    expect(takenOver).toMatchObject({ cause: 'state-outside-state', compared: 'chunks' });
    expect(takenOver?.where).toMatch(/^crash at /);
  });

  it('a Map in state: state-not-json, naming the path and the type; the run is not restored or taken over', async () => {
    const error = await failure(expectConformance(callCounter));
    const { findings, text } = error.report;
    expect(findings.map((finding) => [finding.cause, finding.conversation])).toEqual([
      ['state-not-json', 'tool call round trip'],
      ['state-not-json', 'multi-step run'],
    ]);
    expect(findings[0]).toMatchObject({ compared: 'snapshot', where: 'snapshot at the model commit of step 0' });
    expect(findings[0]?.diff[0]).toMatch(/^state\.seen is a Map: /);
    expect(text).toContain('✗ state that is not JSON (2)');
  });

  it('a counter that counts a rejected attempt: not idempotent on replay, seen only when a step is retried', async () => {
    const error = await failure(expectConformance(wordBudget));
    const { findings } = error.report;
    expect(findings.length).toBeGreaterThan(0);
    for (const finding of findings) expect(finding).toMatchObject({ cause: 'not-idempotent-on-replay', mode: 'retried', compared: 'chunks' });
    // the live answer's words after the rejected attempt used the budget up
    expect(findings[0]?.diff).toContain('- text-delta {"text":"It is su"}');
    expect(error.message).toContain('✗ a hook that is not idempotent across a replay');
  });

  it('drives the conversations given, with their tools', async () => {
    const refund: Conversation = {
      name: 'refund',
      input: 'Refund order A-17, please.',
      steps: [{ toolCalls: [{ toolName: 'refund', args: { order: 'A-17' }, result: { refunded: true } }] }, { text: 'Done: order A-17 is refunded.' }],
    };
    const seen: unknown[] = [];
    const auditor: Processor = {
      id: 'auditor',
      processToolResult: ({ result, state }) => {
        state['results'] = [...((state['results'] as unknown[] | undefined) ?? []), result];
        seen.push(result);
        return undefined;
      },
    };
    const report = await expectConformance(auditor, { conversations: [refund] });
    expect(report.conversations).toEqual(['refund']);
    expect(seen).toContainEqual({ refunded: true });
  });

  it('says what was wrong with options written wrong', async () => {
    await expect(checkProcessor({} as Processor)).rejects.toThrow(new TypeError('checkProcessor: the first argument must be a processor (an object with a non-empty string `id` and its hooks); got an object with the keys [].'));
    await expect(checkProcessor({ id: 'idle' })).rejects.toThrow(/processor "idle" has none of the nine hooks/);
    await expect(checkProcessor(() => null as unknown as Processor)).rejects.toThrow(/what the factory returned must be a processor .* got null/);
    await expect(checkProcessor(shouting, { modes: ['live', 'replayed' as 'live'] })).rejects.toThrow(/options.modes must be an array of 'live', 'retried', 'restored', 'taken-over'; got \["live","replayed"\]/);
    await expect(checkProcessor(shouting, { lists: [] })).rejects.toThrow(/options.lists must be a non-empty array/);
    await expect(checkProcessor(shouting, { maxProcessorRetries: -1 })).rejects.toThrow(/maxProcessorRetries must be a non-negative integer; got -1/);
    await expect(checkProcessor(shouting, { conversations: [{ name: 'x', input: 'Hi', steps: [] }] })).rejects.toThrow(/options.conversations\[0\].steps \("x"\) must be a non-empty array/);
    await expect(checkProcessor(shouting, { conversations: [{ name: 'x', input: 'Hi', steps: [{ toolCalls: [{ toolName: 't', args: {} }] }] }] })).rejects.toThrow(
      /the last step of "x" makes tool calls; end a conversation with the model's answer/,
    );
  });
});
