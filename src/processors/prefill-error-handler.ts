/**
 * `PrefillErrorHandler`: recovers from providers that reject a request ending on an assistant
 * turn ("assistant message prefill"): retries once with a short continuation user turn.
 */
import { randomUUID } from 'node:crypto';
import { APICallError } from '@ai-sdk/provider';
import type { ProcessAPIErrorArgs, ProcessAPIErrorResult, Processor } from '../contract/index.js';
import { checkOptionKeys, optionKeys } from './internal/option-keys.js';

/** The handler takes no options (as the reference's). */
const PREFILL_OPTION_KEYS = optionKeys('prefill-error-handler', []);

const PREFILL_REJECTIONS = [
  /does not support assistant message prefill/i,
  /assistant response prefill is incompatible with enable[_\s-]?thinking/i,
  /requests ending with a model turn are not supported/i,
];

/** True when `error` (its message, or an `APICallError`'s response body) is a prefill rejection. */
export function isPrefillRejection(error: unknown): boolean {
  const texts: string[] = [];
  if (error instanceof Error) texts.push(error.message);
  if (APICallError.isInstance(error) && typeof error.responseBody === 'string') texts.push(error.responseBody);
  if (typeof error === 'string') texts.push(error);
  return texts.some((text) => PREFILL_REJECTIONS.some((pattern) => pattern.test(text)));
}

/** The signal the handler sends (the reference's, field for field). */
const CONTINUE_SIGNAL = {
  type: 'reactive',
  tagName: 'system-reminder',
  contents: 'continue',
  attributes: { type: 'anthropic-prefill-processor-retry' },
  metadata: { message: 'Continuing after prefill error' },
} as const;

/**
 * An error processor: on a prefill rejection (first attempt only) it asks for a retry whose request
 * ends on a user turn `<system-reminder type="anthropic-prefill-processor-retry">continue</system-reminder>`.
 * In a run it sends that turn with `sendSignal` (as the reference does): it reaches the retried
 * request only, is never stored, and the stream carries a transient `data-signal` chunk for it.
 * Called without `sendSignal` (a unit test calling the hook directly, as the reference's older
 * tests do), it appends the turn to the `MessageList` instead, marked
 * `content.metadata.systemReminder.type`.
 *
 * @example
 * ```ts
 * import { Agent } from 'rxagent';
 * import { PrefillErrorHandler } from 'rxagent/processors';
 * const agent = new Agent({ id: 'a', model, errorProcessors: [new PrefillErrorHandler()] });
 * ```
 */
export class PrefillErrorHandler implements Processor<'prefill-error-handler'> {
  /** The processor's id. */
  readonly id = 'prefill-error-handler' as const;
  /** A human-readable name. */
  readonly name = 'Prefill Error Handler';

  /** Takes no options (as the reference's): an options object with any key is an `InvalidProcessorOptionError`. */
  constructor(options: Record<string, never> = {}) {
    checkOptionKeys(PREFILL_OPTION_KEYS, options);
  }

  /** The `processAPIError` hook (see `Processor.processAPIError` for when it runs and what it may return). */
  processAPIError({ error, retryCount, messageList, sendSignal }: ProcessAPIErrorArgs): ProcessAPIErrorResult | undefined {
    if (retryCount > 0 || !isPrefillRejection(error)) return undefined;
    if (typeof sendSignal === 'function') {
      // the signal is queued synchronously; the returned promise only reports it
      void sendSignal(CONTINUE_SIGNAL).catch(() => undefined);
    } else {
      messageList.add(
        {
          id: `prefill-continue-${randomUUID()}`,
          role: 'user',
          createdAt: new Date(),
          content: {
            format: 2,
            parts: [{ type: 'text', text: '<system-reminder>continue</system-reminder>' }],
            metadata: { systemReminder: { type: CONTINUE_SIGNAL.attributes.type } },
          },
        },
        'input',
      );
    }
    return { retry: true };
  }
}
