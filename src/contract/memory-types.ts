/** The memory seam between the Agent and a memory implementation (`rxagent/memory`). */
import type { MessageList } from '../message-list/message-list.js';
import type { Processor } from './processor-types.js';
import type { RequestContext } from './request-context.js';

/** Memory thread and resource of a call. */
export interface AgentMemoryCall {
  thread: string | { id: string; title?: string; metadata?: Record<string, unknown> };
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

/** What an agent's memory gives a call: processors run before (input) and after (output) the user's. */
export interface AgentMemory {
  processorsFor(call: {
    threadId: string;
    resourceId: string;
    thread: AgentMemoryCall['thread'];
    readOnly: boolean;
    requestContext: RequestContext;
  }): AgentMemoryProcessors | Promise<AgentMemoryProcessors>;
}

