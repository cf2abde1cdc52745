/**
 * Generated runs for the reliability properties: what the model streams on each call, which
 * processors run and what each of their hooks does, what the tools do, and where the consumer
 * unsubscribes. Everything is plain data (printable by fast-check when a property fails) and
 * deterministic per run: processors decide from counters kept in their own `state`.
 */
import fc from 'fast-check';

/** Tools the generated model may call ('ghost' is not registered: the model invents it). */
export const TOOL_NAMES = [
  'ok',
  'okAsync',
  'throws',
  'rejects',
  'slow',
  'cycle',
  'bigint',
  'fn',
  'writer',
  'noExecute',
  'ghost',
  'abort',
  'hang',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** One piece of a model stream. */
export type Segment =
  | { kind: 'text' | 'reasoning'; deltas: string[] }
  | {
      kind: 'tool';
      tool: ToolName;
      /** valid `{"n":1}`, schema-invalid `{"n":"x"}`, malformed JSON, or empty input. */
      args: 'valid' | 'schema-invalid' | 'bad-json' | 'empty';
      streamed: boolean;
      /** Executed by the provider, which answers it (or not) in the same stream. */
      provider?: 'answered' | 'unanswered';
    }
  | { kind: 'source' | 'file' | 'raw' | 'metadata' | 'unknown' };

/** How one model call ends. */
export type CallEnd =
  | { kind: 'finish'; reason: 'stop' | 'tool-calls' | 'length' | 'other' }
  /** A provider `error` part. */
  | { kind: 'error-part' }
  /** The stream errors (a broken connection). */
  | { kind: 'throw-mid' }
  /** The stream completes without a `finish` part; `cut` also leaves the last text/reasoning part open. */
  | { kind: 'early-end'; cut: boolean };

/** What the model does on one call. */
export interface CallScript {
  /** `doStream` throws before any part. */
  preThrow: boolean;
  segments: Segment[];
  end: CallEnd;
}

/** What a hook does when its rule fires. */
export type HookAction = 'pass' | 'abort' | 'abortRetry' | 'throw' | 'returnList' | 'wrongShape';

/** When a hook acts: on its `nth` call in the run (0-based), or on every call from then on. */
export interface HookRule {
  action: HookAction;
  nth: number;
  repeat: boolean;
}

/** Stream-chunk actions. */
export type StreamAction = 'pass' | 'drop' | 'rewrite' | 'abort' | 'abortRetry' | 'throw' | 'wrongShape';

/** Chunk types a stream rule can target. */
export const STREAM_TARGETS = [
  'text-delta',
  'text-start',
  'reasoning-delta',
  'tool-call',
  'tool-result',
  'tool-error',
  'step-start',
  'step-finish',
  'finish',
  'source',
  'data-progress',
] as const;
export type StreamTarget = (typeof STREAM_TARGETS)[number];

/** A `processOutputStream` rule: act on the `nth` chunk of type `target` (or every one from then on). */
export interface StreamRule {
  action: StreamAction;
  target: StreamTarget;
  nth: number;
  repeat: boolean;
}

/** One generated processor. */
export interface ProcessorSpec {
  id: string;
  /** Which lists it is in ('error': errorProcessors only). */
  role: 'input' | 'output' | 'both' | 'error';
  /** How its hooks return: synchronously, a promise (microtask), or after a real 1 ms timer. */
  timing: 'sync' | 'promise' | 'timer';
  processDataParts: boolean;
  input?: HookRule;
  inputStep?: HookRule;
  llmRequest?: HookRule;
  llmResponse?: HookRule;
  stream?: StreamRule;
  outputStep?: HookRule;
  toolResult?: HookRule;
  outputResult?: HookRule;
  /** `processAPIError`: ask for a retry on the `nth` call (or from then on), or throw. */
  apiError?: { action: 'retry' | 'none' | 'throw'; nth: number; repeat: boolean };
  onViolation?: 'record' | 'throw' | 'reject';
}

/** Where the consumer stops listening. */
export type Unsubscribe = { kind: 'chunks'; after: number } | { kind: 'macrotask' };

/** One generated run. */
export interface Scenario {
  calls: CallScript[];
  processors: ProcessorSpec[];
  maxProcessorRetries: number | undefined;
  maxSteps: number;
  toolConcurrency: number;
  /** Stream through `doStream` and a `ReadableStream` instead of the synchronous Observable fast path. */
  readable: boolean;
  /** Pass a caller `abortSignal` (required by the 'abort' tool). */
  userSignal: boolean;
  unsubscribe: Unsubscribe | undefined;
}

const word = fc.constantFrom('a', 'b', ' c', 'dd', ' hello', 'é', '🙂', '\n', 'secret', ' x y');

const textSegment: fc.Arbitrary<Segment> = fc.record({
  kind: fc.constantFrom<'text' | 'reasoning'>('text', 'text', 'reasoning'),
  deltas: fc.array(word, { minLength: 1, maxLength: 4 }),
});

function toolSegment(tools: readonly ToolName[]): fc.Arbitrary<Segment> {
  return fc.record(
    {
      kind: fc.constant<'tool'>('tool'),
      tool: fc.constantFrom(...tools),
      args: fc.constantFrom<'valid' | 'schema-invalid' | 'bad-json' | 'empty'>('valid', 'valid', 'valid', 'schema-invalid', 'bad-json', 'empty'),
      streamed: fc.boolean(),
      provider: fc.constantFrom<'answered' | 'unanswered' | undefined>(undefined, undefined, undefined, undefined, 'answered', 'unanswered'),
    },
    { requiredKeys: ['kind', 'tool', 'args', 'streamed'] },
  );
}

const miscSegment: fc.Arbitrary<Segment> = fc.record({
  kind: fc.constantFrom<'source' | 'file' | 'raw' | 'metadata' | 'unknown'>('source', 'file', 'raw', 'metadata', 'unknown'),
});

const callEnd: fc.Arbitrary<CallEnd> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant<'finish'>('finish'), reason: fc.constantFrom<'stop' | 'tool-calls' | 'length' | 'other'>('stop', 'tool-calls', 'length', 'other') }) },
  { weight: 1, arbitrary: fc.constant<CallEnd>({ kind: 'error-part' }) },
  { weight: 1, arbitrary: fc.constant<CallEnd>({ kind: 'throw-mid' }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant<'early-end'>('early-end'), cut: fc.boolean() }) },
);

function callScript(tools: readonly ToolName[]): fc.Arbitrary<CallScript> {
  return fc.record({
    preThrow: fc.integer({ min: 0, max: 14 }).map((roll) => roll === 0),
    segments: fc.array(
      fc.oneof({ weight: 5, arbitrary: textSegment }, { weight: 3, arbitrary: toolSegment(tools) }, { weight: 1, arbitrary: miscSegment }),
      { maxLength: 5 },
    ),
    end: callEnd,
  });
}

function hookRule(actions: readonly HookAction[]): fc.Arbitrary<HookRule | undefined> {
  return fc.option(fc.record({ action: fc.constantFrom(...actions), nth: fc.integer({ min: 0, max: 2 }), repeat: fc.boolean() }), { freq: 2, nil: undefined });
}

const streamRule: fc.Arbitrary<StreamRule | undefined> = fc.option(
  fc.record({
    action: fc.constantFrom<StreamAction>('pass', 'drop', 'drop', 'rewrite', 'rewrite', 'abort', 'abortRetry', 'abortRetry', 'throw', 'wrongShape'),
    target: fc.constantFrom(...STREAM_TARGETS),
    nth: fc.integer({ min: 0, max: 3 }),
    repeat: fc.boolean(),
  }),
  { freq: 4, nil: undefined },
);

function processorSpec(index: number): fc.Arbitrary<ProcessorSpec> {
  return fc.record(
    {
      id: fc.constant(`p${index}`),
      role: fc.constantFrom<ProcessorSpec['role']>('input', 'output', 'output', 'both', 'error'),
      timing: fc.constantFrom<ProcessorSpec['timing']>('sync', 'sync', 'sync', 'promise', 'promise', 'timer'),
      processDataParts: fc.boolean(),
      input: hookRule(['pass', 'abort', 'throw', 'returnList', 'wrongShape']),
      inputStep: hookRule(['pass', 'abort', 'abortRetry', 'throw', 'wrongShape']),
      llmRequest: hookRule(['pass', 'abort', 'throw', 'wrongShape']),
      // (its return value is reserved by the specification and ignored: no shape rules here)
      llmResponse: hookRule(['pass', 'abortRetry', 'throw']),
      stream: streamRule,
      outputStep: hookRule(['pass', 'abort', 'abortRetry', 'abortRetry', 'throw', 'returnList', 'wrongShape']),
      toolResult: hookRule(['pass', 'abortRetry', 'throw', 'wrongShape']),
      outputResult: hookRule(['pass', 'abort', 'throw', 'returnList', 'wrongShape']),
      apiError: fc.option(
        fc.record({ action: fc.constantFrom<'retry' | 'none' | 'throw'>('retry', 'retry', 'none', 'throw'), nth: fc.integer({ min: 0, max: 1 }), repeat: fc.boolean() }),
        { freq: 2, nil: undefined },
      ),
      onViolation: fc.option(fc.constantFrom<'record' | 'throw' | 'reject'>('record', 'throw', 'reject'), { freq: 2, nil: undefined }),
    },
    { requiredKeys: ['id', 'role', 'timing', 'processDataParts'] },
  ).map((spec) => dropUndefined(spec));
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined)) as T;
}

/** Options of {@link scenarioArbitrary}. */
export interface ScenarioOptions {
  /** Generate unsubscribe points (default true). */
  unsubscribe?: boolean;
  /** Allow real 1 ms timers (slow tools, timer processors); default true. */
  timers?: boolean;
  /** Allow processors whose hooks throw or return wrong shapes; default true. */
  throwing?: boolean;
}

/** Generated runs. */
export function scenarioArbitrary(options: ScenarioOptions = {}): fc.Arbitrary<Scenario> {
  const unsubscribe = options.unsubscribe ?? true;
  const timers = options.timers ?? true;
  return fc
    .record({
      userSignal: fc.boolean(),
      unsubscribe: unsubscribe
        ? fc.option(
            fc.oneof(
              { weight: 4, arbitrary: fc.record({ kind: fc.constant<'chunks'>('chunks'), after: fc.integer({ min: 1, max: 30 }) }) },
              { weight: 1, arbitrary: fc.constant<Unsubscribe>({ kind: 'macrotask' }) },
            ),
            { freq: 3, nil: undefined },
          )
        : fc.constant(undefined),
    })
    .chain(({ userSignal, unsubscribe: stop }) => {
      // 'abort' needs the caller's signal; 'hang' only ends when the consumer leaves on its own.
      const tools = TOOL_NAMES.filter(
        (name) =>
          (name !== 'abort' || userSignal) &&
          (name !== 'hang' || stop?.kind === 'macrotask') &&
          (name !== 'slow' || timers),
      );
      return fc.record({
        calls: fc.array(callScript(tools), { minLength: 1, maxLength: 4 }),
        processors: fc.integer({ min: 0, max: 4 }).chain((count) => fc.tuple(...Array.from({ length: count }, (_, index) => processorSpec(index)))),
        maxProcessorRetries: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
        maxSteps: fc.integer({ min: 1, max: 4 }),
        toolConcurrency: fc.integer({ min: 1, max: 3 }),
        readable: fc.integer({ min: 0, max: 4 }).map((roll) => roll === 0),
        userSignal: fc.constant(userSignal),
        unsubscribe: fc.constant(stop),
      });
    })
    .map((scenario) => ({
      ...scenario,
      processors: scenario.processors.map((spec) => restrict(spec, options)),
    }));
}

function restrict(spec: ProcessorSpec, options: ScenarioOptions): ProcessorSpec {
  let restricted = spec;
  if (options.timers === false && spec.timing === 'timer') restricted = { ...restricted, timing: 'promise' };
  if (options.throwing === false) {
    const safe = (rule: HookRule | undefined): HookRule | undefined =>
      rule === undefined || (rule.action !== 'throw' && rule.action !== 'wrongShape') ? rule : { ...rule, action: 'pass' };
    restricted = {
      ...restricted,
      ...(spec.input ? { input: safe(spec.input) as HookRule } : {}),
      ...(spec.inputStep ? { inputStep: safe(spec.inputStep) as HookRule } : {}),
      ...(spec.llmRequest ? { llmRequest: safe(spec.llmRequest) as HookRule } : {}),
      ...(spec.llmResponse ? { llmResponse: safe(spec.llmResponse) as HookRule } : {}),
      ...(spec.outputStep ? { outputStep: safe(spec.outputStep) as HookRule } : {}),
      ...(spec.toolResult ? { toolResult: safe(spec.toolResult) as HookRule } : {}),
      ...(spec.outputResult ? { outputResult: safe(spec.outputResult) as HookRule } : {}),
      ...(spec.stream && (spec.stream.action === 'throw' || spec.stream.action === 'wrongShape') ? { stream: { ...spec.stream, action: 'pass' as const } } : {}),
    };
  }
  return restricted;
}
