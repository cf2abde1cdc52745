/** Reading a UI message stream in tests: its chunks, and the message the AI SDK's own reader builds. */
import { readUIMessageStream, type UIMessageChunk } from 'ai';
import type { RxAgentUIMessage } from '../../src/ai-sdk/index.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { Agent } from '../../src/loop/agent.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';

export async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const values: T[] = [];
  for await (const value of stream) values.push(value);
  return values;
}

/** The chunks and the last assembled message (via the AI SDK's own reader) of one stream. */
export async function assemble(
  stream: ReadableStream<UIMessageChunk>,
): Promise<{ chunks: UIMessageChunk[]; message: RxAgentUIMessage | undefined; errors: string[] }> {
  const [forChunks, forReader] = stream.tee();
  const errors: string[] = [];
  let message: RxAgentUIMessage | undefined;
  const [chunks] = await Promise.all([
    readAll(forChunks),
    (async () => {
      for await (const snapshot of readUIMessageStream<RxAgentUIMessage>({
        stream: forReader,
        onError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
      })) {
        message = snapshot;
      }
    })(),
  ]);
  return { chunks, message, errors };
}

/**
 * An agent whose first answer ('A sloppy answer.') a processor rejects with a retry; the retried
 * attempt says 'A careful answer.'.
 */
export function sloppyThenCarefulAgent(): Agent {
  const model = mockModel({
    parts: ({ callIndex }) => [...textParts(callIndex === 0 ? 'A sloppy answer.' : 'A careful answer.'), finishPart('stop')],
  });
  const strict: Processor = {
    id: 'strict',
    processOutputStep: ({ text, abort }) => {
      if (text.includes('sloppy')) abort('Be careful.', { retry: true });
    },
  };
  return new Agent({ id: 'a', model, outputProcessors: [strict], maxProcessorRetries: 2 });
}
