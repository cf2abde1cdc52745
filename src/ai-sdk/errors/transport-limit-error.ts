import { RxAgentError, hasMarker } from '../../contract/index.js';

const marker = Symbol.for('rxagent.error.TransportLimitError');

/** The limits of `DurableChatTransport` a stream can run into. */
export type TransportLimit = 'maxEventBytes' | 'maxTotalReconnects';

/**
 * A `DurableChatTransport` stream ran into one of its limits against a server that never ends, and
 * errors with this: `maxEventBytes` — that many bytes of one SSE event came without its end (the
 * response is cancelled) —, or `maxTotalReconnects` — the stream reconnected that many times in
 * all without reaching `[DONE]`. `limit` names the option, `value` its value, `chatId` the chat.
 * `useChat` shows it as the chat's error; raise the option when a server's events or runs are
 * legitimately that large or long.
 *
 * @example
 * ```ts
 * import { useChat } from '@ai-sdk/react';
 * import { DurableChatTransport, TransportLimitError } from 'rxagent/ai-sdk';
 * const chat = useChat({
 *   transport: new DurableChatTransport({ api: '/api/chat', maxTotalReconnects: 20 }),
 *   onError: (error) => {
 *     if (TransportLimitError.isInstance(error)) console.warn(`chat ${error.chatId} stopped at ${error.limit} (${error.value})`);
 *   },
 * });
 * ```
 */
export class TransportLimitError extends RxAgentError {
  private readonly [marker] = true;
  /** The option whose limit was reached. */
  readonly limit: TransportLimit;
  /** The option's value (bytes for `maxEventBytes`, reconnects for `maxTotalReconnects`). */
  readonly value: number;
  /** The chat whose stream errored. */
  readonly chatId: string;

  constructor(limit: TransportLimit, value: number, chatId: string) {
    super(
      'TransportLimitError',
      limit === 'maxEventBytes'
        ? `DurableChatTransport: an SSE event of chat ${chatId} is longer than maxEventBytes (${value} bytes) and has not ended: the response is cancelled`
        : `DurableChatTransport: the response for chat ${chatId} dropped again after maxTotalReconnects (${value}) reconnects without reaching [DONE]`,
    );
    this.limit = limit;
    this.value = value;
    this.chatId = chatId;
  }

  static override isInstance(error: unknown): error is TransportLimitError {
    return hasMarker(error, marker);
  }
}
