/** The fields every hook receives, built from the run context and the processor's binding. */
import { checkHookNames, checkProcessorArray } from '../../contract/processor-checks.js';
import { isHooked } from '../../contract/has-hook.js';
import type { ProcessorHookName } from '../../contract/errors/processor-error.js';
import type { Processor, ProcessorContext } from '../../contract/processor-types.js';
import type { ProcessorStreamWriter } from '../../contract/stream-writer.js';
import type { RunContext } from '../run-context.js';
import { setProcessorIndex } from './processor-index.js';
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
    processorIndex: binding.index,
    sendSignal: context.sendSignal,
  };
}

/**
 * {@link contextArgs} without `abort` and `writer`, for args objects that add those two as
 * accessors made on first read (the `processOutputStream` chain: see stream-chain.ts). Keep the
 * two field lists together.
 */
export function contextFieldsWithoutAbortAndWriter(
  context: RunContext,
  binding: ProcessorBinding,
  retryCount: number = context.retryCount,
): Omit<ProcessorContext, 'abort' | 'writer'> {
  return {
    retryCount,
    tracingContext: context.tracingContext,
    requestContext: context.requestContext,
    state: binding.state,
    abortSignal: context.abortSignal,
    runId: context.runId,
    processorIndex: binding.index,
    sendSignal: context.sendSignal,
  };
}

/**
 * The processors that implement `hook`, with their run bindings. A processor's index is the one
 * the run registered for it (`assignProcessorIndexes`), else its position in `processors`; it is
 * also written onto the processor when the object allows it (a frozen one still runs).
 */
export function bindingsWith(
  processors: readonly { id: string }[],
  context: RunContext,
  hook: ProcessorHookName,
): ProcessorBinding[] {
  checkProcessorArray(processors, `${hook}(processors)`);
  const bound: ProcessorBinding[] = [];
  processors.forEach((processor, position) => {
    const candidate = processor as Processor;
    if (!isHooked(candidate, hook)) return checkHookNames(candidate, `${hook}(processors)`, [hook]);
    const registered = context.processorIndexes.get(candidate);
    if (registered === undefined && candidate.processorIndex === undefined) setProcessorIndex(candidate, position);
    bound.push(context.bind(candidate, registered ?? position));
  });
  return bound;
}
