/** The types of the processor conformance check (`checkProcessor`, `expectConformance`). */
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { JsonValue, Processor } from '../contract/index.js';

/**
 * One tool call the scripted model makes. The kit gives the agent a tool of that name that answers
 * `result` (default `{ ok: true }`).
 *
 * @example
 * ```ts
 * import type { ConversationToolCall } from 'rxagent/testing';
 * const call: ConversationToolCall = { toolName: 'lookupOrder', args: { order: 'A-17' }, result: { status: 'shipped' } };
 * ```
 */
export interface ConversationToolCall {
  /** The tool's name. */
  readonly toolName: string;
  /** The call's arguments. */
  readonly args: Readonly<Record<string, JsonValue>>;
  /** What the tool answers (default `{ ok: true }`). */
  readonly result?: JsonValue;
}

/**
 * One answer of the scripted model (one step of the run): text, tool calls, or both (the text
 * streams first). A step with tool calls is followed by the next step; the last step should answer
 * with text only.
 *
 * @example
 * ```ts
 * import type { ConversationStep } from 'rxagent/testing';
 * const step: ConversationStep = { text: 'Let me check.', toolCalls: [{ toolName: 'weather', args: { city: 'Lisbon' } }] };
 * ```
 */
export interface ConversationStep {
  /** Text the model streams (in deltas of 8 characters). */
  readonly text?: string;
  /** Tool calls the model makes after its text. */
  readonly toolCalls?: readonly ConversationToolCall[];
}

/**
 * A scripted conversation the check drives the processor through: the user's message and the
 * model's answer at each step (the model answers step `n` once `n` tool messages are in its prompt,
 * so every mode gets the same answers).
 *
 * @example
 * ```ts
 * import type { Conversation } from 'rxagent/testing';
 * const refund: Conversation = {
 *   name: 'refund',
 *   input: 'Refund order A-17, please.',
 *   steps: [{ toolCalls: [{ toolName: 'refund', args: { order: 'A-17' }, result: { refunded: true } }] }, { text: 'Done: order A-17 is refunded.' }],
 * };
 * ```
 */
export interface Conversation {
  /** Its name in the report. */
  readonly name: string;
  /** The user's message. */
  readonly input: string;
  /** The model's answers, one per step (at least one). */
  readonly steps: readonly ConversationStep[];
}

/**
 * How the check runs a conversation:
 * - `live`: as an app runs it (and a second time, on the same instance when you passed one);
 * - `retried`: each step's first attempt rejected (`abort(…, { retry: true })` after your
 *   post-model hooks ran) and retried;
 * - `restored`: from the run's snapshot at every commit point, in a fresh run (what a durable
 *   worker does after a crash);
 * - `taken-over`: a durable worker (`createRunWorker` on an `InMemoryRunJournal`) crashes at each
 *   commit and chunk flush in turn; a second worker takes the run over from its last commit.
 *
 * @example
 * ```ts
 * import type { ConformanceMode } from 'rxagent/testing';
 * const quick: ConformanceMode[] = ['live', 'retried'];
 * ```
 */
export type ConformanceMode = 'live' | 'retried' | 'restored' | 'taken-over';

/**
 * Why a processor fails the check:
 * - `state-outside-state`: it keeps per-run data outside `state` (an instance field changed by a
 *   run, or the same conversation gives another output the second time);
 * - `state-not-json`: its `state` holds something a snapshot cannot save (a `Map`, `Set`, `Date`,
 *   class instance, function…), so a durable run cannot commit;
 * - `not-idempotent-on-replay`: a hook that ran again over the same input (a rejected attempt
 *   retried, a step replayed after a restore or a takeover) gave another answer.
 *
 * @example
 * ```ts
 * import type { ConformanceCause } from 'rxagent/testing';
 * const cause: ConformanceCause = 'state-not-json';
 * ```
 */
export type ConformanceCause = 'state-outside-state' | 'state-not-json' | 'not-idempotent-on-replay';

/**
 * One difference the check found.
 *
 * @example
 * ```ts
 * import { checkProcessor } from 'rxagent/testing';
 * const { findings } = await checkProcessor(myProcessor);
 * for (const finding of findings) console.log(finding.cause, finding.conversation, finding.mode, finding.where, finding.diff.join('\n'));
 * ```
 */
export interface ConformanceFinding {
  /** What went wrong. */
  readonly cause: ConformanceCause;
  /** The conversation it happened in. */
  readonly conversation: string;
  /** The mode whose run differed from the live one. */
  readonly mode: ConformanceMode;
  /** Where in that mode: `run again`, `restored at the step commit of step 0`, `crash at step-committed in step 0`… */
  readonly where: string;
  /** What differed: the chunks a client keeps, the messages memory saved, the processor's `state` at a commit point, its instance fields, or the snapshot itself. */
  readonly compared: 'chunks' | 'messages' | 'state' | 'fields' | 'snapshot';
  /** A line diff (`- live`, `+ this mode`), or the lines that say what was found. */
  readonly diff: readonly string[];
}

/**
 * What {@link checkProcessor} found. `text` is the readable report `expectConformance` throws.
 *
 * @example
 * ```ts
 * import { checkProcessor } from 'rxagent/testing';
 * const report = await checkProcessor(myProcessor);
 * if (!report.ok) console.log(report.text);
 * ```
 */
export interface ConformanceReport {
  /** The processor checked. */
  readonly processorId: string;
  /** True when no mode differed from the live run. */
  readonly ok: boolean;
  /** The conversations driven. */
  readonly conversations: readonly string[];
  /** The modes run. */
  readonly modes: readonly ConformanceMode[];
  /** Runs made in all. */
  readonly runs: number;
  /** The differences, grouped by cause in `text`. */
  readonly findings: readonly ConformanceFinding[];
  /** Modes not run, and why (a processor that declares itself not durable is not restored). */
  readonly skipped: readonly string[];
  /** The report as text: a summary line, then each cause with where it showed and a diff. */
  readonly text: string;
}

/**
 * What a processor factory gets: the conversation's scripted model, for processors that take a
 * model to route to (`ModelSelectionProcessor`'s choices).
 *
 * @example
 * ```ts
 * import type { ProcessorFactoryContext } from 'rxagent/testing';
 * const make = ({ model }: ProcessorFactoryContext) => new ModelSelectionProcessor({ model: judge, choices: [{ id: 'main', model, description: 'the agent' }] });
 * ```
 */
export interface ProcessorFactoryContext {
  /** The model the run's agent calls. */
  readonly model: LanguageModelV4;
}

/**
 * The processor to check: an instance (the check reuses it for every run, as an app does with a
 * processor in its agent's list), or a factory called for every run (as every process of a
 * durable deployment makes its own): pass a factory to check what a new process sees.
 *
 * @example
 * ```ts
 * import type { ProcessorUnderTest } from 'rxagent/testing';
 * const subject: ProcessorUnderTest = () => new MyProcessor({ strict: true });
 * ```
 */
export type ProcessorUnderTest = Processor | ((context: ProcessorFactoryContext) => Processor);

/**
 * Options of {@link checkProcessor} and `expectConformance`.
 *
 * @example
 * ```ts
 * import { DEFAULT_CONVERSATIONS, type ConformanceOptions } from 'rxagent/testing';
 * const options: ConformanceOptions = { conversations: [...DEFAULT_CONVERSATIONS, myConversation], lists: ['output'] };
 * ```
 */
export interface ConformanceOptions {
  /** The conversations (default {@link DEFAULT_CONVERSATIONS}: text streaming, a tool call round trip, a multi-step run). */
  readonly conversations?: readonly Conversation[];
  /** The modes (default all four). `live` is always run: it is what the others are compared with. */
  readonly modes?: readonly ConformanceMode[];
  /**
   * The agent lists the processor goes in. Default: `input` when it has an input hook
   * (`processInput`, `processInputStep`, `processLLMRequest`, `processLLMResponse`), `output` when
   * it has an output hook, `error` when it has only `processAPIError`.
   */
  readonly lists?: ReadonlyArray<'input' | 'output' | 'error'>;
  /** The agent's `maxProcessorRetries` (default 3; the `retried` mode adds one per step). */
  readonly maxProcessorRetries?: number;
}
