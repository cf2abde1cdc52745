/**
 * One small run for the hostile-processor tests: a model that calls `weather` once, then answers;
 * the tool, recording the cities it ran for; the run's chunks; and what is wrong with a run that
 * should have ended with a `ProcessorError`.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import type { Agent } from '../../../src/loop/agent.js';
import type { ChunkType } from '../../../src/contract/chunk-types.js';
import { ProcessorError, type ProcessorHookName } from '../../../src/contract/errors/processor-error.js';
import { finishPart, mockModel, textParts, toolCallParts, type MockModel } from '../../../src/testing/index.js';

/** A tool call of `weather` (its input streamed), then text: every hook runs, every tool chunk type passes the chain. */
export function weatherModel(): MockModel {
  return mockModel({
    parts: ({ options }) =>
      options.prompt.some((message) => message.role === 'tool')
        ? [...textParts('It is sunny.'), finishPart('stop')]
        : [...toolCallParts('weather', { city: 'Paris' }), finishPart('tool-calls')],
  });
}

/** The `weather` tool; each run pushes its city to `ran`. */
export function weatherTools(ran: string[]) {
  return {
    weather: {
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }: { city: string }) => {
        ran.push(city);
        return { city, sky: 'sunny' };
      },
    },
  };
}

/** Every chunk of `agent`'s run for the weather prompt. */
export async function chunksOf(agent: Agent): Promise<ChunkType[]> {
  return lastValueFrom(agent.stream$('Weather in Paris?').pipe(toArray()));
}

/**
 * Problems with a run that should have ended with one terminal chunk, an error that is a
 * `ProcessorError` naming `processorId` and `hook` (its message matching `message`), every chunk JSON.
 */
export function processorErrorProblems(chunks: readonly ChunkType[], processorId: string, hook: ProcessorHookName, message?: RegExp): string[] {
  const problems: string[] = [];
  const terminals = chunks.filter((chunk) => ['finish', 'error', 'tripwire', 'abort'].includes(chunk.type));
  const last = chunks.at(-1);
  if (terminals.length !== 1 || terminals[0] !== last) problems.push(`one terminal chunk, last: ${chunks.map((chunk) => chunk.type).join(',')}`);
  const error = last?.type === 'error' ? (last.payload.error as { name?: unknown; message?: unknown }) : undefined;
  if (!(ProcessorError.isInstance(error) && error.processorId === processorId && error.hook === hook)) {
    problems.push(`expected a ProcessorError naming "${processorId}" and ${hook}, got ${last?.type} ${String(error?.name)}: ${String(error?.message)}`);
  } else if (message !== undefined && !message.test(error.message)) problems.push(`message ${error.message} does not match ${String(message)}`);
  try {
    JSON.stringify(chunks);
  } catch (encoding) {
    problems.push(`the chunks are not JSON: ${String(encoding)}`);
  }
  return problems;
}
