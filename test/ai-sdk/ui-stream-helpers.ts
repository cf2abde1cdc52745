/** Reading a UI message stream in tests: its chunks, and the message the AI SDK's own reader builds. */
import { readUIMessageStream, type UIMessageChunk } from 'ai';
import type { RxAgentUIMessage } from '../../src/ai-sdk/index.js';

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
