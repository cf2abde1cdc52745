/**
 * Streamed tool-call input written with JSON escapes (issue 24 §1), read as a client reads it:
 * every prefix of the streamed arguments through the AI SDK's `parsePartialJson` (what `useChat`
 * shows while the call streams), and the final input. Four paths: `processOutputStream` alone,
 * the Agent's UI message stream with `release: 'live'` and `'accepted'`, and `streamText` over a
 * model wrapped in `processorsMiddleware`.
 */
import { parsePartialJson, streamText, tool, wrapLanguageModel } from 'ai';
import { from, lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { processorsMiddleware } from '../../../src/ai-sdk/processors-middleware.js';
import { toUIMessageStream } from '../../../src/ai-sdk/to-ui-message-stream.js';
import type { ChunkType } from '../../../src/contract/chunk-types.js';
import type { Processor } from '../../../src/contract/processor-types.js';
import { Agent } from '../../../src/loop/agent.js';
import { processOutputStream } from '../../../src/operators/process-output-stream.js';
import { createRunContext } from '../../../src/operators/run-context.js';
import { mockModel } from '../../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../../src/testing/model-parts.js';

/** The inside of a JSON string for `text`, each character written `\uXXXX` where `escape(index)` says so (`/` as `\/` when it says so). */
export function jsonEscaped(text: string, escape: (index: number) => boolean): string {
  let written = '';
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (!escape(index)) written += JSON.stringify(char).slice(1, -1);
    else if (char === '/') written += '\\/';
    else written += `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  }
  return written;
}

/** `text` cut into pieces of the given sizes (cycled). */
export function pieces(text: string, sizes: readonly number[]): string[] {
  const result: string[] = [];
  for (let at = 0, index = 0; at < text.length; index++) {
    const size = sizes[index % sizes.length] as number;
    result.push(text.slice(at, at + size));
    at += size;
  }
  return result;
}

/** Every string (keys and values) of a parsed value. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  return Object.entries(value).flatMap(([key, item]) => [key, ...stringsOf(item)]);
}

/** What a client shows of streamed arguments: the strings of each prefix's partial parse, and of the final input. */
async function clientView(deltas: readonly string[], final: unknown): Promise<string[]> {
  const shown: string[] = [];
  let text = '';
  for (const delta of deltas) {
    text += delta;
    const parsed = await parsePartialJson(text);
    shown.push(...stringsOf(parsed.value));
  }
  shown.push(...stringsOf(final));
  return shown;
}

export type EncodedInputPath = 'processOutputStream' | 'ui live' | 'ui accepted' | 'middleware';
export const ENCODED_INPUT_PATHS: readonly EncodedInputPath[] = ['processOutputStream', 'ui live', 'ui accepted', 'middleware'];

function modelParts(argsText: readonly string[]): LanguageModelV4StreamPart[] {
  const id = 'call-lookup';
  return [
    { type: 'tool-input-start', id, toolName: 'lookup' },
    ...argsText.map((delta): LanguageModelV4StreamPart => ({ type: 'tool-input-delta', id, delta })),
    { type: 'tool-input-end', id },
    { type: 'tool-call', toolCallId: id, toolName: 'lookup', input: argsText.join('') },
    finishPart('tool-calls'),
  ];
}

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const items: T[] = [];
  const reader = stream.getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) items.push(next.value);
  } catch {
    // a tripwired run errors the stream: what was read before counts
  }
  return items;
}

/**
 * The strings a client is shown of tool-call arguments streamed as `argsText` (JSON, in pieces)
 * on `path`, with `guards` as the output processors.
 */
export async function shownToolInput(path: EncodedInputPath, argsText: readonly string[], guards: () => Processor[]): Promise<string[]> {
  if (path === 'processOutputStream') {
    const runId = 'run-1';
    const base = { runId, from: 'AGENT' as const };
    const input: ChunkType[] = [
      { ...base, type: 'tool-call-input-streaming-start', payload: { toolCallId: 'c1', toolName: 'lookup' } },
      ...argsText.map((argsTextDelta): ChunkType => ({ ...base, type: 'tool-call-delta', payload: { toolCallId: 'c1', toolName: 'lookup', argsTextDelta } })),
      { ...base, type: 'tool-call-input-streaming-end', payload: { toolCallId: 'c1' } },
      { ...base, type: 'tool-call', payload: { toolCallId: 'c1', toolName: 'lookup', args: JSON.parse(argsText.join('')) as Record<string, unknown> } },
    ];
    const output = await lastValueFrom(from(input).pipe(processOutputStream(guards(), createRunContext()), toArray())).catch(() => [] as ChunkType[]);
    const deltas = output.flatMap((part) => (part.type === 'tool-call-delta' ? [part.payload.argsTextDelta] : []));
    const call = output.find((part) => part.type === 'tool-call');
    return clientView(deltas, call?.type === 'tool-call' ? call.payload.args : undefined);
  }
  if (path === 'middleware') {
    const model = mockModel({ parts: modelParts(argsText) });
    const wrapped = wrapLanguageModel({ model, middleware: processorsMiddleware({ outputProcessors: guards() }) });
    const result = streamText({ model: wrapped, prompt: 'Go', tools: { lookup: tool({ inputSchema: z.object({ query: z.string() }).passthrough() }) } });
    const deltas: string[] = [];
    let final: unknown;
    try {
      for await (const part of result.fullStream) {
        if (part.type === 'tool-input-delta') deltas.push(part.delta);
        if (part.type === 'tool-call') final = part.input;
      }
    } catch {
      // a tripwire ends the stream: what was read before counts
    }
    return clientView(deltas, final);
  }
  const guardList = guards();
  const agent = new Agent({
    id: 'encoded',
    instructions: 'Answer.',
    model: mockModel({ parts: ({ callIndex }) => (callIndex === 0 ? modelParts(argsText) : [...textParts('Done.'), finishPart()]) }),
    tools: { lookup: { description: 'Looks up.', inputSchema: z.object({ query: z.string() }).passthrough(), execute: () => 'ok' } },
    outputProcessors: guardList,
  });
  const ui = await readAll(toUIMessageStream(agent.stream$('Go'), { release: path === 'ui live' ? 'live' : 'accepted' }));
  const deltas = ui.flatMap((part) => (part.type === 'tool-input-delta' ? [part.inputTextDelta] : []));
  const available = ui.find((part) => part.type === 'tool-input-available');
  return clientView(deltas, available?.type === 'tool-input-available' ? available.input : undefined);
}
