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
  | { readonly kind: 'step'; readonly stepNumber: number }
  | { readonly kind: 'tools'; readonly stepNumber: number; readonly attempt: JsonValue }
  | { readonly kind: 'commit' };

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
  readonly format: number;
  readonly runId: string;
  readonly next: RunPosition;
  readonly messageList: SerializedMessageList;
  readonly steps: JsonValue[];
  readonly retryCount: number;
  readonly apiErrorRetryCount: number;
  readonly retryFeedback: string | null;
  readonly pendingSignals: JsonValue[];
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
  readonly requestContext: { readonly values: Array<[string, JsonValue]>; readonly deleted: string[] };
}


