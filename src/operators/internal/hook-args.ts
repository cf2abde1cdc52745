/** The fields every hook receives, built from the run context and the processor's binding. */
import type { ProcessorHookName } from '../../processor/errors/processor-error.js';
import type { ProcessorContext } from '../../processor/processor-types.js';
import type { ProcessorStreamWriter } from '../../processor/stream-writer.js';
import type { RunContext } from '../run-context.js';
import type { ProcessorBinding } from './processor-binding.js';

/** The base context of one hook call. */
export function contextArgs(
  context: RunContext,
  binding: ProcessorBinding,
  hook: ProcessorHookName,
  writer: ProcessorStreamWriter = context.writer,
  retryCount: number = context.retryCount,
): ProcessorContext {
  return {
    abort: binding.abortFor(hook),
    retryCount,
    tracingContext: context.tracingContext,
    requestContext: context.requestContext,
    state: binding.state,
    abortSignal: context.abortSignal,
    writer,
    runId: context.runId,
  };
}

/** The processors that implement `hook`, with their run bindings (processorIndex set). */
export function bindingsWith(
  processors: readonly { id: string }[],
  context: RunContext,
  hook: ProcessorHookName,
): ProcessorBinding[] {
  const bound: ProcessorBinding[] = [];
  processors.forEach((processor, index) => {
    const candidate = processor as Parameters<RunContext['bind']>[0];
    if (typeof (candidate as unknown as Record<string, unknown>)[hook] !== 'function') return;
    candidate.processorIndex ??= index;
    bound.push(context.bind(candidate));
  });
  return bound;
}
