import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { ProcessLLMRequestArgs } from './hook-types.js';

/**
 * `options` as `processLLMRequest` hooks get them (`ProcessLLMRequestArgs.callOptions`): without the
 * prompt (the hooks thread it) and the abort signal, a frozen shallow copy (a hook cannot change
 * what is sent, or what a later hook sees, by assigning to it). Made once per request, only when a
 * processor hooks `processLLMRequest` — by the loop and by `processorsMiddleware` alike, which is
 * why it lives in the contract (the AI SDK interop reaches it through `src/contract/index.ts`; not
 * re-exported by `rxagent`).
 *
 * @example
 * ```ts
 * import { sentCallOptions } from '../contract/sent-call-options.js';
 * const request: LLMRequest = { prompt: options.prompt, model, stepNumber: 0, callOptions: sentCallOptions(options) };
 * ```
 */
export function sentCallOptions(options: LanguageModelV4CallOptions): NonNullable<ProcessLLMRequestArgs['callOptions']> {
  const { prompt: _prompt, abortSignal: _abortSignal, ...sent } = options;
  return Object.freeze(sent);
}
