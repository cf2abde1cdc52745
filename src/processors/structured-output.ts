import { z } from 'zod';
import {
  InvalidProcessorOptionError,
  type AbortFunction,
  type ChunkType,
  type Processor,
  type ProcessorState,
  type ProcessOutputResultArgs,
  type ProcessOutputStreamArgs,
  type TracingContext,
} from '../contract/index.js';
import { chunkLike } from './internal/chunks.js';
import { emitInOrder } from './internal/emit-in-order.js';
import { quoted } from './internal/input-messages.js';
import { MODEL_BACKED_OPTION_NAMES, ModelJudge, type ModelBackedOptions } from './internal/model-backed.js';
import { checkOptionKeys, optionKeys, optionNames, readingOption } from './internal/option-keys.js';
import { answerFormat, StructuredCallError } from './internal/structured-call.js';
import { oneOfOption } from './internal/guard-options.js';

/**
 * When structuring fails: `'strict'` (default, as the reference) aborts the run, `'warn'` leaves
 * the run without an object, `'fallback'` uses `fallbackValue`.
 *
 * @example
 * ```ts
 * const errorStrategy: StructuredOutputErrorStrategy = 'fallback';
 * ```
 */
export type StructuredOutputErrorStrategy = 'warn' | 'strict' | 'fallback';

/**
 * Options of {@link StructuredOutputProcessor}.
 *
 * @example
 * ```ts
 * const options: StructuredOutputProcessorOptions<{ city: string }> = { model, schema: z.object({ city: z.string() }) };
 * ```
 */
export interface StructuredOutputProcessorOptions<T> extends Omit<ModelBackedOptions, 'errorStrategy' | 'onViolation'> {
  /** The shape of the object (a zod schema). */
  schema: z.ZodType<T>;
  /** Default `'strict'` (as the reference). */
  errorStrategy?: StructuredOutputErrorStrategy;
  /**
   * The object used with `errorStrategy: 'fallback'`: a value the schema accepts (checked when the
   * processor is made; `undefined` means no object). Each run gets its own copy.
   */
  fallbackValue?: T;
  /** @deprecated The reference's option: accepted without effect (warned once); the structuring is one model call, no agent. */
  useAgent?: boolean;
  /** @deprecated The reference's option: accepted without effect (warned once); use `structuredOutputOptions: { jsonPromptInjection: true }`. */
  jsonPromptInjection?: boolean | 'system' | 'inline' | 'auto';
  /** @deprecated The reference's option: accepted without effect (warned once); failures go to `onError`. */
  logger?: unknown;
}

/** The option names {@link StructuredOutputProcessor} knows (the reference's among them). */
const STRUCTURED_OUTPUT_OPTION_KEYS = optionKeys(
  'structured-output',
  [
    ...MODEL_BACKED_OPTION_NAMES.filter((name) => name !== 'onViolation'),
    ...optionNames<Omit<StructuredOutputProcessorOptions<unknown>, keyof ModelBackedOptions>>({ schema: true, fallbackValue: true, useAgent: true, jsonPromptInjection: true, logger: true }),
  ],
  {
    useAgent: 'the structuring is one model call, no agent',
    jsonPromptInjection: 'use structuredOutputOptions: { jsonPromptInjection: true }',
    logger: 'failures go to onError',
  },
);

/** A deep copy of `value` (as is when it holds what cannot be copied, e.g. a function). */
function copyOf<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

type Outcome<T> = { ok: true; object: T } | { ok: false; error: StructuredCallError };

/** The run state of the processor. */
interface StructuringState<T> {
  stepText: string;
  runText: string;
  outcome: Outcome<T> | undefined;
}

function structuringState<T>(state: ProcessorState): StructuringState<T> {
  const existing = state.structuring as StructuringState<T> | undefined;
  if (existing !== undefined) return existing;
  const fresh: StructuringState<T> = { stepText: '', runText: '', outcome: undefined };
  state.structuring = fresh;
  return fresh;
}

/**
 * Turns the agent's final text into an object of `schema` with a second model — so the main model
 * can answer freely (and use tools) while the caller still gets typed data.
 *
 * The structuring model gets the schema (as JSON schema) and the text and answers with the JSON
 * object itself (fences tolerated), validated with the zod schema. The object is stored in the
 * processor's run `state` (`state.object`), set as `result.object` in `processOutputResult`, and
 * emitted as an `object` chunk right before the run's `finish` chunk. Only one structuring call is
 * made per run (whichever hook comes first does it; text of rejected attempts is left out).
 *
 * A failed call or an answer not matching the schema follows `errorStrategy`: `'strict'`
 * (default, as the reference) aborts the run, `'warn'` goes on without an object (`onError` told),
 * `'fallback'` uses `fallbackValue`.
 *
 * Hooks: `processOutputStream` (collects the text, emits the object before `finish`) and
 * `processOutputResult`.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import { StructuredOutputProcessor } from 'rxagent/processors';
 * const structured = new StructuredOutputProcessor({ model: openai('gpt-4.1-nano'), schema: z.object({ city: z.string(), tempC: z.number() }) });
 * const agent = new Agent({ id: 'a', instructions: '…', model, outputProcessors: [structured] });
 * ```
 */
export class StructuredOutputProcessor<T = unknown> implements Processor<'structured-output'> {
  /** The processor's id. */
  readonly id = 'structured-output';
  /** A human-readable name. */
  readonly name = 'Structured Output';
  /** What the processor does. */
  readonly description = 'Structures the final text into an object with a second model.';
  private readonly judge: ModelJudge;
  private readonly schema: z.ZodType<T>;
  private readonly errorStrategy: StructuredOutputErrorStrategy;
  private readonly fallbackValue: T | undefined;
  private readonly system: string;

  constructor(options: StructuredOutputProcessorOptions<T>) {
    checkOptionKeys(STRUCTURED_OUTPUT_OPTION_KEYS, options);
    const schema: unknown = options.schema;
    if (typeof schema !== 'object' || schema === null || typeof (schema as { safeParse?: unknown }).safeParse !== 'function') {
      throw new InvalidProcessorOptionError('structured-output', 'schema', schema, 'a zod schema');
    }
    this.judge = new ModelJudge('structured-output', { ...options, errorStrategy: 'warn' });
    this.schema = options.schema;
    this.errorStrategy = oneOfOption('structured-output', 'errorStrategy', options.errorStrategy, ['strict', 'warn', 'fallback'], 'strict');
    this.fallbackValue = options.fallbackValue;
    if (this.errorStrategy === 'fallback' && !('fallbackValue' in options)) {
      throw new InvalidProcessorOptionError(this.id, 'fallbackValue', undefined, "given with errorStrategy 'fallback' (a value the schema accepts, or undefined for no object)");
    }
    if (this.errorStrategy === 'fallback' && options.fallbackValue !== undefined) {
      // what reaches `object` is what the schema accepts: the fallback too, as the schema outputs it
      // a getter in the fallback that throws while the schema reads it names fallbackValue
      const parsed = readingOption(this.id, 'fallbackValue', () => options.schema.safeParse(options.fallbackValue));
      if (!parsed.success) throw new InvalidProcessorOptionError(this.id, 'fallbackValue', options.fallbackValue, `a value the schema accepts (${parsed.error.message})`);
      this.fallbackValue = parsed.data;
    }
    let jsonSchema = '';
    try {
      jsonSchema = JSON.stringify(z.toJSONSchema(options.schema));
    } catch {
      jsonSchema = '(see the expected shape below)';
    }
    this.system = [
      options.instructions ?? 'You extract structured data. Read the text and fill in a JSON object that matches this JSON schema:',
      jsonSchema,
      'Use only information from the text.',
      answerFormat('<the JSON object matching the schema>'),
    ].join('\n');
  }

  /** The `processOutputStream` hook (see `Processor.processOutputStream` for when it runs and what it may return). */
  processOutputStream({ part, state, abort, abortSignal, tracingContext }: ProcessOutputStreamArgs): ChunkType | null | Promise<ChunkType | null> {
    const structuring = structuringState<T>(state);
    switch (part.type) {
      case 'text-delta':
        structuring.stepText += part.payload.text;
        return emitInOrder(state, [part]);
      case 'step-finish': {
        const rejected = part.payload.stepResult.reason === 'retry' || part.payload.stepResult.tripwire !== undefined;
        if (!rejected) structuring.runText += structuring.stepText;
        structuring.stepText = '';
        return emitInOrder(state, [part]);
      }
      case 'finish':
        return this.structureOnce(structuring.runText + structuring.stepText, state, abort, abortSignal, tracingContext).then((object) =>
          emitInOrder(state, object === undefined ? [part] : [chunkLike(part, 'object', { object }), part]),
        );
      default:
        return emitInOrder(state, [part]);
    }
  }

  /** The `processOutputResult` hook (see `Processor.processOutputResult` for when it runs and what it may return). */
  async processOutputResult({ result, state, abort, abortSignal, tracingContext }: ProcessOutputResultArgs): Promise<undefined> {
    const object = await this.structureOnce(result.text, state, abort, abortSignal, tracingContext);
    if (object !== undefined) result.object = object;
    return undefined;
  }

  /** Structures `text` once per run (later calls reuse the outcome); applies the error strategy. */
  private async structureOnce(text: string, state: ProcessorState, abort: AbortFunction, abortSignal: AbortSignal, tracingContext: TracingContext): Promise<T | undefined> {
    const structuring = structuringState<T>(state);
    if (structuring.outcome === undefined) {
      const outcome =
        text.trim() === ''
          ? { ok: false as const, error: new StructuredCallError('malformed', 'there is no text to structure') }
          : await this.judge.ask({ system: this.system, prompt: quoted('Text', text), schema: this.schema, abortSignal, tracing: { processorId: this.id, tracingContext } });
      structuring.outcome = outcome.ok ? { ok: true, object: outcome.value } : { ok: false, error: outcome.error };
      if (!outcome.ok) this.judge.failed(this.id, outcome.error, abort);
    }
    const outcome = structuring.outcome;
    if (outcome.ok) {
      state.object = outcome.object;
      return outcome.object;
    }
    if (this.errorStrategy === 'strict') {
      abort(`structured-output: could not structure the response (${outcome.error.message})`, {
        metadata: { error: outcome.error.message, kind: outcome.error.kind },
      });
    }
    if (this.errorStrategy === 'fallback') {
      // a copy per run: a caller editing one run's object never changes the next run's
      const object = copyOf(this.fallbackValue);
      state.object = object;
      return object;
    }
    return undefined;
  }
}
