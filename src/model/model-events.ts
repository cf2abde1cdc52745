/**
 * What one model call emits, as the step-output kernel reads it: the provider's V4 stream parts,
 * plus two events of rxagent's own — the call's request/response metadata (`call-info`, once, when
 * the provider answered) and a replayed chunk (`replayed-chunk`: a cached response from
 * `processLLMRequest` replayed in place of the call).
 */
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { CachedLLMStepChunk } from '../contract/chunk-types.js';

/**
 * The metadata `doStream` resolved with, emitted before the call's first part.
 *
 * @example
 * ```ts
 * const info: CallInfo = { type: 'call-info', response: { headers: { 'x-request-id': 'r1' } } };
 * ```
 */
export interface CallInfo {
  readonly type: 'call-info';
  readonly request?: { url?: string; body?: unknown } | undefined;
  readonly response?: { headers?: Record<string, string> } | undefined;
}

/**
 * A chunk of a cached response, replayed as the model's output.
 *
 * @example
 * ```ts
 * const replayed: ReplayedChunk = { type: 'replayed-chunk', chunk: { type: 'text-delta', payload: { id: 't', text: 'Hi' } } };
 * ```
 */
export interface ReplayedChunk {
  readonly type: 'replayed-chunk';
  readonly chunk: CachedLLMStepChunk;
}

/** One event of a model call (see the module comment). */
export type ModelEvent = LanguageModelV4StreamPart | CallInfo | ReplayedChunk;
