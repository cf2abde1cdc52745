/**
 * Keep-alives of a UI message stream response: an SSE comment at an interval, so a proxy does not close a connection that is quiet while a tool runs.
 */
import { MAX_TIMER_MS, isTimerDelay } from '../../contract/index.js';
import { optionError } from '../../loop/index.js';

/** The interval of a response's keep-alive when its options name none. */
export const DEFAULT_KEEP_ALIVE_MS = 15_000;

const KEEP_ALIVE = new TextEncoder().encode(': keep-alive\n\n');

/**
 * `keepAliveMs` of `owner`'s options as an interval (`false`: none; absent: the default), or a
 * `TypeError` naming the option (not the value: it may be a client's) for one no timer can wait for.
 */
export function keepAliveInterval(owner: string, keepAliveMs: unknown): number | false {
  if (keepAliveMs === undefined) return DEFAULT_KEEP_ALIVE_MS;
  if (keepAliveMs === false) return false;
  if (!isTimerDelay(keepAliveMs)) throw optionError(`${owner}.keepAliveMs must be false or a number of milliseconds above 0 and at most ${MAX_TIMER_MS}.`);
  return keepAliveMs;
}

/**
 * `body` with `: keep-alive` sent every `keepAliveMs` between its pieces (each piece is whole SSE
 * events, so a comment never splits one): one interval timer per response, nothing per chunk. None
 * while the reader is behind (the comment would only queue: bytes are on their way anyway). The
 * timer is cleared when the body ends, fails or is cancelled. `false`: `body` itself.
 */
export function withKeepAlive(body: ReadableStream<Uint8Array>, keepAliveMs: number | false): ReadableStream<Uint8Array> {
  if (keepAliveMs === false) return body;
  const reader = body.getReader();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = (): void => {
    clearInterval(timer);
    timer = undefined;
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setInterval(() => {
        if ((controller.desiredSize ?? 0) > 0) controller.enqueue(KEEP_ALIVE);
      }, keepAliveMs);
      (timer as { unref?: () => void }).unref?.();
    },
    async pull(controller) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        stop();
        controller.error(error);
        return;
      }
      if (next.done) {
        stop();
        controller.close();
        return;
      }
      controller.enqueue(next.value);
    },
    async cancel(reason) {
      stop();
      await reader.cancel(reason);
    },
  });
}
