/**
 * The runs behind `checkProcessor`: one conversation driven live (recording a snapshot at every
 * commit point), live again, with each step's first attempt rejected and retried, restored from
 * each snapshot into a fresh run (`RunDurability.restore`, what a durable worker does), and taken
 * over after a simulated crash at each commit or flush of a durable worker's run (the real worker
 * on an `InMemoryRunJournal`, its queue played in process). Each run yields what a user sees — the
 * chunks a client keeps and the messages memory saved, as lines — and the processor's `state` at
 * each commit point.
 */
import { lastValueFrom, tap, toArray } from 'rxjs';
import type { ChunkType, JsonValue, Processor } from '../../contract/index.js';
import { createRunWorker, InMemoryRunJournal, type RunFaultPoint, type RunWorker } from '../../durable/index.js';
import { DurableStateError, isChunk, isCommitPoint, runAgent, type RunCommitPoint, type RunSnapshot } from '../../loop/index.js';
import { InMemoryStorage } from '../../memory/index.js';
import type { MockModel } from '../mock-model.js';
import {
  CONFORMANCE_AGENT_ID,
  CONFORMANCE_CALL,
  IdSequence,
  conversationAgent,
  type ProcessorLists,

} from './conversation-agent.js';
import type { Conversation as ScriptedConversation } from '../conformance-types.js';
import { conversationModel } from './conversation-model.js';
import { InProcessQueue } from './in-process-queue.js';
import { chunkLines, messageLines } from './visible-output.js';

/** The processor under test, and how to get an instance for a run. */
export interface Subject {
  readonly processorId: string;
  /** An instance for a run on `model` (a fresh one per run when the user gave a factory). */
  readonly make: (model: MockModel) => Processor;
  readonly lists: ProcessorLists;
  readonly maxProcessorRetries: number;
}

/** A commit point of the recording run. */
export interface RecordedPoint {
  readonly kind: RunCommitPoint['kind'];
  readonly stepNumber: number;
  readonly attempt: number;
  /** Chunks out when the point was reached. */
  readonly at: number;
  /** The id counter then. */
  readonly idNext: number;
  /** The run's snapshot through JSON (as another process gets it); absent when it failed. */
  readonly snapshot?: RunSnapshot;
  /** The processor's state in the snapshot (`undefined`: none yet, or not saved). */
  readonly state?: JsonValue;
  /** Why the snapshot failed. */
  readonly error?: unknown;
}

/** What one run showed. */
export interface RunView {
  readonly chunks: ChunkType[];
  readonly chunkLines: string[];
  readonly messageLines: string[];
  readonly points: RecordedPoint[];
  /** The processor's own fields before and after the run, where they changed (field → [before, after]). */
  readonly changedFields: Array<{ field: string; before: string; after: string }>;
}

/** Whether `value` is data the check looks into (an array, a Map, a Set, a plain object), not a class instance. */
function isPlainData(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return Array.isArray(value) || value instanceof Map || value instanceof Set || prototype === Object.prototype || prototype === null;
}

/**
 * A printable value of a field, two levels deep (a counter, a list, a Map of entries; what sits
 * deeper — a model given in the options, with its own call log — is printed as `{…}`), or
 * `undefined` for a class instance or a function (not inspected).
 */
function printField(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? String(value);
  if (!isPlainData(value)) return undefined;
  if (depth >= 2) return '{…}';
  const inner = (item: unknown): string => printField(item, depth + 1) ?? '{…}';
  if (Array.isArray(value)) return `[${value.map(inner).join(',')}]`;
  if (value instanceof Map) return `Map{${[...value.entries()].map(([key, item]) => `${inner(key)}=>${inner(item)}`).join(',')}}`;
  if (value instanceof Set) return `Set{${[...value].map(inner).join(',')}}`;
  return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${inner(item)}`).join(',')}}`;
}

/** The processor's own enumerable data fields, printed (`processorIndex` is the runtime's to set). */
function fieldsOf(processor: Processor): Map<string, string> {
  const fields = new Map<string, string>();
  for (const [name, value] of Object.entries(processor)) {
    if (name === 'processorIndex') continue;
    const printed = printField(value);
    if (printed !== undefined) fields.set(name, printed);
  }
  return fields;
}

function changedFields(before: Map<string, string>, after: Map<string, string>): RunView['changedFields'] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].flatMap((field) => (before.get(field) === after.get(field) ? [] : [{ field, before: before.get(field) ?? '(none)', after: after.get(field) ?? '(none)' }]));
}

/** The processor's state in a snapshot. */
function stateIn(snapshot: RunSnapshot, processorId: string): JsonValue | undefined {
  return snapshot.processorStates[processorId];
}

/** One run on the loop (live, retried or restored): its chunks, memory's messages, its commit points. */
async function loopRun(
  subject: Subject,
  conversation: ScriptedConversation,
  options: { record: boolean; restore?: RecordedPoint; outputTail?: Processor[]; errorTail?: Processor[]; failOnce?: boolean },
): Promise<RunView> {
  const model = conversationModel(conversation, { failOnce: options.failOnce === true });
  const processor = subject.make(model);
  const storage = new InMemoryStorage();
  const ids = new IdSequence(options.restore?.idNext ?? 0);
  const agent = conversationAgent({ conversation, processor, lists: subject.lists, model, storage, ids, maxProcessorRetries: subject.maxProcessorRetries, outputTail: options.outputTail ?? [], errorTail: options.errorTail ?? [] });
  const chunks: ChunkType[] = [];
  const points: RecordedPoint[] = [];
  const recordPoint = (point: RunCommitPoint): void => {
    const base = { kind: point.kind, stepNumber: point.stepNumber, attempt: point.rejectedAttempts, at: chunks.length, idNext: ids.next };
    if (point.failed !== undefined) points.push({ ...base, error: point.failed.error });
    else {
      const snapshot = JSON.parse(JSON.stringify(point.snapshot)) as RunSnapshot;
      points.push({ ...base, snapshot, state: stateIn(snapshot, subject.processorId) });
    }
  };
  const before = fieldsOf(processor);
  await lastValueFrom(
    runAgent(agent, conversation.input, { ...CONFORMANCE_CALL }, {
      ...(options.record || options.restore !== undefined ? { commitPoints: true } : {}),
      ...(options.restore?.snapshot === undefined ? {} : { restore: options.restore.snapshot }),
    }).pipe(
      tap((item) => {
        if (isChunk(item)) chunks.push(item);
        else if (isCommitPoint(item)) recordPoint(item);
      }),
      toArray(),
    ),
  );
  if (options.record && points.some((point) => point.error !== undefined)) {
    // a snapshot failed and ended the recording there (a durable run cannot commit): the run's
    // chunks and messages are a plain run's, the points are the recording's
    return { ...(await loopRun(subject, conversation, { ...options, record: false })), points };
  }
  const messages = await storage.getMessages({ threadId: CONFORMANCE_CALL.memory.thread });
  return { chunks, chunkLines: chunkLines(chunks), messageLines: messageLines(messages), points, changedFields: changedFields(before, fieldsOf(processor)) };
}

/** The recording run: live, with a snapshot taken at every commit point. */
export function recordedRun(subject: Subject, conversation: ScriptedConversation): Promise<RunView> {
  return loopRun(subject, conversation, { record: true });
}

/** A plain live run (no checkpoint), as a user's app runs the agent. */
export function liveRun(subject: Subject, conversation: ScriptedConversation): Promise<RunView> {
  return loopRun(subject, conversation, { record: false });
}

/** The processor that rejects each step's first attempt (`abort(…, { retry: true })` in `processOutputStep`). */
function rejecter(): Processor {
  return {
    id: 'rxagent-conformance-rejecter',
    processOutputStep: ({ state, abort }) => {
      const accepted = (state['accepted'] as number | undefined) ?? 0;
      const rejected = (state['rejected'] as number[] | undefined) ?? [];
      if (!rejected.includes(accepted)) {
        state['rejected'] = [...rejected, accepted];
        abort('The conformance check rejects every step once: answer again.', { retry: true });
      }
      state['accepted'] = accepted + 1;
    },
  };
}

/** The run with each step's first attempt rejected after the processor's post-model hooks ran, then retried. */
export function retriedRun(subject: Subject, conversation: ScriptedConversation): Promise<RunView> {
  return loopRun({ ...subject, maxProcessorRetries: subject.maxProcessorRetries + conversation.steps.length }, conversation, { record: false, outputTail: [rejecter()] });
}

/** Retries every provider error (`processAPIError`), for the run whose model fails once per step. */
function apiErrorRetrier(): Processor {
  return { id: 'rxagent-conformance-api-retry', processAPIError: () => ({ retry: true }) };
}

/** The run whose model call fails mid-stream once per step, retried (`processAPIError` → `{ retry: true }`). */
export function failedCallRun(subject: Subject, conversation: ScriptedConversation): Promise<RunView> {
  return loopRun({ ...subject, maxProcessorRetries: subject.maxProcessorRetries + conversation.steps.length }, conversation, { record: false, errorTail: [apiErrorRetrier()], failOnce: true });
}

/** A fresh run restored from a recorded point's snapshot, recording its own points. */
export function restoredRun(subject: Subject, conversation: ScriptedConversation, point: RecordedPoint): Promise<RunView> {
  return loopRun(subject, conversation, { record: true, restore: point });
}

/** The worker's points a simulated crash can stop a run at. */
const CRASH_POINTS: ReadonlySet<RunFaultPoint> = new Set(['chunks-flushed', 'model-committed', 'tool-returned', 'step-committed', 'retry-committed', 'finalizing']);

/** Where the second owner's ids and clock start (far past any the first owner reaches). */
const SUCCESSOR_IDS = 100_000;

/** A run taken over: where its first owner crashed, and what the run showed in the end. */
export interface TakeoverView extends RunView {
  readonly crashedAt: string;
}

/** Thrown at a fault point: the first owner stops there, as a crash would. */
class SimulatedCrash extends Error {
  constructor(readonly where: string) {
    super(`simulated crash at ${where}`);
    this.name = 'SimulatedCrash';
  }
}

/**
 * A durable run whose first owner crashes at the `crashIndex`-th point of {@link CRASH_POINTS}
 * (counted across the run) and whose job is then taken over by a second worker with a fresh agent
 * (a fresh processor, when the user gave a factory): `undefined` when the run has fewer points.
 */
export async function takenOverRun(subject: Subject, conversation: ScriptedConversation, crashIndex: number): Promise<TakeoverView | undefined> {
  const journal = new InMemoryRunJournal();
  const storage = new InMemoryStorage({ runJournal: journal });
  const queue = new InProcessQueue();
  const workers: RunWorker[] = [];
  let seen = 0;
  let crashedAt: string | undefined;
  const worker = (name: string, faulty: boolean): RunWorker => {
    const model = conversationModel(conversation);
    // another process: ids of its own (never one the first owner handed out), a clock that went on
    const ids = new IdSequence(faulty ? 0 : SUCCESSOR_IDS);
    const agent = conversationAgent({ conversation, processor: subject.make(model), lists: subject.lists, model, storage, ids, maxProcessorRetries: subject.maxProcessorRetries });
    const created = createRunWorker({
      journal,
      boss: queue,
      agents: [agent],
      concurrency: 1,
      workerId: name,
      ...(faulty
        ? {
            faultPoint: (point: RunFaultPoint, info: { epoch: number; stepNumber?: number; flush?: number; toolCallId?: string }) => {
              if (info.epoch !== 1 || !CRASH_POINTS.has(point) || seen++ !== crashIndex) return;
              crashedAt = `${point}${info.stepNumber === undefined ? '' : ` in step ${info.stepNumber}`}${info.flush === undefined ? '' : ` (flush ${info.flush})`}${info.toolCallId === undefined ? '' : ` (${info.toolCallId})`}`;
              throw new SimulatedCrash(crashedAt);
            },
          }
        : {}),
    });
    workers.push(created);
    return created;
  };
  try {
    const owner = worker('conformance-owner', true);
    await owner.start();
    await owner.submit(CONFORMANCE_AGENT_ID, conversation.input, { ...CONFORMANCE_CALL });
    const first = await queue.deliver(CONFORMANCE_CALL.runId);
    if (crashedAt === undefined) return undefined;
    if (first.outcome === 'completed') throw new Error(`conformance: the run went on after its simulated crash at ${crashedAt}`);
    await owner.close();
    const successor = worker('conformance-successor', false);
    await successor.start();
    const second = await queue.deliver(CONFORMANCE_CALL.runId);
    if (second.outcome === 'failed') throw second.error;
    const entries = await lastValueFrom(journal.read$(CONFORMANCE_CALL.runId, { live: false }).pipe(toArray()));
    const chunks = entries.map((entry) => entry.chunk);
    const messages = await storage.getMessages({ threadId: CONFORMANCE_CALL.memory.thread });
    return { crashedAt, chunks, chunkLines: chunkLines(chunks), messageLines: messageLines(messages), points: [], changedFields: [] };
  } finally {
    for (const created of workers) await created.close().catch(() => undefined);
    await journal.close();
  }
}

/** Where a snapshot failed because the processor's state is not JSON: the path and type, or `undefined`. */
export function notJsonAt(point: RecordedPoint, processorId: string): { path: string; type: string } | undefined {
  const error = point.error;
  if (!DurableStateError.isInstance(error)) return undefined;
  const { processorId: failing, path, type } = error as DurableStateError & { processorId: string; path: string; type: string };
  return failing === processorId ? { path, type } : undefined;
}
