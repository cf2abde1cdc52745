/**
 * What every model-backed processor shares: its options, the error strategy applied to a failed
 * or malformed model answer, and the rule that a block (`abort()`) never happens inside a
 * try/catch of the processor's own (so a fail-open catch can never swallow it).
 */
import type { LanguageModelV4, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { ModelInput, ModelRegistry } from '../../model/index.js';
import { InvalidProcessorOptionError, thrownMessage, type AbortFunction, type ProcessorViolation } from '../../contract/index.js';
import { booleanOption, functionOption, stringOption } from './guard-options.js';
import { checkOptionKeys, optionKeys, optionNames, readingOption } from './option-keys.js';
import { judgeReporter, type JudgeTracing } from './judge-report.js';
import { callQuietly } from './private-violation.js';
import { resolveProcessorModel, structuredCall, StructuredCallError, type StructuredCallRequest } from './structured-call.js';

/**
 * What happens when the processor's model call fails or answers something unreadable:
 * `'warn'` (the default) fails open — the content passes unchecked and `onError` is told;
 * `'strict'` fails closed — the processor aborts the run. This is the strategy of the processors that
 * are not guards (ModelSelection, StructuredOutput's own); the guards (Moderation, PIIDetector,
 * PromptInjectionDetector, SystemPromptScrubber, LanguageDetector) take a `GuardErrorStrategy`
 * whose default is `'strict'` (see `GuardJudgeOptions`).
 *
 * @example
 * ```ts
 * new PIIDetector({ model, errorStrategy: 'strict' satisfies ErrorStrategy });
 * ```
 */
export type ErrorStrategy = 'warn' | 'strict';

/**
 * Options every model-backed processor accepts.
 *
 * @example
 * ```ts
 * const shared: ModelBackedOptions = { model: 'openai/gpt-4.1-nano', registry, errorStrategy: 'strict', onError: console.warn };
 * ```
 */
export interface ModelBackedOptions {
  /** The model that judges: a `LanguageModelV2`/`V3`/`V4` object, or a `'provider/model'` id with `registry`. */
  model: ModelInput;
  /** Resolves a string `model` (AI SDK `createProviderRegistry(...)` or a record of providers). */
  registry?: ModelRegistry;
  /** Default `'warn'` (fail open). See {@link ErrorStrategy} (the guards: infrastructure failures only). */
  errorStrategy?: ErrorStrategy;
  /** Replaces the built-in task description given to the model (the answer format stays). */
  instructions?: string;
  /** Provider options for the judging call. */
  providerOptions?: SharedV4ProviderOptions;
  /**
   * As the reference's option: `jsonPromptInjection: true` sends no JSON response format (the
   * answer format is described in the prompt, as always) — for models without native JSON output.
   */
  structuredOutputOptions?: {
    /** Describe the JSON answer in the prompt only (no response format). */
    jsonPromptInjection?: boolean;
  };
  /** Called on every violation the processor detects (blocking or not); its throws are swallowed. */
  onViolation?: (violation: ProcessorViolation) => void | Promise<void>;
  /** Called when the judging call failed or answered malformed JSON (under either error strategy). */
  onError?: (error: unknown) => void;
}

/**
 * The names of {@link ModelBackedOptions}: one list for every model-backed processor (each adds
 * its own to it).
 *
 * @example
 * ```ts
 * const keys = optionKeys('structured-output', [...MODEL_BACKED_OPTION_NAMES, 'schema', 'fallbackValue']);
 * ```
 */
export const MODEL_BACKED_OPTION_NAMES = optionNames<ModelBackedOptions>({
  model: true,
  registry: true,
  errorStrategy: true,
  instructions: true,
  providerOptions: true,
  structuredOutputOptions: true,
  onViolation: true,
  onError: true,
});

/** The names `structuredOutputOptions` may hold. */
const STRUCTURED_OUTPUT_OPTION_NAMES = optionNames<NonNullable<ModelBackedOptions['structuredOutputOptions']>>({ jsonPromptInjection: true });

/**
 * The outcome of a judging call: its value, or why it failed.
 *
 * @example
 * ```ts
 * const outcome: CallOutcome<{ ok: boolean }> = await judge.ask({ system, prompt, schema });
 * ```
 */
export type CallOutcome<T> = { ok: true; value: T } | { ok: false; error: StructuredCallError };

/**
 * The resolved model plus the options of a model-backed processor.
 *
 * @example
 * ```ts
 * const judge = new ModelJudge('my-processor', { model }); const outcome = await judge.ask({ system, prompt, schema });
 * ```
 */
export class ModelJudge {
  readonly model: LanguageModelV4;
  readonly errorStrategy: ErrorStrategy;
  private readonly providerOptions: SharedV4ProviderOptions | undefined;
  private readonly onError: ((error: unknown) => void) | undefined;
  private readonly jsonPromptInjection: boolean;

  constructor(processorId: string, options: ModelBackedOptions) {
    const structured: unknown = options.structuredOutputOptions;
    if (structured !== undefined && (typeof structured !== 'object' || structured === null)) {
      throw new InvalidProcessorOptionError(processorId, 'structuredOutputOptions', structured, 'an object ({ jsonPromptInjection?: boolean })');
    }
    if (structured !== undefined) checkOptionKeys(optionKeys(processorId, STRUCTURED_OUTPUT_OPTION_NAMES), structured, 'structuredOutputOptions');
    this.jsonPromptInjection = booleanOption(processorId, 'structuredOutputOptions.jsonPromptInjection', options.structuredOutputOptions?.jsonPromptInjection, false);
    stringOption(processorId, 'instructions', options.instructions, undefined);
    const providerOptions: unknown = options.providerOptions;
    if (providerOptions !== undefined && (typeof providerOptions !== 'object' || providerOptions === null || Array.isArray(providerOptions))) {
      throw new InvalidProcessorOptionError(processorId, 'providerOptions', providerOptions, 'an object of provider options');
    }
    functionOption(processorId, 'onViolation', options.onViolation);
    // the model is the caller's object: a getter or trap that throws while it is resolved names `model`
    this.model = readingOption(processorId, 'model', () => resolveProcessorModel(options.model, options.registry));
    this.errorStrategy = options.errorStrategy ?? 'warn';
    this.providerOptions = options.providerOptions;
    this.onError = functionOption(processorId, 'onError', options.onError);
  }

  /** Makes one structured call; never throws (the failure is in the outcome). */
  async ask<T>(request: Omit<StructuredCallRequest<T>, 'model' | 'providerOptions'> & { tracing?: JudgeTracing }): Promise<CallOutcome<T>> {
    const report = judgeReporter(request, this.model); // `tracing`: reported to `tracingContext.onJudge`
    try {
      const value = await structuredCall({
        ...request,
        model: this.model,
        ...(this.jsonPromptInjection ? { jsonPromptInjection: true } : {}),
        ...(this.providerOptions === undefined ? {} : { providerOptions: this.providerOptions }),
      });
      return report({ ok: true, value });
    } catch (error) {
      const failure =
        error instanceof StructuredCallError ? error : new StructuredCallError('model', thrownMessage(error) ?? 'a value that cannot be read', { cause: error });
      return report({ ok: false, error: failure });
    }
  }

  /**
   * Applies the error strategy to a failed call: `'strict'` aborts (throws the TripWire),
   * `'warn'` reports to `onError` and returns so the caller lets the content through.
   */
  failed(processorId: string, error: StructuredCallError, abort: AbortFunction): void {
    // a failing onError (thrown or rejected) never changes the outcome
    callQuietly(this.onError, error);
    if (this.errorStrategy === 'strict') {
      abort(`${processorId}: the check could not be completed (${error.message}); blocked because errorStrategy is 'strict'`, {
        metadata: { processorId, error: error.message, kind: error.kind },
      });
    }
  }
}

/**
 * Scores by category (0..1), as the classifier models answer them.
 *
 * @example
 * ```ts
 * const scores: CategoryScores = { violence: 0.8, hate: 0.1 };
 * ```
 */
export type CategoryScores = Record<string, number>;
