/**
 * The `data-*` parts rxagent adds to a UI message stream, typed for `useChat` /
 * `readUIMessageStream` (`UIMessage<METADATA, RxAgentUIDataTypes>`).
 */
import type { UIMessage } from 'ai';

/**
 * The data of the `data-tripwire` part: a processor aborted the run.
 *
 * @example
 * ```ts
 * import type { TripwireUIData } from 'rxagent/ai-sdk';
 * const notice = (data: TripwireUIData) => `Blocked by ${data.processorId}: ${data.reason}`;
 * ```
 */
export interface TripwireUIData {
  /** Why (a human-readable reason). */
  reason: string;
  /** Whether the processor asked for a retry (the run still ended: no retry budget left). */
  retry: boolean;
  /** What the processor passed to `abort(reason, { metadata })`; `null` when nothing. */
  metadata: unknown;
  /** The `processorId` hook (see `Processor.processorId` for when it runs and what it may return). */
  processorId: string;
}

/**
 * The data of the transient `data-rxagent-retry` part: a processor rejected a step attempt, the
 * client dropped that attempt's parts (a `reset-step` chunk came first) and the step runs again.
 *
 * @example
 * ```ts
 * import type { RetryUIData } from 'rxagent/ai-sdk';
 * const onData = (part: { type: string; data: unknown }) => {
 *   if (part.type === 'data-rxagent-retry') console.log('retrying:', (part.data as RetryUIData).reason);
 * };
 * ```
 */
export interface RetryUIData {
  /** The step that is re-run (0-based). */
  stepNumber: number;
  /**
   * Why the attempt was dropped: a processor's tripwire, an API error a processor retries, or a
   * durable run's takeover (its owner died mid-attempt; another instance runs the step again).
   */
  cause: 'tripwire' | 'api-error' | 'takeover';
  /** The processor's reason (also given to the model as feedback). */
  reason: string | null;
  /** The `processorId` hook (see `Processor.processorId` for when it runs and what it may return). */
  processorId: string | null;
  /** Ids of the text, reasoning and tool parts of the discarded attempt, in stream order. */
  discardedPartIds: string[];
}

/**
 * The data part types rxagent's UI message stream adds: `data-tripwire` and `data-rxagent-retry`.
 *
 * @example
 * ```ts
 * import type { RxAgentUIDataTypes } from 'rxagent/ai-sdk';
 * type MyDataTypes = RxAgentUIDataTypes & { weather: { city: string; degrees: number } };
 * ```
 */
export type RxAgentUIDataTypes = {
  /** The `data-tripwire` part: a processor blocked the reply. */
  tripwire: TripwireUIData;
  /** The transient `data-rxagent-retry` part: a rejected attempt was removed, a retry follows. */
  'rxagent-retry': RetryUIData;
};

/**
 * A `UIMessage` whose data parts include rxagent's (`data-tripwire`, `data-rxagent-retry`).
 *
 * @example
 * ```ts
 * import { readUIMessageStream } from 'ai';
 * import { toUIMessageStream, type RxAgentUIMessage } from 'rxagent/ai-sdk';
 * for await (const message of readUIMessageStream<RxAgentUIMessage>({ stream: toUIMessageStream(agent.stream$('Hi')) })) {
 *   const tripwire = message.parts.find((part) => part.type === 'data-tripwire');
 * }
 * ```
 */
export type RxAgentUIMessage<METADATA = unknown> = UIMessage<METADATA, RxAgentUIDataTypes>;

/**
 * The `type` of rxagent's tripwire data part.
 *
 * @example
 * ```ts
 * import { TRIPWIRE_PART_TYPE } from 'rxagent/ai-sdk';
 * const blocked = message.parts.some((part) => part.type === TRIPWIRE_PART_TYPE);
 * ```
 */
export const TRIPWIRE_PART_TYPE = 'data-tripwire' as const;

/**
 * The `type` of rxagent's (transient) retry data part.
 *
 * @example
 * ```ts
 * import { RETRY_PART_TYPE } from 'rxagent/ai-sdk';
 * const isRetryNotice = (chunk: { type: string }) => chunk.type === RETRY_PART_TYPE;
 * ```
 */
export const RETRY_PART_TYPE = 'data-rxagent-retry' as const;
