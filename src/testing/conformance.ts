/**
 * The processor conformance check: your processor through scripted conversations live, with a
 * retried attempt, restored from a snapshot at every commit point, and taken over by a second
 * durable worker after a simulated crash — the same output, messages and `state` in every mode,
 * or a report naming the cause with a line diff.
 */
import { isHooked, type Processor, type ProcessorHookName } from '../contract/index.js';
import { ConformanceError } from './conformance-error.js';
import type {
  ConformanceCause,
  ConformanceFinding,
  ConformanceMode,
  ConformanceOptions,
  ConformanceReport,
  Conversation,
  ProcessorUnderTest,
} from './conformance-types.js';
import type { ProcessorLists } from './internal/conversation-agent.js';
import { conversationModel } from './internal/conversation-model.js';
import type { RecordedPoint, RunView, Subject } from './internal/conformance-runs.js';
import { reportText } from './internal/conformance-report.js';
import { lineDiff, sameLines } from './internal/line-diff.js';
import { chunkLines } from './internal/visible-output.js';

/**
 * The conversations `checkProcessor` drives a processor through by default: text streaming, a tool
 * call round trip, and a multi-step run (text and a tool call, then two tool calls, then the answer).
 *
 * @example
 * ```ts
 * import { DEFAULT_CONVERSATIONS, expectConformance } from 'rxagent/testing';
 * await expectConformance(myProcessor, { conversations: [...DEFAULT_CONVERSATIONS, myConversation] });
 * ```
 */
export const DEFAULT_CONVERSATIONS: readonly Conversation[] = [
  {
    name: 'text streaming',
    input: 'What is the weather like in Lisbon today?',
    steps: [{ text: 'It is sunny in Lisbon today, 24 °C with a light breeze from the west. A good day for a walk along the river.' }],
  },
  {
    name: 'tool call round trip',
    input: 'Where is my order A-17?',
    steps: [
      { toolCalls: [{ toolName: 'lookupOrder', args: { order: 'A-17' }, result: { order: 'A-17', status: 'shipped', days: 3 } }] },
      { text: 'Your order A-17 has shipped and should arrive within three days.' },
    ],
  },
  {
    name: 'multi-step run',
    input: 'Plan a weekend in Porto for two.',
    steps: [
      { text: 'Let me check the forecast first.', toolCalls: [{ toolName: 'forecast', args: { city: 'Porto' }, result: { saturday: 'sunny', sunday: 'rain' } }] },
      {
        toolCalls: [
          { toolName: 'findHotel', args: { city: 'Porto', guests: 2 }, result: { hotel: 'Casa do Rio', price: 140 } },
          { toolName: 'findRestaurant', args: { city: 'Porto', day: 'saturday' }, result: { name: 'Tasca', time: '20:00' } },
        ],
      },
      { text: 'Saturday is sunny: walk the Ribeira, dinner at Tasca at 20:00. Sunday brings rain, so visit the Serralves museum. Casa do Rio has a room for two at 140 € a night.' },
    ],
  },
];

const MODES: readonly ConformanceMode[] = ['live', 'retried', 'restored', 'taken-over'];
const INPUT_HOOKS = ['processInput', 'processInputStep', 'processLLMRequest', 'processLLMResponse'] as const;
const OUTPUT_HOOKS = ['processOutputStream', 'processOutputStep', 'processToolResult', 'processOutputResult'] as const;
/** Crash points tried per conversation at most (a long conversation flushes often). */
const MAX_CRASHES = 40;

const describeValue = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? `an object with the keys ${JSON.stringify(Object.keys(value))}` : `${typeof value} ${String(value)}`;

/** `value` as a processor, or a `TypeError` saying what it is instead. */
function asProcessor(value: unknown, what: string): Processor {
  if (typeof value !== 'object' || value === null || typeof (value as { id?: unknown }).id !== 'string' || (value as { id: string }).id === '') {
    throw new TypeError(`checkProcessor: ${what} must be a processor (an object with a non-empty string \`id\` and its hooks); got ${describeValue(value)}.`);
  }
  return value as Processor;
}

const hasAny = (processor: Processor, hooks: readonly ProcessorHookName[]): boolean => hooks.some((hook) => isHooked(processor, hook));

/** The lists the processor goes in: as asked, or by its hooks. */
function listsOf(processor: Processor, asked: ConformanceOptions['lists']): ProcessorLists {
  if (asked !== undefined) {
    if (!Array.isArray(asked) || asked.length === 0 || asked.some((list) => list !== 'input' && list !== 'output' && list !== 'error')) {
      throw new TypeError(`checkProcessor: options.lists must be a non-empty array of 'input', 'output', 'error'; got ${JSON.stringify(asked)}.`);
    }
    return { input: asked.includes('input'), output: asked.includes('output'), error: asked.includes('error') };
  }
  const input = hasAny(processor, INPUT_HOOKS);
  const output = hasAny(processor, OUTPUT_HOOKS);
  const error = !input && !output && hasAny(processor, ['processAPIError']);
  if (!input && !output && !error) throw new TypeError(`checkProcessor: processor "${processor.id}" has none of the nine hooks (processInput … processOutputResult): nothing to check.`);
  return { input, output, error };
}

/** Checks the conversations are scripts the kit can run. */
function checkConversations(conversations: unknown): readonly Conversation[] {
  if (!Array.isArray(conversations) || conversations.length === 0) throw new TypeError(`checkProcessor: options.conversations must be a non-empty array; got ${describeValue(conversations)}.`);
  const names = new Set<string>();
  conversations.forEach((conversation: Partial<Conversation>, index) => {
    const at = `options.conversations[${index}]`;
    if (typeof conversation?.name !== 'string' || conversation.name === '') throw new TypeError(`checkProcessor: ${at}.name must be a non-empty string.`);
    if (names.has(conversation.name)) throw new TypeError(`checkProcessor: two conversations are named "${conversation.name}" (names tell them apart in the report).`);
    names.add(conversation.name);
    if (typeof conversation.input !== 'string') throw new TypeError(`checkProcessor: ${at}.input ("${conversation.name}") must be the user's message, a string.`);
    const steps = conversation.steps;
    if (!Array.isArray(steps) || steps.length === 0) throw new TypeError(`checkProcessor: ${at}.steps ("${conversation.name}") must be a non-empty array of the model's answers.`);
    steps.forEach((step, stepIndex) => {
      const stepAt = `${at}.steps[${stepIndex}] ("${conversation.name}")`;
      const calls = step?.toolCalls;
      if (step?.text !== undefined && typeof step.text !== 'string') throw new TypeError(`checkProcessor: ${stepAt}.text must be a string.`);
      if (calls !== undefined && (!Array.isArray(calls) || calls.length === 0)) throw new TypeError(`checkProcessor: ${stepAt}.toolCalls must be a non-empty array when given.`);
      if (step?.text === undefined && calls === undefined) throw new TypeError(`checkProcessor: ${stepAt} has neither text nor toolCalls.`);
      for (const [callIndex, call] of (calls ?? []).entries()) {
        if (typeof call?.toolName !== 'string' || call.toolName === '') throw new TypeError(`checkProcessor: ${stepAt}.toolCalls[${callIndex}].toolName must be a non-empty string.`);
        if (typeof call.args !== 'object' || call.args === null || Array.isArray(call.args)) throw new TypeError(`checkProcessor: ${stepAt}.toolCalls[${callIndex}].args must be an object.`);
      }
      if (stepIndex === steps.length - 1 && calls !== undefined) {
        throw new TypeError(`checkProcessor: the last step of "${conversation.name}" makes tool calls; end a conversation with the model's answer (text only).`);
      }
    });
  });
  return conversations as readonly Conversation[];
}

/** The modes to run (`live` always). */
function modesOf(asked: ConformanceOptions['modes']): readonly ConformanceMode[] {
  if (asked === undefined) return MODES;
  if (!Array.isArray(asked) || asked.some((mode) => !MODES.includes(mode))) {
    throw new TypeError(`checkProcessor: options.modes must be an array of ${MODES.map((mode) => `'${mode}'`).join(', ')}; got ${JSON.stringify(asked)}.`);
  }
  return MODES.filter((mode) => mode === 'live' || asked.includes(mode));
}

/** Why the processor's runs cannot be restored (its `durableState` says so), or `undefined`. */
function notRestorable(processor: Processor): string | undefined {
  const durable = processor.durableState;
  if (durable === false) return `processor "${processor.id}" has \`durableState: false\`: restored and taken-over modes not run`;
  if (typeof durable === 'object' && durable !== null && 'notDurable' in durable) return `processor "${processor.id}" is not durable (${durable.notDurable}): restored and taken-over modes not run`;
  return undefined;
}

const pointName = (point: RecordedPoint): string =>
  point.kind === 'input' ? 'after processInput' : point.kind === 'step' ? `the step commit of step ${point.stepNumber}` : point.kind === 'model' ? `the model commit of step ${point.stepNumber}` : `the rejected attempt of step ${point.stepNumber}`;

const pretty = (value: unknown): string[] => (value === undefined ? ['(no state)'] : JSON.stringify(value, null, 2).split('\n'));

/**
 * Drives `processor` through scripted conversations in four modes — live, with a retried attempt,
 * restored from a snapshot at every commit point, taken over after a simulated crash — and
 * reports where its visible output (the chunks a client keeps, the messages memory saves) or its
 * `state` differ from the live run, naming the cause: state kept outside `state`, state that is
 * not JSON, a hook that is not idempotent across a replay. Never throws for what the processor
 * does; a `TypeError` for options written wrong. Use {@link expectConformance} in a test.
 *
 * @example
 * ```ts
 * import { checkProcessor } from 'rxagent/testing';
 * const report = await checkProcessor(() => new MyProcessor(), { modes: ['live', 'retried'] });
 * console.log(report.ok ? 'conforms' : report.text);
 * ```
 */
export async function checkProcessor(processor: ProcessorUnderTest, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const factory = typeof processor === 'function';
  const probe = factory ? asProcessor(processor({ model: conversationModel({ name: 'probe', input: '', steps: [{ text: '' }] }) }), 'what the factory returned') : asProcessor(processor, 'the first argument');
  const maxProcessorRetries = options.maxProcessorRetries ?? 3;
  if (!Number.isInteger(maxProcessorRetries) || maxProcessorRetries < 0) throw new TypeError(`checkProcessor: options.maxProcessorRetries must be a non-negative integer; got ${String(maxProcessorRetries)}.`);
  const subject: Subject = {
    processorId: probe.id,
    make: (model) => (factory ? asProcessor(processor({ model }), 'what the factory returned') : probe),
    lists: listsOf(probe, options.lists),
    maxProcessorRetries,
  };
  const conversations = checkConversations(options.conversations ?? DEFAULT_CONVERSATIONS);
  const modes = modesOf(options.modes);
  const findings: ConformanceFinding[] = [];
  const skipped: string[] = [];
  const blocked = notRestorable(probe);
  if (blocked !== undefined && (modes.includes('restored') || modes.includes('taken-over'))) skipped.push(blocked);
  let runs = 0;
  // the runs need the loop, memory and the durable worker: loaded when a check runs, so an app's
  // tests that import only the mock models from `rxagent/testing` do not load them
  const { failedCallRun, liveRun, notJsonAt, recordedRun, restoredRun, retriedRun, takenOverRun } = await import('./internal/conformance-runs.js');

  for (const conversation of conversations) {
    const add = (finding: Omit<ConformanceFinding, 'conversation'>): void => void findings.push({ conversation: conversation.name, ...finding });
    /** The view's chunks and messages against the live run's. */
    const compare = (live: RunView, view: Pick<RunView, 'chunkLines' | 'messageLines'>, mode: ConformanceMode, where: string, cause: ConformanceCause): void => {
      if (!sameLines(live.chunkLines, view.chunkLines)) add({ cause, mode, where, compared: 'chunks', diff: lineDiff(live.chunkLines, view.chunkLines) });
      else if (!sameLines(live.messageLines, view.messageLines)) add({ cause, mode, where, compared: 'messages', diff: lineDiff(live.messageLines, view.messageLines) });
    };

    const live = await recordedRun(subject, conversation);
    runs++;
    if (live.changedFields.length > 0) {
      add({
        cause: 'state-outside-state',
        mode: 'live',
        where: 'during the run',
        compared: 'fields',
        diff: live.changedFields.map(({ field, before, after }) => `this.${field}: ${before} → ${after}`),
      });
    }
    // a processor that declares itself not durable fails every snapshot on purpose (said in `skipped`)
    const failing = blocked !== undefined ? undefined : live.points.map((point) => ({ point, at: notJsonAt(point, subject.processorId) })).find((entry) => entry.at !== undefined);
    if (failing?.at !== undefined) {
      add({
        cause: 'state-not-json',
        mode: 'restored',
        where: `snapshot at ${pointName(failing.point)}`,
        compared: 'snapshot',
        diff: [`state${failing.at.path.slice(1)} is a ${failing.at.type}: the run cannot be snapshotted there, so a durable run cannot commit (DurableStateError)`],
      });
    }
    const replayCause: ConformanceCause = live.changedFields.length > 0 ? 'state-outside-state' : 'not-idempotent-on-replay';

    if (modes.includes('live')) {
      const again = await liveRun(subject, conversation);
      runs++;
      compare(live, again, 'live', factory ? 'run again (a new instance from the factory)' : 'run again on the same instance', 'state-outside-state');
    }
    if (modes.includes('retried')) {
      const retried = await retriedRun(subject, conversation);
      runs++;
      compare(live, retried, 'retried', 'each step rejected once, then retried', replayCause);
      const failedCall = await failedCallRun(subject, conversation);
      runs++;
      compare(live, failedCall, 'retried', "each step's model call failing mid-stream once, then retried", replayCause);
    }
    const restorable = blocked === undefined && failing === undefined;
    if (modes.includes('restored') && restorable) {
      for (const [index, point] of live.points.entries()) {
        if (point.snapshot === undefined) continue;
        const restored = await restoredRun(subject, conversation, point);
        runs++;
        const where = `restored at ${pointName(point)}`;
        const joined = [...live.chunks.slice(0, point.at), ...restored.chunks.slice(1)];
        const before = findings.length;
        compare(live, { chunkLines: chunkLines(joined), messageLines: restored.messageLines }, 'restored', where, replayCause);
        if (findings.length > before) continue;
        // the processor's state at each later commit point, as the live run had it
        const later = live.points.slice(index + 1);
        const differing = later.findIndex((livePoint, offset) => JSON.stringify(livePoint.state) !== JSON.stringify(restored.points[offset]?.state));
        if (differing >= 0) {
          add({
            cause: replayCause,
            mode: 'restored',
            where: `${where}, state at ${pointName(later[differing]!)}`,
            compared: 'state',
            diff: lineDiff(pretty(later[differing]!.state), pretty(restored.points[differing]?.state)),
          });
        }
      }
    }
    if (modes.includes('taken-over') && restorable) {
      for (let crash = 0; crash < MAX_CRASHES; crash++) {
        const taken = await takenOverRun(subject, conversation, crash);
        if (taken === undefined) break;
        runs += 2;
        compare(live, taken, 'taken-over', `crash at ${taken.crashedAt}`, replayCause);
      }
    }
  }

  const names = conversations.map((conversation) => conversation.name);
  const text = reportText({ processorId: subject.processorId, findings, conversations: names, modes, runs, skipped });
  return { processorId: subject.processorId, ok: findings.length === 0, conversations: names, modes, runs, findings, skipped, text };
}

/**
 * {@link checkProcessor} for a test: resolves with the report when the processor conforms, rejects
 * with a {@link ConformanceError} whose message is the readable report (each cause, where it
 * showed, a line diff) when it does not.
 *
 * @example
 * ```ts
 * import { it } from 'vitest';
 * import { expectConformance } from 'rxagent/testing';
 * it('conforms', () => expectConformance(() => new MyProcessor()));
 * ```
 */
export async function expectConformance(processor: ProcessorUnderTest, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const report = await checkProcessor(processor, options);
  if (!report.ok) throw new ConformanceError(report);
  return report;
}
