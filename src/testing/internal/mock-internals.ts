import type { Observable } from 'rxjs';
import type {
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  SharedV4Warning,
} from '@ai-sdk/provider';
import { finishPart, usage } from '../model-parts.js';

/**
 * A `ReadableStream` over an Observable of parts: subscribed on start, unsubscribed on
 * `cancel`, errored with the signal's reason on abort (as a real HTTP body would be).
 *
 * @example
 * ```ts
 * const stream = toReadableStream(of(part1, part2), options.abortSignal);
 * ```
 */
export function toReadableStream<T>(parts$: Observable<T>, abortSignal?: AbortSignal): ReadableStream<T> {
  if (abortSignal?.aborted) throw abortSignal.reason;
  let teardown = (): void => undefined;
  return new ReadableStream<T>({
    start(controller) {
      const onAbort = (): void => {
        subscription.unsubscribe();
        controller.error(abortSignal?.reason);
      };
      const subscription = parts$.subscribe({
        next: (part) => controller.enqueue(part),
        error: (error: unknown) => {
          abortSignal?.removeEventListener('abort', onAbort);
          controller.error(error);
        },
        complete: () => {
          abortSignal?.removeEventListener('abort', onAbort);
          controller.close();
        },
      });
      if (!subscription.closed) abortSignal?.addEventListener('abort', onAbort, { once: true });
      teardown = () => {
        abortSignal?.removeEventListener('abort', onAbort);
        subscription.unsubscribe();
      };
    },
    cancel() {
      teardown();
    },
  });
}

/**
 * Folds stream parts into a `doGenerate` result (text and reasoning blocks joined by id).
 *
 * @example
 * ```ts
 * foldParts([...textParts('Hi'), finishPart('stop')]).content; // [{ type: 'text', text: 'Hi' }]
 * ```
 */
export function foldParts(parts: readonly LanguageModelV4StreamPart[]): LanguageModelV4GenerateResult {
  const content: LanguageModelV4Content[] = [];
  const open = new Map<string, { type: 'text' | 'reasoning'; text: string }>();
  let warnings: SharedV4Warning[] = [];
  let finish = finishPart('stop', usage());
  for (const part of parts) {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start': {
        const block = { type: part.type === 'text-start' ? ('text' as const) : ('reasoning' as const), text: '' };
        open.set(`${block.type}:${part.id}`, block);
        content.push(block);
        break;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const block = open.get(`${part.type === 'text-delta' ? 'text' : 'reasoning'}:${part.id}`);
        if (block) block.text += part.delta;
        break;
      }
      case 'tool-call':
      case 'tool-result':
      case 'tool-approval-request':
      case 'source':
      case 'file':
      case 'reasoning-file':
      case 'custom':
        content.push(part);
        break;
      case 'stream-start':
        warnings = part.warnings;
        break;
      case 'finish':
        finish = part;
        break;
      default:
        break;
    }
  }
  return {
    content,
    finishReason: finish.finishReason,
    usage: finish.usage,
    ...(finish.providerMetadata === undefined ? {} : { providerMetadata: finish.providerMetadata }),
    warnings,
  };
}
