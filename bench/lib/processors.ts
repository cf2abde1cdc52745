/** Pass-through processors for the workloads (fresh objects for every agent: runtimes annotate them). */
import type { BenchProcessor } from './subject.js';

type Hooked = BenchProcessor;

/** `k` pass-through `processOutputStream` processors, synchronous or async. */
export function outputStreamProcessors(k: number, variant: 'sync' | 'async'): Hooked[] {
  return Array.from({ length: k }, (_, index): Hooked =>
    variant === 'sync'
      ? { id: `pass-${index}`, processOutputStream: ({ part }: { part: unknown }) => part }
      : { id: `pass-${index}`, processOutputStream: async ({ part }: { part: unknown }) => part },
  );
}

/** `k` pass-through `processInput` processors (return the messages they got). */
export function inputProcessors(k: number): Hooked[] {
  return Array.from({ length: k }, (_, index): Hooked => ({
    id: `input-${index}`,
    processInput: ({ messages }: { messages: unknown }) => messages,
  }));
}

/** `k` processors with a pass-through `processInputStep` and `processOutputStep`. */
export function stepProcessors(k: number): Hooked[] {
  return Array.from({ length: k }, (_, index): Hooked => ({
    id: `step-${index}`,
    processInputStep: () => undefined,
    processOutputStep: ({ messages }: { messages: unknown }) => messages,
  }));
}
