/**
 * `PrefillErrorHandler`: recovers from providers that reject a request ending on an assistant
 * turn ("assistant message prefill"): retries once with a short continuation user turn.
 */
import { APICallError } from '@ai-sdk/provider';
import type { ProcessAPIErrorArgs, ProcessAPIErrorResult, Processor } from '../contract/index.js';

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

/**
 * An error processor: on a prefill rejection (first attempt only) it appends a user turn
 * `<system-reminder>continue</system-reminder>` and asks for a retry. The turn is part of the
 * conversation (and so of memory, marked `metadata.rxagent.prefillContinuation`).
 *
 * @example
 * ```ts
 * import { Agent } from 'rxagent';
 * import { PrefillErrorHandler } from 'rxagent/processors';
 * const agent = new Agent({ id: 'a', model, errorProcessors: [new PrefillErrorHandler()] });
 * ```
 */
export class PrefillErrorHandler implements Processor<'prefill-error-handler'> {
  readonly id = 'prefill-error-handler' as const;
  readonly name = 'Prefill Error Handler';

  processAPIError({ error, retryCount, messageList }: ProcessAPIErrorArgs): ProcessAPIErrorResult | undefined {
    if (retryCount > 0 || !isPrefillRejection(error)) return undefined;
    messageList.add(
      {
        role: 'user',
        content: '<system-reminder>continue</system-reminder>',
        providerOptions: { rxagent: { prefillContinuation: true } },
      },
      'input',
    );
    return { retry: true };
  }
}
