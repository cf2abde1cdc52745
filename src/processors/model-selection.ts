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
 * One model the classifier can pick, in the reference's form: the model with the criteria that
 * should select it, named after the model (its `modelId`, or the `'provider/model'` id string)
 * unless `name` is given. A list of these needs at least two, with distinct names.
 *
 * @example
 * ```ts
 * const choice: ModelCriteriaChoice = { model: openai('gpt-4.1-mini'), criteria: 'greetings and short factual questions' };
 * ```
 */
export interface ModelCriteriaChoice {
  /** The model used when this choice is picked. */
  model: ModelInput;
  /** What kind of request this model should handle: the text the classifier picks by. */
  criteria: string;
  /** The choice's name (what the classifier answers, `defaultChoice` and `onDecision` use). Default: the model's id. */
  name?: string;
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
  /**
   * The models to pick from: at least one `{ id, model, description }`, or (the reference's form)
   * at least two `{ model, criteria, name? }` — one form per list.
   */
  choices: ModelChoice[] | ModelCriteriaChoice[];
  /** Choice used when the classification fails or is below `minConfidence`. Default: keep the agent's model. */
  defaultChoice?: string;
  /**
   * Confidence (0..1) below which `defaultChoice` is used (or the agent's model). When given, an
   * answer without a confidence is below it (a bound that cannot be checked does not pass). Default:
   * no bound.
   */
  minConfidence?: number;
  /** `'run'` (default): the picked model serves every step; `'first-step'`: only step 0. */
  scope?: 'run' | 'first-step';
  /** Called once per run with the decision. */
  onDecision?: (decision: ModelSelectionDecision) => void;
  /** @deprecated The reference's option: accepted without effect (warned once); the id is `'model-selection'`. */
  id?: string;
  /** The reference's name of `minConfidence` (give one of them). */
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
    classifier: 'rxagent picks from choices: [{ model, criteria }] or [{ id, model, description }]',
    select: 'rxagent picks from choices: [{ model, criteria }] or [{ id, model, description }]',
  },
);

/** The keys a choice may have, of both forms (a misspelt one is refused naming the closest). */
const CHOICE_KEYS = optionKeys('model-selection', [
  ...optionNames<ModelChoice>({ id: true, model: true, description: true }),
  ...optionNames<ModelCriteriaChoice>({ model: true, criteria: true, name: true }),
]);

/** What a choice is named after when it has no name: the model's id (`modelId`, or the id string), as the reference does. */
function modelLabel(model: unknown): string {
  if (typeof model === 'string') return model;
  const modelId: unknown = (model as { modelId?: unknown }).modelId;
  return typeof modelId === 'string' && modelId !== '' ? modelId : 'model';
}

/**
 * The choices, checked, as `{ id, model, description }`: a non-empty array of that form with
 * distinct, non-empty ids (a repeated id would silently route to the later entry's model), or of
 * the reference's `{ model, criteria, name? }` — at least two, criteria not blank, distinct names
 * (a choice is named after its model unless named). One form per list; unknown keys are refused.
 */
function choicesOption(value: unknown): readonly ModelChoice[] {
  const expected = 'a non-empty array of { id, model, description }, or of at least two { model, criteria, name? }';
  if (!Array.isArray(value) || value.length === 0) throw new InvalidProcessorOptionError('model-selection', 'choices', value, expected);
  const formOf = (choice: object): 'id' | 'criteria' | 'both' => {
    const own = (key: string) => Object.hasOwn(choice, key);
    const criteria = own('criteria') || own('name');
    const id = own('id') || own('description');
    return criteria && id ? 'both' : criteria ? 'criteria' : 'id';
  };
  let form: 'id' | 'criteria' | undefined;
  const ids = new Set<string>();
  const checked = value.map((choice: unknown, index): ModelChoice => {
    const at = `choices[${index}]`;
    if (typeof choice !== 'object' || choice === null || Array.isArray(choice)) throw new InvalidProcessorOptionError('model-selection', at, choice, 'an object { id, model, description } or { model, criteria, name? }');
    checkOptionKeys(CHOICE_KEYS, choice, at);
    const kind = formOf(choice);
    if (kind === 'both') throw new InvalidProcessorOptionError('model-selection', at, choice, { problem: "mixes the two forms of a choice: give { id, model, description } or the reference's { model, criteria, name? }" });
    if (form !== undefined && kind !== form) {
      throw new InvalidProcessorOptionError('model-selection', at, choice, { problem: `is not of the form of choices[0] (${form === 'id' ? '{ id, model, description }' : '{ model, criteria, name? }'}): one form per list` });
    }
    form = kind;
    const { id, model, description, criteria, name } = choice as Partial<Record<keyof ModelChoice | keyof ModelCriteriaChoice, unknown>>;
    if ((typeof model !== 'object' && typeof model !== 'function' && typeof model !== 'string') || model === null || model === '') {
      throw new InvalidProcessorOptionError('model-selection', `${at}.model`, model, "a model or a 'provider/model' id");
    }
    let choiceId: string;
    let text: string;
    if (kind === 'criteria') {
      if (typeof criteria !== 'string' || criteria.trim() === '') throw new InvalidProcessorOptionError('model-selection', `${at}.criteria`, criteria, 'a non-empty string (the classifier picks by it)');
      if (name !== undefined && (typeof name !== 'string' || name.trim() === '')) throw new InvalidProcessorOptionError('model-selection', `${at}.name`, name, 'a non-empty string');
      choiceId = name ?? modelLabel(model);
      text = criteria;
      if (ids.has(choiceId)) throw new InvalidProcessorOptionError('model-selection', `${at}.name`, name, 'a name no other choice has (a choice is named after its model: name one of two choices of the same model)');
    } else {
      if (typeof id !== 'string' || id.trim() === '') throw new InvalidProcessorOptionError('model-selection', `${at}.id`, id, 'a non-empty string');
      if (ids.has(id)) throw new InvalidProcessorOptionError('model-selection', `${at}.id`, id, 'an id no other choice has');
      if (typeof description !== 'string') throw new InvalidProcessorOptionError('model-selection', `${at}.description`, description, 'a string');
      choiceId = id;
      text = description;
    }
    ids.add(choiceId);
    return { id: choiceId, model: model as ModelInput, description: text };
  });
  // the reference routes between two or more: one criteria choice is a list cut short
  if (form === 'criteria' && checked.length < 2) throw new InvalidProcessorOptionError('model-selection', 'choices', value, expected);
  return checked;
}

/** The instructions of the reference's form when none are given: its objective, to prefer the cheaper model. */
const CRITERIA_INSTRUCTIONS =
  'You route user requests to an AI model. Pick the least capable model that handles this request correctly and safely: a cheaper one for a straightforward request, a more capable one only when the request needs it. The options, each with what it is for:';

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
  /** A bound was given: an answer without a confidence is below it. */
  private readonly confidenceRequired: boolean;
  private readonly scope: 'run' | 'first-step';
  private readonly onDecision: ((decision: ModelSelectionDecision) => void) | undefined;
  private readonly system: string;

  constructor(options: ModelSelectionOptions) {
    checkOptionKeys(MODEL_SELECTION_OPTION_KEYS, options);
    const choices = choicesOption(options.choices);
    const criteriaForm = Array.isArray(options.choices) && options.choices.some((choice) => typeof choice === 'object' && choice !== null && Object.hasOwn(choice, 'criteria'));
    // a misspelt 'Strict' was read as the default 'warn': the routing failed open
    const errorStrategy = oneOfOption('model-selection', 'errorStrategy', options.errorStrategy, ['warn', 'strict'], 'warn');
    this.judge = new ModelJudge('model-selection', { ...options, errorStrategy });
    this.choices = new Map(choices.map((choice) => [choice.id, choice]));
    if (options.defaultChoice !== undefined && !this.choices.has(options.defaultChoice)) {
      throw new InvalidProcessorOptionError('model-selection', 'defaultChoice', options.defaultChoice, `the id of one of the choices (${[...this.choices.keys()].map((id) => `'${id}'`).join(', ')})`);
    }
    this.defaultChoice = options.defaultChoice;
    if (options.minConfidence !== undefined && options.minProbability !== undefined) {
      throw new InvalidProcessorOptionError('model-selection', 'minProbability', options.minProbability, { problem: "is the reference's name of minConfidence: give one of them" });
    }
    // the reference's name: a bound the answer cannot be checked against (no confidence) abstains
    this.minConfidence =
      options.minProbability !== undefined
        ? probabilityOption('model-selection', 'minProbability', options.minProbability, 0)
        : probabilityOption('model-selection', 'minConfidence', options.minConfidence, 0);
    this.confidenceRequired = options.minConfidence !== undefined || options.minProbability !== undefined;
    this.scope = oneOfOption('model-selection', 'scope', options.scope, ['run', 'first-step'], 'run');
    this.onDecision = functionOption('model-selection', 'onDecision', options.onDecision);
    this.system = [
      options.instructions ?? (criteriaForm ? CRITERIA_INSTRUCTIONS : 'You route user requests to the most suitable AI model. Pick exactly one of these options:'),
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
      } else if (answer?.confidence === undefined ? this.confidenceRequired : answer.confidence < this.minConfidence) {
        decision = { choice: this.defaultChoice, fallback: true, ...(answer?.confidence === undefined ? { reason: 'no confidence to check against minConfidence' } : { confidence: answer.confidence, reason: 'below minConfidence' }) };
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
