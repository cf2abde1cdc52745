/** Type tests of the processor contract: classification aliases and every hook's argument fields. */
import { describe, expectTypeOf, it } from 'vitest';
import type { Observable } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4Prompt, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { LanguageModelUsage, ProviderMetadata } from 'ai';
import type { MessageList } from '../../src/message-list/message-list.js';
import type { CoreSystemMessage, MastraDBMessage } from '../../src/message-list/types.js';
import type {
  AgentToolChoice,
  AgentToolSet,
  CachedLLMStepChunk,
  CachedLLMStepResponse,
  CallSettings,
  ChunkType,
  ErrorProcessor,
  InputProcessor,
  ModelInput,
  OutputProcessor,
  OutputResult,
  ProcessAPIErrorArgs,
  ProcessAPIErrorResult,
  ProcessInputArgs,
  ProcessInputResult,
  ProcessInputStepArgs,
  ProcessInputStepResult,
  ProcessLLMRequestArgs,
  ProcessLLMRequestResult,
  ProcessLLMResponseArgs,
  ProcessOutputResultArgs,
  ProcessOutputStepArgs,
  ProcessOutputStreamArgs,
  ProcessToolResultArgs,
  Processor,
  ProcessorStreamWriter,
  ProcessorViolation,
  RequestContext,
  RxFinishReason,
  StepResult,
  StructuredOutputOptions,
  ToolCallInfo,
  TracingContext,
  TripWireOptions,
} from '../../src/contract/index.js';
import { chunk, runProcessor } from '../../src/testing/index.js';
import {
  ContentFilter,
  DynamicModelProcessor,
  ErrorRecoveryProcessor,
  LowercaseProcessor,
  ModerationCollector,
  QualityGuardrail,
  RedactToolResult,
  WordCounter,
} from '../fixtures/spec-processors.js';

type Abort = (reason?: string, options?: TripWireOptions<unknown>) => never;

/** The base context fields every hook's args carry, with the specification's types. */
interface SpecContext {
  abort: Abort;
  retryCount: number;
  tracingContext: TracingContext;
  requestContext: RequestContext;
}
type ContextOf<T extends SpecContext> = Pick<T, keyof SpecContext>;

describe('processor classification', () => {
  it('a processor with only processOutputStream is an OutputProcessor and not an InputProcessor', () => {
    const streamOnly = { id: 'stream-only', processOutputStream: ({ part }: ProcessOutputStreamArgs) => part };
    expectTypeOf(streamOnly).toExtend<Processor>();
    expectTypeOf(streamOnly).toExtend<OutputProcessor>();
    expectTypeOf(streamOnly).not.toExtend<InputProcessor>();
    expectTypeOf(streamOnly).not.toExtend<ErrorProcessor>();
  });

  it('a class with only processOutputStream is an OutputProcessor and not an InputProcessor', () => {
    expectTypeOf<WordCounter>().toExtend<OutputProcessor>();
    expectTypeOf<WordCounter>().not.toExtend<InputProcessor>();
    expectTypeOf<ModerationCollector>().toExtend<OutputProcessor>();
  });

  it('input-side hooks make an InputProcessor, processAPIError an ErrorProcessor', () => {
    expectTypeOf<LowercaseProcessor>().toExtend<InputProcessor>();
    expectTypeOf<LowercaseProcessor>().not.toExtend<OutputProcessor>();
    expectTypeOf<DynamicModelProcessor>().toExtend<InputProcessor>();
    expectTypeOf<ErrorRecoveryProcessor>().toExtend<ErrorProcessor>();
    expectTypeOf<ErrorRecoveryProcessor>().not.toExtend<InputProcessor>();
    expectTypeOf<QualityGuardrail>().toExtend<OutputProcessor>();
    expectTypeOf<RedactToolResult>().toExtend<OutputProcessor>();
    expectTypeOf({ id: 'llm', processLLMRequest: () => undefined }).toExtend<InputProcessor>();
    expectTypeOf({ id: 'llm', processLLMResponse: () => undefined }).toExtend<InputProcessor>();
  });

  it('a hybrid processor is both', () => {
    expectTypeOf<ContentFilter>().toExtend<InputProcessor>();
    expectTypeOf<ContentFilter>().toExtend<OutputProcessor>();
  });

  it('an object with no hook is a Processor but none of the three', () => {
    const bare = { id: 'bare' };
    expectTypeOf(bare).toExtend<Processor>();
    expectTypeOf(bare).not.toExtend<InputProcessor>();
    expectTypeOf(bare).not.toExtend<OutputProcessor>();
    expectTypeOf(bare).not.toExtend<ErrorProcessor>();
  });

  it('has the specification\'s properties', () => {
    expectTypeOf<Processor['id']>().toEqualTypeOf<string>();
    expectTypeOf<Processor<'guard'>['id']>().toEqualTypeOf<'guard'>();
    expectTypeOf<Processor['name']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Processor['description']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Processor['processorIndex']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Processor['processDataParts']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<NonNullable<Processor['onViolation']>>().parameters.toEqualTypeOf<[ProcessorViolation]>();
    expectTypeOf<NonNullable<Processor['onViolation']>>().returns.toEqualTypeOf<void | Promise<void>>();
    expectTypeOf<ProcessorViolation>().toEqualTypeOf<{ processorId: string; message: string; detail?: unknown }>();
  });
});

describe('hook arguments', () => {
  it('processInput', () => {
    expectTypeOf<ContextOf<ProcessInputArgs>>().toEqualTypeOf<SpecContext>();
    expectTypeOf<ProcessInputArgs['abort']>().returns.toBeNever();
    expectTypeOf<ProcessInputArgs['messages']>().toEqualTypeOf<MastraDBMessage[]>();
    expectTypeOf<ProcessInputArgs['systemMessages']>().toEqualTypeOf<CoreSystemMessage[]>();
    expectTypeOf<ProcessInputArgs['messageList']>().toEqualTypeOf<MessageList>();
    expectTypeOf<MastraDBMessage[]>().toExtend<ProcessInputResult>();
    expectTypeOf<MessageList>().toExtend<ProcessInputResult>();
    expectTypeOf<{ messages: MastraDBMessage[]; systemMessages: CoreSystemMessage[] }>().toExtend<ProcessInputResult>();
  });

  it('processInputStep', () => {
    expectTypeOf<ContextOf<ProcessInputStepArgs>>().toEqualTypeOf<SpecContext>();
    expectTypeOf<ProcessInputStepArgs['abort']>().returns.toBeNever();
    expectTypeOf<ProcessInputStepArgs['messages']>().toEqualTypeOf<MastraDBMessage[]>();
    expectTypeOf<ProcessInputStepArgs['messageList']>().toEqualTypeOf<MessageList>();
    expectTypeOf<ProcessInputStepArgs['stepNumber']>().toEqualTypeOf<number>();
    expectTypeOf<ProcessInputStepArgs['steps']>().toEqualTypeOf<StepResult[]>();
    expectTypeOf<ProcessInputStepArgs['systemMessages']>().toEqualTypeOf<CoreSystemMessage[]>();
    expectTypeOf<ProcessInputStepArgs['model']>().toEqualTypeOf<LanguageModelV4>();
    expectTypeOf<ProcessInputStepArgs['toolChoice']>().toEqualTypeOf<AgentToolChoice | undefined>();
    expectTypeOf<ProcessInputStepArgs['activeTools']>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf<ProcessInputStepArgs['tools']>().toEqualTypeOf<AgentToolSet | undefined>();
    expectTypeOf<ProcessInputStepArgs['providerOptions']>().toEqualTypeOf<SharedV4ProviderOptions | undefined>();
    expectTypeOf<ProcessInputStepArgs['modelSettings']>().toEqualTypeOf<CallSettings | undefined>();
    expectTypeOf<ProcessInputStepArgs['structuredOutput']>().toEqualTypeOf<StructuredOutputOptions | undefined>();
    expectTypeOf<ProcessInputStepResult['model']>().toEqualTypeOf<ModelInput | undefined>();
    expectTypeOf<'openai/gpt-5-mini'>().toExtend<ModelInput>();
    expectTypeOf<ProcessInputStepResult['messages']>().toEqualTypeOf<MastraDBMessage[] | undefined>();
    expectTypeOf<ProcessInputStepResult['messageList']>().toEqualTypeOf<MessageList | undefined>();
    expectTypeOf<ProcessInputStepResult['systemMessages']>().toEqualTypeOf<CoreSystemMessage[] | undefined>();
    expectTypeOf<'none'>().toExtend<NonNullable<ProcessInputStepResult['toolChoice']>>();
  });

  it('processLLMRequest', () => {
    expectTypeOf<ContextOf<ProcessLLMRequestArgs>>().toEqualTypeOf<SpecContext>();
    expectTypeOf<ProcessLLMRequestArgs['abort']>().returns.toBeNever();
    expectTypeOf<ProcessLLMRequestArgs['prompt']>().toEqualTypeOf<LanguageModelV4Prompt>();
    expectTypeOf<ProcessLLMRequestArgs['model']>().toEqualTypeOf<LanguageModelV4>();
    expectTypeOf<ProcessLLMRequestArgs['stepNumber']>().toEqualTypeOf<number>();
    expectTypeOf<ProcessLLMRequestArgs['steps']>().toEqualTypeOf<StepResult[]>();
    expectTypeOf<ProcessLLMRequestArgs['state']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<ProcessLLMRequestArgs['writer']>().toEqualTypeOf<ProcessorStreamWriter>();
    expectTypeOf<ProcessLLMRequestArgs['abortSignal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<{ prompt: LanguageModelV4Prompt }>().toExtend<ProcessLLMRequestResult>();
    expectTypeOf<{ response: CachedLLMStepResponse }>().toExtend<ProcessLLMRequestResult>();
    expectTypeOf<undefined>().toExtend<ProcessLLMRequestResult>();
  });

  it('processLLMResponse', () => {
    expectTypeOf<ContextOf<ProcessLLMResponseArgs>>().toEqualTypeOf<SpecContext>();
    expectTypeOf<ProcessLLMResponseArgs['abort']>().returns.toBeNever();
    expectTypeOf<ProcessLLMResponseArgs['chunks']>().toEqualTypeOf<CachedLLMStepChunk[]>();
    expectTypeOf<ProcessLLMResponseArgs['model']>().toEqualTypeOf<LanguageModelV4>();
    expectTypeOf<ProcessLLMResponseArgs['stepNumber']>().toEqualTypeOf<number>();
    expectTypeOf<ProcessLLMResponseArgs['steps']>().toEqualTypeOf<StepResult[]>();
    expectTypeOf<ProcessLLMResponseArgs['state']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<ProcessLLMResponseArgs['fromCache']>().toEqualTypeOf<boolean>();
    expectTypeOf<ProcessLLMResponseArgs['warnings']>().toEqualTypeOf<unknown[] | undefined>();
    expectTypeOf<ProcessLLMResponseArgs['request']>().toEqualTypeOf<unknown>();
    expectTypeOf<ProcessLLMResponseArgs['rawResponse']>().toEqualTypeOf<unknown>();
    expectTypeOf<ProcessLLMResponseArgs['writer']>().toEqualTypeOf<ProcessorStreamWriter>();
    expectTypeOf<ProcessLLMResponseArgs['abortSignal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<ProcessLLMResponseArgs>().not.toHaveProperty('messageList');
  });

  it('processAPIError', () => {
    expectTypeOf<ContextOf<ProcessAPIErrorArgs>>().toEqualTypeOf<SpecContext>();
    expectTypeOf<ProcessAPIErrorArgs['abort']>().returns.toBeNever();
    expectTypeOf<ProcessAPIErrorArgs['error']>().toEqualTypeOf<unknown>();
    expectTypeOf<ProcessAPIErrorArgs['messages']>().toEqualTypeOf<MastraDBMessage[]>();
    expectTypeOf<ProcessAPIErrorArgs['messageList']>().toEqualTypeOf<MessageList>();
    expectTypeOf<ProcessAPIErrorArgs['stepNumber']>().toEqualTypeOf<number>();
    expectTypeOf<ProcessAPIErrorArgs['steps']>().toEqualTypeOf<StepResult[]>();
    expectTypeOf<ProcessAPIErrorArgs['state']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<ProcessAPIErrorArgs['writer']>().toEqualTypeOf<ProcessorStreamWriter>();
    expectTypeOf<ProcessAPIErrorArgs['abortSignal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<ProcessAPIErrorResult>().toEqualTypeOf<{ retry: boolean }>();
  });

  it('processOutputStream', () => {
    expectTypeOf<ContextOf<ProcessOutputStreamArgs>>().toEqualTypeOf<SpecContext>();
    expectTypeOf<ProcessOutputStreamArgs['abort']>().returns.toBeNever();
    expectTypeOf<ProcessOutputStreamArgs['part']>().toEqualTypeOf<ChunkType>();
    expectTypeOf<ProcessOutputStreamArgs['streamParts']>().toEqualTypeOf<ChunkType[]>();
    expectTypeOf<ProcessOutputStreamArgs['state']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<ProcessOutputStreamArgs['messageList']>().toEqualTypeOf<MessageList>();
    expectTypeOf<ProcessOutputStreamArgs['writer']>().toEqualTypeOf<ProcessorStreamWriter>();
    expectTypeOf<NonNullable<Processor['processOutputStream']>>().returns.toEqualTypeOf<
      ChunkType | null | undefined | Promise<ChunkType | null | undefined> | Observable<ChunkType | null | undefined>
    >();
  });

  it('processOutputStep', () => {
    expectTypeOf<ContextOf<ProcessOutputStepArgs>>().toEqualTypeOf<SpecContext>();
    expectTypeOf<ProcessOutputStepArgs['abort']>().returns.toBeNever();
    expectTypeOf<ProcessOutputStepArgs['messages']>().toEqualTypeOf<MastraDBMessage[]>();
    expectTypeOf<ProcessOutputStepArgs['messageList']>().toEqualTypeOf<MessageList>();
    expectTypeOf<ProcessOutputStepArgs['stepNumber']>().toEqualTypeOf<number>();
    expectTypeOf<ProcessOutputStepArgs['finishReason']>().toEqualTypeOf<RxFinishReason>();
    expectTypeOf<ProcessOutputStepArgs['finishReason']>().toExtend<string>();
    expectTypeOf<ProcessOutputStepArgs['providerMetadata']>().toEqualTypeOf<ProviderMetadata | undefined>();
    expectTypeOf<ProcessOutputStepArgs['toolCalls']>().toEqualTypeOf<ToolCallInfo[]>();
    expectTypeOf<ProcessOutputStepArgs['text']>().toEqualTypeOf<string>();
    expectTypeOf<ProcessOutputStepArgs['usage']>().toEqualTypeOf<LanguageModelUsage>();
    expectTypeOf<ProcessOutputStepArgs['systemMessages']>().toEqualTypeOf<CoreSystemMessage[]>();
    expectTypeOf<ProcessOutputStepArgs['steps']>().toEqualTypeOf<StepResult[]>();
    expectTypeOf<ProcessOutputStepArgs['state']>().toEqualTypeOf<Record<string, unknown>>();
  });

  it('processToolResult', () => {
    expectTypeOf<ContextOf<ProcessToolResultArgs>>().toEqualTypeOf<SpecContext>();
    expectTypeOf<ProcessToolResultArgs['abort']>().returns.toBeNever();
    expectTypeOf<ProcessToolResultArgs['messages']>().toEqualTypeOf<MastraDBMessage[]>();
    expectTypeOf<ProcessToolResultArgs['messageList']>().toEqualTypeOf<MessageList>();
    expectTypeOf<ProcessToolResultArgs['stepNumber']>().toEqualTypeOf<number>();
    expectTypeOf<ProcessToolResultArgs['toolName']>().toEqualTypeOf<string>();
    expectTypeOf<ProcessToolResultArgs['toolCallId']>().toEqualTypeOf<string>();
    expectTypeOf<ProcessToolResultArgs['args']>().toEqualTypeOf<unknown>();
    expectTypeOf<ProcessToolResultArgs['result']>().toEqualTypeOf<unknown>();
    expectTypeOf<ProcessToolResultArgs['providerExecuted']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<ProcessToolResultArgs['systemMessages']>().toEqualTypeOf<CoreSystemMessage[]>();
    expectTypeOf<ProcessToolResultArgs['steps']>().toEqualTypeOf<StepResult[]>();
    expectTypeOf<ProcessToolResultArgs['state']>().toEqualTypeOf<Record<string, unknown>>();
  });

  it('processOutputResult', () => {
    expectTypeOf<ContextOf<ProcessOutputResultArgs>>().toEqualTypeOf<SpecContext>();
    expectTypeOf<ProcessOutputResultArgs['abort']>().returns.toBeNever();
    expectTypeOf<ProcessOutputResultArgs['messages']>().toEqualTypeOf<MastraDBMessage[]>();
    expectTypeOf<ProcessOutputResultArgs['messageList']>().toEqualTypeOf<MessageList>();
    expectTypeOf<ProcessOutputResultArgs['state']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<ProcessOutputResultArgs['result']>().toEqualTypeOf<OutputResult>();
    expectTypeOf<OutputResult['text']>().toEqualTypeOf<string>();
    expectTypeOf<OutputResult['usage']>().toEqualTypeOf<LanguageModelUsage>();
    expectTypeOf<OutputResult['steps']>().toEqualTypeOf<StepResult[]>();
  });

  it('abort carries the processor\'s tripwire metadata type and never returns', () => {
    type Meta = { score: number };
    expectTypeOf<ProcessOutputStepArgs<Meta>['abort']>().parameters.toEqualTypeOf<[reason?: string, options?: TripWireOptions<Meta>]>();
    expectTypeOf<ProcessOutputStepArgs<Meta>['abort']>().returns.toBeNever();
    const guard: Processor<'guard', Meta> = {
      id: 'guard',
      processOutputStep: ({ abort }) => {
        // @ts-expect-error metadata must be a Meta
        abort('no', { metadata: { score: 'low' } });
      },
    };
    expectTypeOf(guard.id).toEqualTypeOf<'guard'>();
  });
});

describe('runProcessor types', () => {
  it('requires the arguments it cannot guess and infers the hook\'s result', async () => {
    // @ts-expect-error processOutputStream needs a part
    void runProcessor(new WordCounter(), 'processOutputStream');
    // @ts-expect-error LowercaseProcessor has no processOutputStream
    void runProcessor(new LowercaseProcessor(), 'processOutputStream', { part: chunk.textDelta('x') });
    const counted = await runProcessor(new WordCounter(), 'processOutputStream', { part: chunk.textDelta('x') });
    expectTypeOf(counted.result).toEqualTypeOf<ChunkType | undefined>();
    const lowered = await runProcessor(new LowercaseProcessor(), 'processInput');
    expectTypeOf(lowered.result).toEqualTypeOf<MastraDBMessage[] | undefined>();
  });
});
