/**
 * A run snapshot read from outside (a journal row) checked before anything is restored from it:
 * the shape of every part `restoreRun` and the loop read — fields present with their JSON kinds,
 * counters and step numbers whole and not negative, dates readable, the position one this build
 * knows and within the steps it has. Loose where the snapshot keeps what others own (extra fields,
 * part types of messages, processor states): those pass as they are. A snapshot that fails is a
 * `RunSnapshotError` naming the first path that is wrong (`$.steps[0].usage`).
 */
import { z } from 'zod';
import { MAX_JSON_DEPTH } from '../../contract/json-codec.js';
import { dbMessageSchema } from '../../message-list/schemas/db-message-schema.js';
import { systemModelMessageSchema } from '../../message-list/schemas/model-message-schema.js';
import { RunSnapshotError } from './run-snapshot-error.js';
import { RUN_SNAPSHOT_FORMAT, type RunSnapshot } from './run-snapshot-types.js';

/** A step number, a count or an index: whole and not negative. */
const count = z.number().int().nonnegative();
/** A date as the codec writes it (an ISO string). */
const isoDate = z.string().refine((text) => !Number.isNaN(Date.parse(text)), 'expected a date string');
const chunk = z.looseObject({ type: z.string().min(1) });
const usage = z.looseObject({ inputTokenDetails: z.looseObject({}).optional(), outputTokenDetails: z.looseObject({}).optional() });
const toolCall = z.looseObject({ toolCallId: z.string(), toolName: z.string() });

const step = z.looseObject({
  stepNumber: count,
  text: z.string(),
  toolCalls: z.array(toolCall),
  toolResults: z.array(toolCall),
  finishReason: z.string(),
  usage,
  response: z.looseObject({ timestamp: isoDate.optional(), messageId: z.string().optional() }).optional(),
});

/** A stored message as `MessageList.serialize` writes it (its parts of the types the list knows, `createdAt` an ISO string). */
const message = dbMessageSchema.and(z.looseObject({ createdAt: isoDate }));

const messageList = z.looseObject({
  version: z.literal(1),
  threadId: z.string().optional(),
  resourceId: z.string().optional(),
  messages: z.array(z.looseObject({ source: z.enum(['input', 'response', 'memory']), message })),
  systemMessages: z.array(systemModelMessageSchema),
  taggedSystemMessages: z.array(z.looseObject({ tag: z.string(), messages: z.array(systemModelMessageSchema) })),
  unsavedIds: z.array(z.string()),
}).superRefine((list, context) => {
  list.messages.forEach(({ message: stored }, index) => {
    for (const key of ['threadId', 'resourceId'] as const) {
      if (list[key] !== undefined && stored[key] !== undefined && stored[key] !== list[key]) {
        context.addIssue({ code: 'custom', path: ['messages', index, 'message', key], message: `the message's ${key} ${JSON.stringify(stored[key])} is not the list's (${JSON.stringify(list[key])})` });
      }
    }
  });
});

const attempt = z.looseObject({
  stepNumber: count,
  messageId: z.string(),
  boundary: z.looseObject({ responseMessageIds: z.array(z.string()), lastAssistantPartCount: count }),
  recorded: count,
  facts: z.looseObject({ usage, response: z.looseObject({ timestamp: isoDate.optional() }) }),
  toolNames: z.array(z.string()).nullable(),
  requestedToolCalls: z.array(z.tuple([z.string(), z.string()])),
});

const position = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('step'), stepNumber: count }),
  z.looseObject({ kind: z.literal('tools'), stepNumber: count, attempt }),
  z.looseObject({ kind: z.literal('commit') }),
]);

const signal = z.looseObject({
  id: z.string(),
  type: z.enum(['reactive', 'user', 'notification', 'state']),
  tagName: z.string(),
  contents: z.string(),
  createdAt: isoDate,
});

const finish = z.looseObject({
  type: z.literal('finish'),
  payload: z.looseObject({ stepResult: z.looseObject({ reason: z.string() }), output: z.looseObject({ usage, text: z.string() }) }),
});

const streamParts = z
  .looseObject({ processors: z.array(z.string()), entered: z.array(chunk), own: z.array(z.array(chunk).nullable()) })
  .refine((logs) => logs.own.length === logs.processors.length, { message: 'expected one own log per processor', path: ['own'] });

const snapshotSchema = z
  .looseObject({
    format: z.literal(RUN_SNAPSHOT_FORMAT),
    runId: z.string().min(1),
    next: position,
    messageList,
    steps: z.array(step),
    retryCount: count,
    apiErrorRetryCount: count,
    retryFeedback: z.string().nullable(),
    pendingSignals: z.array(signal),
    initialSystemMessages: z.array(systemModelMessageSchema),
    finish: finish.nullable(),
    processorStates: z.record(z.string(), z.unknown()),
    streamParts: streamParts.nullable(),
    customChunks: z.array(z.looseObject({ type: z.string().startsWith('data-') })),
    requestContext: z.looseObject({ values: z.array(z.tuple([z.string(), z.unknown()])), deleted: z.array(z.string()) }),
  })
  .superRefine((snapshot, context) => {
    const { next, steps } = snapshot;
    if (next.kind === 'step' && next.stepNumber > steps.length) {
      context.addIssue({ code: 'custom', path: ['next', 'stepNumber'], message: `step ${next.stepNumber} is past the ${steps.length} steps the snapshot has` });
    }
    if (next.kind === 'tools' && next.attempt.recorded >= steps.length) {
      context.addIssue({ code: 'custom', path: ['next', 'attempt', 'recorded'], message: `step result ${next.attempt.recorded} is past the ${steps.length} steps the snapshot has` });
    }
    if (next.kind === 'tools' && next.attempt.stepNumber !== next.stepNumber) {
      context.addIssue({ code: 'custom', path: ['next', 'attempt', 'stepNumber'], message: `the attempt is of step ${next.attempt.stepNumber}, the position of step ${next.stepNumber}` });
    }
  });

/**
 * The path of the first value nested deeper than `limit` in `value` (iterative: any depth), if any.
 * The codec writes no value deeper than `MAX_JSON_DEPTH`, so a snapshot holds none much deeper.
 */
function tooDeep(value: unknown, limit: number): PropertyKey[] | undefined {
  // each node knows its parent: the path is made only for the value that is too deep
  interface Node {
    readonly item: unknown;
    readonly depth: number;
    readonly key: PropertyKey;
    readonly parent: Node | undefined;
  }
  const stack: Node[] = [{ item: value, depth: 0, key: '', parent: undefined }];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    const { item, depth } = node;
    if (item === null || typeof item !== 'object') continue;
    if (depth > limit) {
      const path: PropertyKey[] = [];
      for (let at: Node | undefined = node; at?.parent !== undefined; at = at.parent) path.unshift(at.key);
      return path;
    }
    const array = Array.isArray(item);
    for (const key in item) {
      if (Object.hasOwn(item, key)) stack.push({ item: (item as Record<string, unknown>)[key], depth: depth + 1, key: array ? Number(key) : key, parent: node });
    }
  }
  return undefined;
}

/** A JSONPath of zod's path (`$.steps[0]["a b"]`). */
function jsonPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    const name = String(key);
    return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `${text}.${name}` : `${text}[${JSON.stringify(name)}]`;
  }, '$');
}

/** The error of a snapshot malformed at `path` (zod's path, or the keys of one). */
export function malformed(path: readonly PropertyKey[], problem: string, cause?: unknown): RunSnapshotError {
  return new RunSnapshotError({ message: `The run snapshot is malformed at ${jsonPath(path)}: ${problem}`, cause });
}

/**
 * Checks `snapshot` (read from outside) has the shape of a `RunSnapshot` of this build's format;
 * else a `RunSnapshotError` naming the path that is wrong. A newer format is refused first.
 */
export function checkRunSnapshot(snapshot: unknown): asserts snapshot is RunSnapshot {
  const format: unknown = typeof snapshot === 'object' && snapshot !== null ? (snapshot as { format?: unknown }).format : undefined;
  if (typeof format === 'number' && format > RUN_SNAPSHOT_FORMAT) {
    throw new RunSnapshotError({ message: `This run snapshot has format ${format}; this build reads formats up to ${RUN_SNAPSHOT_FORMAT}.` });
  }
  // the snapshot's own nesting around the values the codec wrote
  const deep = tooDeep(snapshot, MAX_JSON_DEPTH + 8);
  if (deep !== undefined) throw malformed(deep.slice(0, 6), `nested deeper than the codec writes (${MAX_JSON_DEPTH})`);
  const checked = snapshotSchema.safeParse(snapshot);
  if (checked.success) return;
  const issue = checked.error.issues[0];
  throw malformed(issue?.path ?? [], issue?.message ?? 'not a run snapshot', checked.error);
}
