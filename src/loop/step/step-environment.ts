/**
 * What one step needs of its run: the run context, the processors, the fenced output chain, the
 * id and clock sources. The agent's `RunEnvironment` is one; `processorsMiddleware` builds one
 * per model call — both run the same step code (`model-output.ts`, `after-model.ts`).
 */
import type { OperatorFunction } from 'rxjs';
import type { OutputSink, OutputStreamPass } from '../../operators/process-output-stream.js';
import type { RunContext } from '../../operators/run-context.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { Processor } from '../../contract/processor-types.js';
import type { CustomOutlet } from '../run/custom-outlet.js';

/** A step's view of its run. */
export interface StepEnvironment {
  readonly ctx: RunContext;
  readonly runId: string;
  /** `processLLMRequest`, `processLLMResponse`. */
  readonly inputProcessors: readonly Processor[];
  /** `processOutputStream`, `processOutputStep`, `processToolResult`. */
  readonly outputProcessors: readonly Processor[];
  /** The output-processor chain of a step's chunks (fenced: see `output-chain.ts`). */
  readonly chain: OperatorFunction<ChunkType, ChunkType>;
  /** The chain without its fence, and the fence (see `output-chain.ts`): the model phase fuses them. */
  readonly rawChain: OperatorFunction<ChunkType, ChunkType>;
  readonly admit: ((chunk: ChunkType) => boolean) | undefined;
  /**
   * `rawChain` as a pass fed by function calls (`OutputChain.open`; undefined: no hook): the step's
   * model output is one fused subscriber (read, convert, chain, fence, accumulate).
   */
  readonly openChain: (sink: OutputSink) => OutputStreamPass | undefined;
  /** Tool calls the model emitted in the current step (undefined when no hook can rewrite chunks). */
  readonly requestedToolCalls: Map<string, string> | undefined;
  /** `writer.custom()` chunks written outside `processOutputStream`, drained into the step. */
  readonly outlet: CustomOutlet;
  readonly generateId: () => string;
  readonly now: () => Date;
  readonly threadId: string | undefined;
  readonly resourceId: string | undefined;
  readonly maxSteps: number;
  /** Whether client tool calls run in the step (the agent) or are left to the caller (the middleware). */
  readonly executesTools: boolean;
  /**
   * The `finish` chunk as the output processors returned it at the end of the last step's output
   * (see `endOfOutput`); it goes out last, carrying the run's result. Unset until then.
   */
  finish: ChunkType | undefined;
}
