/** The memory seam between the Agent and a memory implementation (`rxagent/memory`). */
import type { MessageList } from '../message-list/message-list.js';
import type { Processor } from './processor-types.js';
import type { RequestContext } from './request-context.js';

/** Memory thread and resource of a call. */
export interface AgentMemoryCall {
  /** The thread: its id, or `{ id, title?, metadata? }`. */
  thread: string | {
    /** The id. */
    id: string;
    /** The title. */
    title?: string;
    /** Free-form metadata. */
    metadata?: Record<string, unknown>;
  };
  /** The resource (user) the thread belongs to. */
  resource: string;
  /** Load history but save nothing. */
  readOnly?: boolean;
}

/** What an agent's memory contributes to one call. */
export interface AgentMemoryProcessors {
  /** Run before the user's input processors (history loading). */
  input: Processor[];
  /** Run after the user's output processors (saving what the list finally holds). */
  output: Processor[];
  /**
   * Called when the run ends with a tripwire (no `processOutputResult` runs then), with the run's
   * list: memory decides what, if anything, to save. A rejection ends the run with an `error` chunk.
   */
  onTripwire?: (messageList: MessageList) => Promise<void>;
}

/**
 * The fence of a durable run's memory save: the run and the epoch of the owner saving. A store that
 * can check it (`PostgresStorage`) saves nothing when the run has another owner; `beforeCommit` is
 * awaited inside the save's transaction, right before it commits.
 *
 * @example
 * ```ts
 * import type { MemoryFence } from 'rxagent';
 * const fence: MemoryFence = { runId: 'run-1', epoch: 2 };
 * ```
 */
export interface MemoryFence {
  /** The durable run saving. */
  readonly runId: string;
  /** The epoch of the owner saving (the run's current one, or the save is refused). */
  readonly epoch: number;
  /** Awaited inside the save's transaction, right before it commits. */
  readonly beforeCommit?: () => Promise<void>;
  /**
   * Which run under `runId` is saving (`RunRecord.incarnation`, for a run whose commit ids carry
   * it): the save drops what an earlier owner's commit stored under that run's commit prefix only,
   * never what a run removed before it under the same id stored; and a store that checks the fence
   * refuses the save when the run under `runId` is another (created again, from epoch 0 again).
   * Absent: the prefix of the run id alone, and the epoch alone fences.
   */
  readonly incarnation?: string;
}

/** What an agent's memory gives a call: processors run before (input) and after (output) the user's. */
export interface AgentMemory {
  /** The memory processors of one run (history loaded before the user's input processors, saved after the output processors). */
  processorsFor(call: {
    /** The id of the conversation thread. */
    threadId: string;
    /** The id of the resource (user, tenant) that owns the thread. */
    resourceId: string;
    /** The thread: its id, or `{ id, title?, metadata? }`. */
    thread: AgentMemoryCall['thread'];
    /** Load history, save nothing. */
    readOnly: boolean;
    /** The run's `RequestContext`. */
    requestContext: RequestContext;
  }): AgentMemoryProcessors | Promise<AgentMemoryProcessors>;
}

