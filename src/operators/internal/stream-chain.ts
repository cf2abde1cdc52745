/**
 * The per-chunk processor chain of `processOutputStream`, built once per run: one reusable args
 * object per processor (only `part` and `retryCount` change per chunk), no promise unless a hook
 * returned one, `data-*` chunks only to processors that opted in.
 *
 * `streamParts` (the parts a processor has seen, as they entered it, the current one included)
 * costs one log append per chunk whatever the number of processors: all processors share one log
 * of the chunks entering the chain for as long as each has seen exactly those chunks (the common
 * case: pass-through processors, no `data-*` chunks). A processor that has seen something else —
 * a chunk an earlier processor replaced, dropped or injected, a `data-*` chunk it does not take —
 * gets its own copy from then on. The logs are {@link ChunkLog}s: compact (a plain text delta is
 * kept as its text) until a processor reads `args.streamParts` (an accessor), which makes the real
 * array once; from then on that array is appended to, as before. A processor reads it through a
 * read-only view of its own (contract/stream-parts-view.ts, made on its first read): writing to the shared
 * log would blind the processors after it. The logs are the run's state
 * (`StreamPartsState`, stream-parts.ts): the chain takes its entry from the state when it is made
 * (a restored run's logs, or fresh ones it puts there) and appends to those very logs.
 */
import type { ChunkType, DataChunkType } from '../../contract/chunk-types.js';
import type { ChunkLog } from '../../contract/chunk-log.js';
import { ProcessorError } from '../../contract/errors/processor-error.js';
import type { AbortFunction, Processor, ProcessOutputStreamArgs } from '../../contract/processor-types.js';
import type { ProcessorStreamWriter } from '../../contract/stream-writer.js';
import { FOLLOW_UP_CHUNKS_KEY, REPROCESS_PART_KEY } from '../../contract/stream-follow-up.js';
import type { RunContext } from '../run-context.js';
import { ownDataChunk } from '../run-context.js';
import { bindingsWith, contextFieldsWithoutAbortAndWriter } from './hook-args.js';
import { invokeStreamHook, RETYPED_IN_PLACE, settleStreamHook, streamHookError } from './invoke-hook.js';
import { isObservable, type Observable } from 'rxjs';
import { isPromiseLike, thenMaybe, toMaybePromise, type MaybeAsync } from '../../contract/maybe-async.js';
import { assertChunkPayload } from './result-shapes.js';
import { withRunId } from '../../contract/make-chunk.js';
import { hookResultError } from '../../contract/processor-checks.js';
import type { ProcessorBinding } from './processor-binding.js';
import type { ChunkInjector, PassResult, StreamChain, SuspendedPass } from './stream-chain-types.js';
import { newStreamParts, streamPartsMismatch, type StreamPartsState } from '../stream-parts.js';
import { runMachineryOf } from './run-machinery.js';
import { TextDropWatch } from './text-drop-watch.js';
import { readOnlyStreamParts } from '../../contract/stream-parts-view.js';

export type { InjectedChunk, PassResult, StreamChain, SuspendedPass } from './stream-chain-types.js';

interface Link {
  binding: ProcessorBinding;
  args: ProcessOutputStreamArgs;
  /** The log of the chunks entering the chain (this processor's `streamParts` while it is in step with it). */
  readonly shared: ChunkLog;
  /** This processor's own `streamParts`, once it saw something other than the shared log. */
  own: ChunkLog | undefined;
  /** The read-only view `args.streamParts` gives, and the log array it views (made on first read, again once the processor has its own log). */
  view: ChunkType[] | undefined;
  viewOf: ChunkType[] | undefined;
  acceptsData: boolean;
  /** Where chunks this processor writes with `writer.custom()` re-enter the chain. */
  readonly injector: ChunkInjector;
  readonly from: number;
  /** `args.writer`, made on first read. */
  writer: ProcessorStreamWriter | undefined;
  /** The run's id: what the chunks this processor writes carry, when the chunk it is checking has none. */
  readonly runId: string;
  /** The run's signal (aborted when the run ends): a write after it is dropped unread. */
  readonly runSignal: AbortSignal;
}

/** Where a hook's args object finds its link (not enumerable: a copy of the args does not carry it). */
const LINK: unique symbol = Symbol('rxagent.streamLink');

type LinkedArgs = ProcessOutputStreamArgs & { [LINK]: Link };

/** A value a hook assigns to one of the accessors below: kept as a plain property from then on. */
function assign(args: LinkedArgs, key: 'streamParts' | 'abort' | 'writer', value: unknown): void {
  Object.defineProperty(args, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * The args fields made on first read, one accessor each for every args object (`this` is the
 * args), not closures per processor per run: `streamParts` (the link's log as an array, see the
 * module comment), `abort` and `writer` (most processors never touch them).
 */
const linkedProperties: PropertyDescriptorMap = {
  streamParts: {
    get(this: LinkedArgs): ChunkType[] {
      const link = this[LINK];
      const log = (link.own ?? link.shared).toArray();
      if (link.viewOf !== log) {
        // a view per processor, not the log: a write to it cannot blind the processors after it
        link.view = readOnlyStreamParts(log, link.binding.processor.id);
        link.viewOf = log;
      }
      return link.view as ChunkType[];
    },
    set(this: LinkedArgs, value: ChunkType[]) {
      assign(this, 'streamParts', value);
    },
    enumerable: true,
    configurable: true,
  },
  abort: {
    get(this: LinkedArgs): AbortFunction {
      return this[LINK].binding.abortFor('processOutputStream');
    },
    set(this: LinkedArgs, value: AbortFunction) {
      assign(this, 'abort', value);
    },
    enumerable: true,
    configurable: true,
  },
  writer: {
    get(this: LinkedArgs): ProcessorStreamWriter {
      const link = this[LINK];
      if (link.writer === undefined) {
        const { injector, from, runId, runSignal } = link;
        const args = this;
        link.writer = {
          custom(chunk: DataChunkType): Promise<void> {
            // after the run ended (a timer, an unawaited promise): dropped unread, never thrown at nobody
            if (runSignal.aborted) return Promise.resolve();
            // the run of the chunk the hook is checking (in the loop: the run's id)
            injector.inject({ chunk: withRunId(ownDataChunk(chunk), args.part?.runId ?? runId), from });
            return Promise.resolve();
          },
        };
      }
      return link.writer;
    },
    set(this: LinkedArgs, value: ProcessorStreamWriter) {
      assign(this, 'writer', value);
    },
    enumerable: true,
    configurable: true,
  },
};

/** The stream's own brackets: processors see them and may rewrite them, but not drop them. */
const LIFECYCLE_TYPES = new Set<string>(['step-start', 'step-finish', 'finish']);

/**
 * What a hook's return means for the chain: the chunk to go on with, or `null` (dropped). `null`
 * for a lifecycle chunk keeps it unchanged (a run always has its `step-finish` and `finish`); a
 * return that is not a chunk object is a `ProcessorError`, so the chunk it was checking does not
 * pass (fail closed). A chunk the hook made belongs to the run of the chunk it got (`current`): another run's id on it is
 * replaced (in the loop every chunk entering the chain carries the run's id).
 */
function hookOutcome(result: unknown, current: ChunkType, binding: ProcessorBinding): ChunkType | null {
  try {
    // (a dropped part's type read here too: the hook may have made it unreadable)
    if (result === null || result === undefined) return LIFECYCLE_TYPES.has(current.type) ? current : null;
    return withRunId(checkedChunk(result === RETYPED_IN_PLACE ? current : result, binding), current.runId);
  } catch (error) {
    // a chunk nobody can read (a Proxy that throws, a throwing getter) is a ProcessorError too
    throw hookResultError(binding.processor.id, 'processOutputStream', error);
  }
}

/** `result` (not null) as the chunk to go on with, or a `ProcessorError` saying why it is none. */
function checkedChunk(result: unknown, binding: ProcessorBinding): ChunkType {
  if (typeof result !== 'object' || typeof (result as { type?: unknown }).type !== 'string') {
    throw new ProcessorError(
      binding.processor.id,
      'processOutputStream',
      `returned ${Array.isArray(result) ? 'an array' : typeof result}; expected a chunk ({ type, … }), null or undefined.`,
    );
  }
  // A chunk the processor made (not the one it got): its payload must be usable — a text delta
  // without text would otherwise add "undefined" to the reply.
  assertChunkPayload(result as ChunkType, { processorId: binding.processor.id, hook: 'processOutputStream' });
  return result as ChunkType;
}

function isData(chunk: ChunkType): boolean {
  return chunk.type.charCodeAt(0) === 100 && chunk.type.startsWith('data-');
}

/**
 * Whether a chunk of `type` a hook hands back as the very object it got is checked again: a `tool-*`
 * chunk's ids and name bind it to its call, and an edit in place (`part.payload.toolCallId = 42`)
 * would unbind it as a new object would. Any other chunk handed back as it is passes unchecked (one
 * character test per pass: `text-…` and `reasoning-…` fail it at once).
 */
function checkedInPlace(type: string): boolean {
  return type.charCodeAt(1) === 111 && type.startsWith('tool-');
}

/** An empty chain has no hook to stop at: nothing to resume. */
function neverSuspended(): never {
  throw new TypeError('rxagent: a chain without processors has no pass to resume');
}

/** The chain of a run whose processors have no `processOutputStream`: every chunk goes on as it is. */
const emptyChain: StreamChain = { length: 0, run: (chunk) => chunk, resume: neverSuspended, rejected: neverSuspended };

/**
 * The `streamParts` entry of the run's next chain in the run's state: the one a restored state
 * holds (its processors must be the chain's), else fresh logs put there.
 */
function streamPartsFor(context: RunContext, processors: readonly string[]): StreamPartsState {
  const machinery = runMachineryOf(context);
  const all = (machinery.state.streamParts ??= []);
  const index = machinery.loggedChains++;
  const held = all[index];
  if (held === undefined) return (all[index] = newStreamParts(processors));
  if (held.processors.length !== processors.length || held.processors.some((id, at) => id !== processors[at])) {
    throw new TypeError(streamPartsMismatch(held.processors, processors));
  }
  return held;
}

/**
 * Builds the chain for `processors`. `injector` receives chunks the processors write with
 * `writer.custom()` (each to re-enter the chain after the processor that wrote it).
 */
export function createStreamChain(processors: readonly Processor[], context: RunContext, injector: ChunkInjector): StreamChain {
  const bindings = bindingsWith(processors, context, 'processOutputStream');
  // no processOutputStream hook (the common run without output processors): none of the machinery below
  if (bindings.length === 0) return emptyChain;
  const parts = streamPartsFor(context, bindings.map((binding) => binding.processor.id));
  const links: Link[] = bindings.map((binding, index) => {
    // `streamParts`, `abort` and `writer` are added as new accessors (redefining a data property
    // would turn the object into a dictionary)
    const args = {
      ...contextFieldsWithoutAbortAndWriter(context, binding),
      part: undefined as unknown as ChunkType,
      messageList: context.messageList,
    } as ProcessOutputStreamArgs;
    Object.defineProperties(args, linkedProperties);
    const link: Link = {
      binding,
      args,
      shared: parts.entered,
      own: parts.own[index],
      view: undefined,
      viewOf: undefined,
      acceptsData: binding.processor.processDataParts === true,
      injector,
      from: index + 1,
      writer: undefined,
      runId: context.runId,
      runSignal: context.abortSignal,
    };
    Object.defineProperty(args, LINK, { value: link });
    return link;
  });
  return new Chain(links, parts, context, injector);
}

/**
 * Where a pass stopped at a hook's promise: the hook's link, the chunk it checks (and its type when
 * the hook got it), the chunk that entered the pass.
 */
class Suspension implements SuspendedPass {
  constructor(
    readonly pending: PromiseLike<unknown>,
    readonly checking: ChunkType,
    readonly index: number,
    readonly entered: ChunkType | null,
    readonly type: string,
  ) {}
}

/** Whether a pass stopped at a hook's promise (see {@link StreamChain.run}). */
export function isSuspendedPass(result: PassResult): result is SuspendedPass {
  return result instanceof Suspension;
}

/** The chain's passes. */
class Chain implements StreamChain {
  readonly length: number;
  readonly #tracingContext: RunContext['tracingContext'];
  /** Warns when the run's text is dropped whole (text-drop-watch.ts). */
  readonly #textWatch = new TextDropWatch();
  /** The chunks that entered the chain at its start, in order: the `streamParts` of every processor in step with it. */
  private readonly log: ChunkLog;

  constructor(
    private readonly links: readonly Link[],
    /** The chain's logs in the run's state (a processor's own log, once made, is put there too). */
    private readonly parts: StreamPartsState,
    private readonly context: RunContext,
    private readonly injector: ChunkInjector,
  ) {
    this.length = links.length;
    this.log = parts.entered;
    this.#tracingContext = context.tracingContext;
  }

  run(chunk: ChunkType, from = 0): PassResult {
    if (from !== 0) return this.#watched(this.pass(chunk, from, null));
    this.log.push(chunk);
    this.#textWatch.entered(chunk);
    return this.#watched(this.pass(chunk, 0, chunk));
  }

  resume(suspended: SuspendedPass, resolved: unknown): PassResult {
    return this.#watched(this.#resume(suspended as Suspension, resolved));
  }

  rejected(suspended: SuspendedPass, thrown: unknown): Error {
    return streamHookError(this.#bindingAt((suspended as Suspension).index), thrown);
  }

  /** A pass's end result to the text watch (a suspended pass reaches it once resumed to its end). */
  #watched(result: PassResult): PassResult {
    return isSuspendedPass(result) ? result : this.#textWatch.out(result);
  }

  #bindingAt(index: number): ProcessorBinding {
    return (this.links[index] as Link).binding;
  }

  /** The hook a pass stopped at resolved with `resolved`: its outcome, then the processors after it. */
  #resume({ index, checking, entered, type }: Suspension, resolved: unknown): PassResult {
    const binding = this.#bindingAt(index);
    // (the part it got, resolved with another type: RETYPED_IN_PLACE)
    const settled = settleStreamHook(binding, resolved, checking, type);
    this.drainFollowUps(binding.state, index, checking);
    // the part it got, passed on as it was (as in `pass`): nothing to check
    const next = settled === checking && !checkedInPlace(type) ? checking : hookOutcome(settled, checking, binding);
    return next === null ? this.dropped(index, entered, checking) : this.pass(next, index + 1, entered);
  }

  /**
   * Gives `link` its own `streamParts`: what it has seen so far is the log, minus the chunk now
   * entering (`entered`, already logged) which it does not see as logged.
   */
  private diverge(link: Link, entered: ChunkType | null): ChunkLog {
    const log = this.log;
    const own = entered === null ? log.copy() : log.copy(log.length - 1);
    link.own = own;
    this.parts.own[link.from - 1] = own;
    return own;
  }

  /** `link` sees `current` during the pass of `entered` (null: an injected chunk, not logged). */
  private record(link: Link, current: ChunkType, entered: ChunkType | null): void {
    const own = link.own;
    if (own !== undefined) own.push(current);
    else if (current !== entered) this.diverge(link, entered).push(current);
  }

  /** `link` does not see the chunk of this pass (skipped, or dropped before it). */
  private miss(link: Link, entered: ChunkType | null): void {
    if (link.own === undefined && entered !== null) this.diverge(link, entered);
  }

  /**
   * Chunks a hook queued in its state go out right after the current chunk (see stream-follow-up.ts),
   * as chunks of its run (`checked`: the chunk the hook got).
   */
  private drainFollowUps(state: Record<string, unknown>, index: number, checked: ChunkType): void {
    const followUps = state[FOLLOW_UP_CHUNKS_KEY];
    if (followUps !== undefined && Array.isArray(followUps) && followUps.length > 0) {
      state[FOLLOW_UP_CHUNKS_KEY] = [];
      for (const followUp of followUps as ChunkType[]) this.injector.inject({ chunk: withRunId(followUp, checked.runId), from: index + 1 });
    }
    const reprocess = state[REPROCESS_PART_KEY];
    if (reprocess !== undefined && reprocess !== null) {
      state[REPROCESS_PART_KEY] = undefined;
      this.injector.inject({ chunk: withRunId(reprocess as ChunkType, checked.runId), from: 0 });
    }
  }

  /** The processors after `index` do not see this pass's chunk. */
  private dropped(index: number, entered: ChunkType | null, chunk: ChunkType): null {
    this.#textWatch.dropped((this.links[index] as Link).binding.processor, chunk);
    if (entered !== null) for (let after = index + 1; after < this.links.length; after++) this.miss(this.links[after] as Link, entered);
    return null;
  }

  /**
   * A suspended pass as a promise, for a pass that already continues inside an Observable (an
   * earlier hook returned one): awaits each later async hook in turn.
   */
  private async completion(suspended: Suspension): Promise<ChunkType | null> {
    let result: PassResult = suspended;
    while (result instanceof Suspension) {
      let resolved: unknown;
      try {
        resolved = await result.pending;
      } catch (thrown) {
        throw this.rejected(result, thrown);
      }
      result = this.#resume(result, resolved);
    }
    // a later hook's pending Observable is awaited here: this pass left virtual time already
    return toMaybePromise(result as MaybeAsync<ChunkType | null>);
  }

  /** Runs `chunk` through the processors from `from`; stops at the first hook that returns a promise (see {@link Suspension}). */
  private pass(chunk: ChunkType, from: number, entered: ChunkType | null): PassResult {
    const links = this.links;
    const retryCount = this.context.retryCount;
    let current = chunk;
    let currentIsData = isData(current);
    // the chunk's type as the next hook gets it, and whether that chunk handed back is checked again
    let type = current.type;
    let recheck = checkedInPlace(type);
    for (let index = from; index < links.length; index++) {
      const link = links[index] as Link;
      if (currentIsData && !link.acceptsData) {
        this.miss(link, entered);
        continue;
      }
      this.record(link, current, entered);
      const args = link.args;
      args.part = current;
      args.retryCount = retryCount;
      // (the part it got, handed back with another type: RETYPED_IN_PLACE — invokeStreamHook reads the type)
      const result = invokeStreamHook(link.binding, args, this.#tracingContext, type);
      if (result !== current && isPromiseLike<unknown>(result)) return new Suspension(result, current, index, entered, type);
      if (result !== current && isObservable(result)) {
        // an Observable the hook returned, still pending: already settled by invokeStreamHook
        const checking = current;
        const binding = link.binding;
        // (over an Observable, thenMaybe gives an Observable)
        return thenMaybe<unknown, ChunkType | null>(result as Observable<unknown>, (settled) => {
          this.drainFollowUps(binding.state, index, checking);
          const next = hookOutcome(settled, checking, binding);
          if (next === null) return this.dropped(index, entered, checking);
          const rest = this.pass(next, index + 1, entered);
          return rest instanceof Suspension ? this.completion(rest) : (rest as MaybeAsync<ChunkType | null>);
        }) as Observable<ChunkType | null>;
      }
      this.drainFollowUps(link.binding.state, index, current);
      // the part it got, handed back as it was: nothing to check — unless it is a tool chunk (an
      // edit in place could unbind it from its call)
      if (result === current && !recheck) continue;
      const next = hookOutcome(result, current, link.binding);
      if (next === null) return this.dropped(index, entered, current);
      current = next;
      currentIsData = isData(current);
      type = current.type;
      recheck = checkedInPlace(type);
    }
    return current;
  }
}
