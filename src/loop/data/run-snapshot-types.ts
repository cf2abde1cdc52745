/** The shapes of a run snapshot (see `run-snapshot.ts`). */
import type { SerializedMessageList } from '../../message-list/serialized-message-list.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import type { JsonValue } from '../../contract/json-codec.js';

/** The newest snapshot format this build reads and writes. */
export const RUN_SNAPSHOT_FORMAT = 1;

/**
 * Where a snapshotted run stands: the next attempt of a step, the tool phase of an attempt whose
 * model output was accepted (a `model` commit: the model is not called again), or its commit.
 */
export type RunPosition =
  | {
      /** The next attempt of a step. */
      readonly kind: 'step';
      /** The step's number. */
      readonly stepNumber: number;
    }
  | {
      /** The tool phase of an attempt whose model output was accepted. */
      readonly kind: 'tools';
      /** The step's number. */
      readonly stepNumber: number;
      /** The attempt's snapshot, as JSON. */
      readonly attempt: JsonValue;
    }
  | {
      /** The run's commit (its steps are over). */
      readonly kind: 'commit';
    };

/**
 * A run's state at a step boundary, as JSON (see the module comment).
 *
 * @example
 * ```ts
 * import type { RunSnapshot } from 'rxagent';
 * const saved: string = JSON.stringify(snapshot satisfies RunSnapshot);
 * ```
 */
export interface RunSnapshot {
  /** The snapshot format it was written in (`RUN_SNAPSHOT_FORMAT`). */
  readonly format: number;
  /** The run's id. */
  readonly runId: string;
  /** Where the run goes on from. */
  readonly next: RunPosition;
  /** The run's message list, serialized (its unsaved ids included). */
  readonly messageList: SerializedMessageList;
  /** The completed steps, as JSON (rejected attempts included). */
  readonly steps: JsonValue[];
  /** Processor-triggered (tripwire) retries so far. */
  readonly retryCount: number;
  /** `processAPIError` retries so far. */
  readonly apiErrorRetryCount: number;
  /** The reason of the attempt a tripwire retry rejected, for the next attempt's prompt (`null`: none). */
  readonly retryFeedback: string | null;
  /** Signals sent by hooks, waiting for the run's next model request, as JSON. */
  readonly pendingSignals: JsonValue[];
  /** The system messages every step starts from (untagged, after `processInput`). */
  readonly initialSystemMessages: CoreSystemMessage[];
  /** The `finish` the output processors returned at the end of the output (a run at its commit). */
  readonly finish: JsonValue | null;
  /** Each processor's `state`, by processor id. */
  readonly processorStates: Record<string, JsonValue>;
  /** What each output processor has seen of the stream (`streamParts`), when a chain ran. */
  readonly streamParts: JsonValue | null;
  /** `writer.custom()` chunks written outside `processOutputStream`, waiting for the next phase. */
  readonly customChunks: JsonValue[];
  /** The run's own request-context writes (over the caller's context) and deletes. */
  readonly requestContext: {
    /** The keys the run wrote, with their JSON values. */
    readonly values: Array<[string, JsonValue]>;
    /** The keys the run deleted. */
    readonly deleted: string[];
  };
}


