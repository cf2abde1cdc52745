import { z } from 'zod';
import type { MastraDBMessage } from '../message-list/index.js';
import type { ModelInput, ProcessInputStepArgs, ProcessInputStepResult, Processor, ProcessorState, TracingContext } from '../contract/index.js';
import { quoted } from './internal/input-messages.js';
import { messageText } from './internal/message-text.js';
import { MODEL_BACKED_OPTION_NAMES, ModelJudge, type ModelBackedOptions } from './internal/model-backed.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';
import { answerFormat, StructuredCallError } from './internal/structured-call.js';
import { functionOption, oneOfOption, probabilityOption } from './internal/guard-options.js';
import { callQuietly } from './internal/private-violation.js';
import { InvalidProcessorOptionError } from '../contract/index.js';

/**
 * One model the classifier can pick.
 *
 * @example
 * ```ts
 * const choice: ModelChoice = { id: 'fast', model: openai('gpt-4.1-mini'), description: 'short questions' };
 * ```
 */
export interface ModelChoice {
  /** Short id the classifier answers with (e.g. `'fast'`, `'reasoning'`). */
  id: string;
  /** The model used when this choice is picked (an object, or a `'provider/model'` id the agent resolves). */
  model: ModelInput;
  /** When to pick it, for the classifier (e.g. "simple questions, chit-chat"). */
  description: string;
}

/**
 * The classifier's decision, as `onDecision` receives it.
 *
 * @example
 * ```ts
 * new ModelSelectionProcessor({ model, choices, onDecision: (decision: ModelSelectionDecision) => log(decision.choice) });
 * ```
 */
export interface ModelSelectionDecision {
  /** The chosen id, or `undefined` when the step keeps its model. */
  choice: string | undefined;
  /** How sure the model is (0..1). */
  confidence?: number;
  /** Why (a human-readable reason). */
  reason?: string;
  /** True when the classification failed or was not confident enough and `defaultChoice` (if any) was used. */
  fallback: boolean;
}

/**
 * Options of {@link ModelSelectionProcessor}.
 *
 * @example
 * ```ts
 * const options: ModelSelectionOptions = { model, choices, defaultChoice: 'fast', scope: 'first-step' };
 * ```
 */
export interface ModelSelectionOptions extends Omit<ModelBackedOptions, 'onViolation'> {
  /** The models to pick from (at least one). */
  choices: ModelChoice[];
  /** Choice used when the classification fails or is below `minConfidence`. Default: keep the agent's model. */
  defaultChoice?: string;
  /** Confidence (0..1) below which `defaultChoice` is used. Default 0. */
  minConfidence?: number;
  /** `'run'` (default): the picked model serves every step; `'first-step'`: only step 0. */
  scope?: 'run' | 'first-step';
  /** Called once per run with the decision. */
  onDecision?: (decision: ModelSelectionDecision) => void;
  /** @deprecated The reference's option: accepted without effect (warned once); the id is `'model-selection'`. */
  id?: string;
  /** @deprecated The reference's option: accepted without effect (warned once); use `minConfidence`. */
  minProbability?: number;
  /** @deprecated The reference's classifier form: accepted without effect (warned once); rxagent picks from `choices`. */
  classifier?: unknown;
  /** @deprecated The reference's classifier form: accepted without effect (warned once); rxagent picks from `choices`. */
  select?: unknown;
}

/** The option names {@link ModelSelectionProcessor} knows (the reference's among them). */
const MODEL_SELECTION_OPTION_KEYS = optionKeys(
  'model-selection',
  [
    ...MODEL_BACKED_OPTION_NAMES.filter((name) => name !== 'onViolation'),
    ...optionNames<Omit<ModelSelectionOptions, keyof ModelBackedOptions>>({
      choices: true,
      defaultChoice: true,
      minConfidence: true,
      scope: true,
      onDecision: true,
      id: true,
      minProbability: true,
      classifier: true,
      select: true,
    }),
  ],
  {
    id: "the processor's id is 'model-selection'",
    minProbability: 'use minConfidence',
    classifier: 'rxagent picks from choices: [{ id, model, description }]',
    select: 'rxagent picks from choices: [{ id, model, description }]',
  },
);

/**
 * The choices, checked: a non-empty array of `{ id, model, description }` with distinct, non-empty
 * ids (a repeated id would silently route to the later entry's model).
 */
function choicesOption(value: unknown): readonly ModelChoice[] {
  if (!Array.isArray(value) || value.length === 0) throw new InvalidProcessorOptionError('model-selection', 'choices', value, 'a non-empty array of { id, model, description }');
  const ids = new Set<string>();
  value.forEach((choice: unknown, index) => {
    if (typeof choice !== 'object' || choice === null) throw new InvalidProcessorOptionError('model-selection', `choices[${index}]`, choice, 'an object { id, model, description }');
    const { id, model, description } = choice as Partial<Record<keyof ModelChoice, unknown>>;
    if (typeof id !== 'string' || id.trim() === '') throw new InvalidProcessorOptionError('model-selection', `choices[${index}].id`, id, 'a non-empty string');
    if (ids.has(id)) throw new InvalidProcessorOptionError('model-selection', `choices[${index}].id`, id, 'an id no other choice has');
    ids.add(id);
    if ((typeof model !== 'object' && typeof model !== 'function' && typeof model !== 'string') || model === null || model === '') {
      throw new InvalidProcessorOptionError('model-selection', `choices[${index}].model`, model, "a model or a 'provider/model' id");
    }
    if (typeof description !== 'string') throw new InvalidProcessorOptionError('model-selection', `choices[${index}].description`, description, 'a string');
  });
  return value as ModelChoice[];
}

const selectionAnswer = z.object({
  choice: z.string(),
  confidence: z.number().min(0).max(1).optional(),
  reason: z.string().optional(),
});

/**
 * Routes each run to one of several models: a (cheap) classifier model reads the latest user
 * message once per run and picks one of `choices` by their descriptions; `processInputStep` then
 * returns `{ model }` for the steps of the run (all of them, or only the first with
 * `scope: 'first-step'`).
 *
 * The classifier answers with JSON `{"choice": "<id>", "confidence": 0.8, "reason": "…"}`. An
 * unknown id counts as a malformed answer. A failed call or malformed answer follows
 * `errorStrategy`: `'warn'` (default) fails open — `defaultChoice`, or the agent's own model —
 * and `'strict'` aborts the run. The decision is kept in the processor's run `state`.
 *
 * Hook: `processInputStep` (register it as an input processor).
 *
 * @example
 * ```ts
 * import { ModelSelectionProcessor } from 'rxagent/processors';
 * const router = new ModelSelectionProcessor({
 *   model: openai('gpt-4.1-nano'),
 *   choices: [
 *     { id: 'fast', model: openai('gpt-4.1-mini'), description: 'greetings, short factual questions' },
 *     { id: 'deep', model: openai('o3'), description: 'multi-step reasoning, maths, code' },
 *   ],
 * });
 * const agent = new Agent({ id: 'a', instructions: '…', model: openai('gpt-4.1'), inputProcessors: [router] });
 * ```
 */
export class ModelSelectionProcessor implements Processor<'model-selection'> {
  /** The processor's id. */
  readonly id = 'model-selection';
  /** A human-readable name. */
  readonly name = 'Model Selection';
  /** What the processor does. */
  readonly description = "Picks each run's model with a classifier model.";
  private readonly judge: ModelJudge;
  private readonly choices: ReadonlyMap<string, ModelChoice>;
  private readonly defaultChoice: string | undefined;
  private readonly minConfidence: number;
  private readonly scope: 'run' | 'first-step';
  private readonly onDecision: ((decision: ModelSelectionDecision) => void) | undefined;
  private readonly system: string;

  constructor(options: ModelSelectionOptions) {
    checkOptionKeys(MODEL_SELECTION_OPTION_KEYS, options);
    const choices = choicesOption(options.choices);
    // a misspelt 'Strict' was read as the default 'warn': the routing failed open
    const errorStrategy = oneOfOption('model-selection', 'errorStrategy', options.errorStrategy, ['warn', 'strict'], 'warn');
    this.judge = new ModelJudge('model-selection', { ...options, errorStrategy });
    this.choices = new Map(choices.map((choice) => [choice.id, choice]));
    if (options.defaultChoice !== undefined && !this.choices.has(options.defaultChoice)) {
      throw new InvalidProcessorOptionError('model-selection', 'defaultChoice', options.defaultChoice, `the id of one of the choices (${[...this.choices.keys()].map((id) => `'${id}'`).join(', ')})`);
    }
    this.defaultChoice = options.defaultChoice;
    this.minConfidence = probabilityOption('model-selection', 'minConfidence', options.minConfidence, 0);
    this.scope = oneOfOption('model-selection', 'scope', options.scope, ['run', 'first-step'], 'run');
    this.onDecision = functionOption('model-selection', 'onDecision', options.onDecision);
    this.system = [
      options.instructions ?? 'You route user requests to the most suitable AI model. Pick exactly one of these options:',
      ...choices.map((choice) => `- "${choice.id}": ${choice.description}`),
      answerFormat('{"choice": "<one of the ids above>", "confidence": <0..1>, "reason": "<one short sentence>"}'),
    ].join('\n');
  }

  /** The `processInputStep` hook (see `Processor.processInputStep` for when it runs and what it may return). */
  async processInputStep({ messages, stepNumber, state, abort, abortSignal, tracingContext }: ProcessInputStepArgs): Promise<ProcessInputStepResult | undefined> {
    if (this.scope === 'first-step' && stepNumber > 0) return undefined;
    const decision = (state.decision as ModelSelectionDecision | undefined) ?? (await this.decide(messages, state, abort, abortSignal, tracingContext));
    const choice = decision.choice === undefined ? undefined : this.choices.get(decision.choice);
    return choice === undefined ? undefined : { model: choice.model };
  }

  private async decide(
    messages: readonly MastraDBMessage[],
    state: ProcessorState,
    abort: ProcessInputStepArgs['abort'],
    abortSignal: AbortSignal,
    tracingContext: TracingContext,
  ): Promise<ModelSelectionDecision> {
    const latest = [...messages].reverse().find((message) => message.role === 'user');
    const text = latest === undefined ? '' : messageText(latest);
    let decision: ModelSelectionDecision;
    if (text.trim() === '') {
      decision = { choice: this.defaultChoice, fallback: true, reason: 'no user message to classify' };
    } else {
      const outcome = await this.judge.ask({ system: this.system, prompt: quoted('User request', text), schema: selectionAnswer, abortSignal, tracing: { processorId: this.id, tracingContext } });
      const answer = outcome.ok ? outcome.value : undefined;
      if (!outcome.ok || !this.choices.has(outcome.value.choice)) {
        const error = outcome.ok ? new StructuredCallError('malformed', `the classifier picked an unknown choice "${outcome.value.choice}"`) : outcome.error;
        this.judge.failed(this.id, error, abort);
        decision = { choice: this.defaultChoice, fallback: true, reason: error.message };
      } else if ((answer?.confidence ?? 1) < this.minConfidence) {
        decision = { choice: this.defaultChoice, fallback: true, ...(answer?.confidence === undefined ? {} : { confidence: answer.confidence }), reason: 'below minConfidence' };
      } else {
        decision = {
          choice: outcome.value.choice,
          fallback: false,
          ...(outcome.value.confidence === undefined ? {} : { confidence: outcome.value.confidence }),
          ...(outcome.value.reason === undefined ? {} : { reason: outcome.value.reason }),
        };
      }
    }
    state.decision = decision;
    // a failing callback (thrown or rejected) never changes the routing
    callQuietly(this.onDecision, decision);
    return decision;
  }
}
