/** A V4 model whose reply is a pull-based stream of `total` one-letter text deltas; counts every pull. */
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';

/** The model, and how many parts the run has pulled from its stream so far. */
export function countingModel(total: number): { model: LanguageModelV4; pulls: () => number } {
  let pulls = 0;
  const model: LanguageModelV4 = {
    specificationVersion: 'v4',
    provider: 'test.counting',
    modelId: 'counting',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    async doStream() {
      let sent = 0;
      const stream = new ReadableStream<LanguageModelV4StreamPart>(
        {
          pull(controller) {
            pulls++;
            if (sent === 0) controller.enqueue({ type: 'text-start', id: 't' });
            else if (sent <= total) controller.enqueue({ type: 'text-delta', id: 't', delta: 'x' });
            else if (sent === total + 1) controller.enqueue({ type: 'text-end', id: 't' });
            else if (sent === total + 2) {
              controller.enqueue({
                type: 'finish',
                finishReason: { unified: 'stop', raw: 'stop' },
                usage: {
                  inputTokens: { total: 1, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
                  outputTokens: { total, text: undefined, reasoning: undefined },
                },
              });
            } else controller.close();
            sent++;
          },
        },
        { highWaterMark: 0 },
      );
      return { stream };
    },
  };
  return { model, pulls: () => pulls };
}

/** Waits `ms` milliseconds of real time (the run reads its provider on promises). */
export const settle = (ms = 30): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
