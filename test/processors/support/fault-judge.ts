/**
 * A judge model that plays a script of faults, one per call: an HTTP status (with an optional
 * `Retry-After`), a thrown network error (undici's `fetch failed` caused by `ECONNRESET`), a hang (until its abort signal), or a good answer. It
 * counts the calls in flight (the peak is what the concurrency bound is about) and when each
 * call started (`Date.now()`: fake time in the tests that use it).
 */
import { APICallError, type LanguageModelV4, type LanguageModelV4StreamPart } from '@ai-sdk/provider';

export type Fault =
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'throw' }
  | { kind: 'hang' }
  | { kind: 'ok'; answer?: string };

export interface FaultJudge extends LanguageModelV4 {
  /** `Date.now()` at the start of each call. */
  starts: number[];
  /** Calls running now, and the most at once. */
  inFlight: number;
  peak: number;
}

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/**
 * Call `n` plays `script[n]` (the last entry repeats); `answer` is the good answer's text.
 * `latencyMs` delays a good answer (on the fake clock when timers are faked).
 */
export function faultJudge(script: readonly Fault[], answer = '{"categories": {}}', latencyMs = 0): FaultJudge {
  const model: FaultJudge = {
    specificationVersion: 'v4',
    provider: 'fault',
    modelId: 'fault-judge',
    supportedUrls: {},
    starts: [],
    inFlight: 0,
    peak: 0,
    async doGenerate() {
      throw new Error('doGenerate is not used by judges');
    },
    async doStream(options) {
      const fault = script[Math.min(model.starts.length, script.length - 1)] ?? { kind: 'ok' };
      model.starts.push(Date.now());
      model.inFlight++;
      model.peak = Math.max(model.peak, model.inFlight);
      try {
        if (fault.kind === 'status') {
          throw new APICallError({
            message: `HTTP ${fault.status}`,
            url: 'https://judge.test',
            requestBodyValues: {},
            statusCode: fault.status,
            ...(fault.retryAfter === undefined ? {} : { responseHeaders: { 'Retry-After': fault.retryAfter } }),
            isRetryable: fault.status === 408 || fault.status === 429 || fault.status >= 500,
          });
        }
        // undici's failure as a provider's fetch throws it: the cause carries the network code
        if (fault.kind === 'throw') throw new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
        if (fault.kind === 'hang' || latencyMs > 0) {
          await new Promise<void>((resolve, reject) => {
            const signal = options.abortSignal;
            const stop = (): void => reject(signal?.reason ?? new Error('aborted'));
            if (signal?.aborted === true) return stop();
            signal?.addEventListener('abort', stop, { once: true });
            if (fault.kind !== 'hang') setTimeout(resolve, latencyMs);
          });
        }
        const text = (fault.kind === 'ok' ? fault.answer : undefined) ?? answer;
        const parts: LanguageModelV4StreamPart[] = [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: text },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
        ];
        return {
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            start(controller) {
              for (const part of parts) controller.enqueue(part);
              controller.close();
            },
          }),
        };
      } finally {
        model.inFlight--;
      }
    },
  };
  return model;
}
