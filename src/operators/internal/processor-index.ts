/** `processorIndex` on the processor object, where the object allows it. */
import type { Processor } from '../../contract/processor-types.js';

/**
 * Sets `processor.processorIndex` as the specification has the runtime do, without failing on a
 * frozen, sealed or non-extensible processor or a read-only property (the hook arguments carry the
 * run's own index anyway). Returns whether it was written.
 */
export function setProcessorIndex(processor: Processor, index: number): boolean {
  try {
    return Reflect.set(processor, 'processorIndex', index);
  } catch {
    return false; // a setter that throws
  }
}
