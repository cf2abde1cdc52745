// A processor written against the reference's own types (`@mastra/core/processors`, the version
// pinned in bench/peer), used unchanged in an rxagent Agent and with rxagent's operators: every hook.
import type {
  Processor as ReferenceProcessor,
  ProcessInputArgs,
  ProcessInputResult,
  ProcessInputStepArgs,
  ProcessInputStepResult,
  ProcessLLMRequestArgs,
  ProcessLLMRequestResult,
  ProcessLLMResponseArgs,
  ProcessLLMResponseResult,
  ProcessAPIErrorArgs,
  ProcessAPIErrorResult,
  ProcessOutputStreamArgs,
  ProcessOutputStepArgs,
  ProcessToolResultArgs,
  ProcessOutputResultArgs,
  ProcessorMessageResult,
  InputProcessor as ReferenceInputProcessor,
  OutputProcessor as ReferenceOutputProcessor,
  ErrorProcessor as ReferenceErrorProcessor,
} from '@mastra/core/processors';
import type { MastraDBMessage, MessageList } from '@mastra/core/agent';
import type { ChunkType } from '@mastra/core/stream';
import { Agent } from 'rxagent';
import {
  processInput,
  processInputStep,
  processLLMRequest,
  processLLMResponse,
  processOutputStream,
  processOutputStep,
  processToolResult,
  processOutputResult,
  retryOnAPIError,
} from 'rxagent/operators';
import { mockModel } from 'rxagent/testing';

/** Every hook, typed only with the reference's types. */
export class EveryHook implements ReferenceProcessor<'every-hook'> {
  readonly id = 'every-hook' as const;
  readonly name = 'Every hook';

  async processInput({ messages, systemMessages, messageList, state }: ProcessInputArgs): Promise<ProcessInputResult> {
    state['seen'] = messages.length;
    void messageList;
    return { messages, systemMessages };
  }

  async processInputStep({ messages, stepNumber, systemMessages }: ProcessInputStepArgs): Promise<ProcessInputStepResult | MessageList | MastraDBMessage[] | undefined> {
    return stepNumber > 3 ? messages : { systemMessages };
  }

  async processLLMRequest({ prompt }: ProcessLLMRequestArgs): Promise<ProcessLLMRequestResult> {
    return { prompt };
  }

  async processLLMResponse({ chunks, fromCache }: ProcessLLMResponseArgs): Promise<ProcessLLMResponseResult> {
    void chunks;
    void fromCache;
  }

  async processAPIError({ error, retryCount }: ProcessAPIErrorArgs): Promise<ProcessAPIErrorResult | void> {
    return { retry: retryCount < 1 && error instanceof Error };
  }

  async processOutputStream({ part, abort }: ProcessOutputStreamArgs): Promise<ChunkType | null | undefined> {
    if (part.type === 'text-delta' && part.payload.text.includes('secret')) abort('no secrets', { retry: true });
    return part;
  }

  async processOutputStep({ messages, text }: ProcessOutputStepArgs): Promise<MastraDBMessage[]> {
    void text;
    return messages;
  }

  async processToolResult({ messageList }: ProcessToolResultArgs): Promise<MessageList> {
    return messageList;
  }

  processOutputResult({ messages, result }: ProcessOutputResultArgs): ProcessorMessageResult {
    void result.text;
    return messages;
  }
}

const every = new EveryHook();
const asInput: ReferenceInputProcessor = every;
const asOutput: ReferenceOutputProcessor = every;
const asError: ReferenceErrorProcessor = every;

export const agent = new Agent({
  id: 'ported',
  instructions: 'Be brief.',
  model: mockModel({ parts: [] }),
  inputProcessors: [every, asInput],
  outputProcessors: [every, asOutput],
  errorProcessors: [every, asError],
});

export const operators = [
  processInput([every]),
  processInputStep([every]),
  processLLMRequest([every]),
  processLLMResponse([every]),
  processOutputStream([every]),
  processOutputStep([every]),
  processToolResult([every]),
  processOutputResult([every]),
  retryOnAPIError([every]),
] as const;

// per call too
void agent.stream$('hi', { inputProcessors: [asInput], outputProcessors: [asOutput], errorProcessors: [asError] });

// rxagent's own processors written inline keep their argument types in the same lists
export const inline = new Agent({
  id: 'inline',
  instructions: 'Be brief.',
  model: mockModel({ parts: [] }),
  outputProcessors: [every, { id: 'upper', processOutputStream: ({ part }) => (part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part) }],
});
// @ts-expect-error an inline hook's arguments are still rxagent's (there is no `nope`)
export const typo = processOutputStream([{ id: 'typo', processOutputStream: ({ nope }) => nope }]);
