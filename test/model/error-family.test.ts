/** Every error rxagent throws or streams is one marked family: stable name, marker, isInstance, cause. */
import { describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { lastValueFrom, toArray } from 'rxjs';
import { APICallError } from '@ai-sdk/provider';
import {
  Agent,
  AgentRunError,
  InvalidModelResponseError,
  ModelCallError,
  ProcessorError,
  RunAbortedError,
  RxAgentError,
  ToolExecutionError,
  type ChunkType,
} from '../../src/index.js';
import { finishPart, mockModel, textParts, toolCallParts } from '../../src/testing/index.js';
import { MissingTerminalError } from '../../src/loop/run/missing-terminal-error.js';
import tsupConfig from '../../tsup.config.js';

const cause = new Error('root cause');
const family = [
  { error: new ToolExecutionError({ toolName: 'lookup', toolCallId: 'call_1', cause }), name: 'ToolExecutionError', isInstance: ToolExecutionError.isInstance },
  { error: new RunAbortedError({ reason: cause }), name: 'AbortError', isInstance: RunAbortedError.isInstance },
  { error: new ModelCallError({ cause }), name: 'ModelCallError', isInstance: ModelCallError.isInstance },
  {
    error: new InvalidModelResponseError({ provider: 'acme', problem: 'no stream', cause }),
    name: 'InvalidModelResponseError',
    isInstance: InvalidModelResponseError.isInstance,
  },
  { error: new AgentRunError(cause), name: 'AgentRunError', isInstance: AgentRunError.isInstance },
];

describe('the RxAgentError family', () => {
  for (const { error, name, isInstance } of family) {
    it(`${name}: stable name, RxAgentError member, its own isInstance, cause kept`, () => {
      expect(error.name).toBe(name);
      expect(error).toBeInstanceOf(Error);
      expect(RxAgentError.isInstance(error)).toBe(true);
      expect(isInstance(error)).toBe(true);
      expect(error.cause).toBe(cause);
      // another family member is not mistaken for this one
      for (const other of family) if (other.error !== error) expect(isInstance(other.error)).toBe(false);
      expect(isInstance(new Error(error.message))).toBe(false);
    });

    it(`${name}: isInstance recognises a copy from another package instance (Symbol.for marker)`, () => {
      const markers = Object.getOwnPropertySymbols(error);
      expect(markers.map((symbol) => Symbol.keyFor(symbol))).toContain(`rxagent.error.${error.constructor.name}`);
      const foreign = Object.fromEntries(markers.map((symbol) => [symbol, true]));
      const copy = Object.assign(new Error('from a duplicated copy'), foreign);
      expect(isInstance(copy)).toBe(true);
    });
  }

  it('ToolExecutionError takes an object like the AI SDK errors, with a default message from the cause', () => {
    const error = new ToolExecutionError({ toolName: 'lookup', toolCallId: 'call_9', cause: new Error('db down') });
    expect(error).toMatchObject({ toolName: 'lookup', toolCallId: 'call_9', message: 'Tool "lookup" failed: db down' });
  });

  it('MissingTerminalError (a source that ended without a terminal chunk): stable name, RxAgentError member, its own Symbol.for marker', () => {
    const error = new MissingTerminalError();
    expect(error.name).toBe('MissingTerminalError');
    expect(RxAgentError.isInstance(error)).toBe(true);
    expect(MissingTerminalError.isInstance(error)).toBe(true);
    expect(Object.getOwnPropertySymbols(error).map((symbol) => Symbol.keyFor(symbol))).toContain('rxagent.error.MissingTerminalError');
    for (const { error: other } of family) expect(MissingTerminalError.isInstance(other)).toBe(false);
  });

  it('ModelCallError unwraps nested wrappers: error and cause are the provider error', () => {
    const apiError = new APICallError({ message: 'overloaded', url: 'https://x', requestBodyValues: {}, statusCode: 529 });
    const wrapped = new ModelCallError({ cause: new ModelCallError({ cause: apiError, source: 'stream-part' }) });
    expect(wrapped.error).toBe(apiError);
    expect(wrapped.cause).toBe(apiError);
    expect(ModelCallError.unwrap(wrapped)).toBe(apiError);
    expect(ModelCallError.unwrap('plain')).toBe('plain');
  });
});

describe('the family in runs', () => {
  it('an unknown tool streams a tool-error carrying a ToolExecutionError with toolName and toolCallId', async () => {
    let call = 0;
    const model = mockModel({
      parts: () => (call++ === 0 ? [...toolCallParts('missing', {}, { toolCallId: 'call_x' }), finishPart('tool-calls')] : [...textParts('ok'), finishPart()]),
    });
    const chunks = await lastValueFrom(new Agent({ id: 'a', instructions: 'x', model }).stream$('Hi').pipe(toArray()));
    const toolError = chunks.find((chunk): chunk is Extract<ChunkType, { type: 'tool-error' }> => chunk.type === 'tool-error');
    expect(ToolExecutionError.isInstance(toolError?.payload.error)).toBe(true);
    expect(toolError?.payload.error).toMatchObject({ name: 'ToolExecutionError', toolName: 'missing', toolCallId: 'call_x' });
  });

  it('an aborted generate() rejects with a RunAbortedError (name AbortError) carrying the reason', async () => {
    const controller = new AbortController();
    const model = mockModel({ parts: [...textParts('never'), finishPart()] });
    controller.abort('user left');
    const error: unknown = await new Agent({ id: 'a', instructions: 'x', model })
      .generate('Hi', { abortSignal: controller.signal })
      .catch((caught: unknown) => caught);
    expect(RunAbortedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ name: 'AbortError', reason: 'user left' });
  });

  it('a provider error part reaches the error chunk unwrapped (never the ModelCallError wrapper)', async () => {
    const apiError = new APICallError({ message: 'overloaded', url: 'https://x', requestBodyValues: {}, statusCode: 529 });
    const model = mockModel({ parts: [{ type: 'error', error: apiError }] });
    const chunks = await lastValueFrom(new Agent({ id: 'a', instructions: 'x', model }).stream$('Hi').pipe(toArray()));
    const terminal = chunks.at(-1) as Extract<ChunkType, { type: 'error' }>;
    expect(terminal.payload.error).toBe(apiError);
    const rejected: unknown = await new Agent({ id: 'a', instructions: 'x', model }).generate('Hi').catch((caught: unknown) => caught);
    expect(AgentRunError.isInstance(rejected) && (rejected as AgentRunError).cause).toBe(apiError);
  });
});

describe('bundling keeps class names', () => {
  it("tsup's esbuild options (no keepNames) keep names: a bundled ProcessorError's stack says ProcessorError, not _ProcessorError; MessageList and RequestContext too", async () => {
    const config = tsupConfig as { esbuildOptions?: (options: Record<string, unknown>, context: { format: string }) => void };
    const options: Record<string, unknown> = {};
    config.esbuildOptions?.(options, { format: 'esm' });
    const bundled = await build({
      stdin: {
        contents: [
          "export { ProcessorError } from './src/contract/errors/processor-error.ts';",
          "export { RequestContext } from './src/contract/request-context.ts';",
          "export { MessageList } from './src/message-list/message-list.ts';",
        ].join('\n'),
        resolveDir: new URL('../../', import.meta.url).pathname,
        loader: 'ts',
      },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      ...options,
    });
    const code = bundled.outputFiles[0]!.text;
    const module = (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as {
      ProcessorError: typeof ProcessorError;
      RequestContext: { name: string; readThrough(parent: unknown): unknown };
      MessageList: { name: string; deserialize(data: unknown): unknown };
    };
    expect(module.ProcessorError.name).toBe('ProcessorError');
    expect(module.RequestContext.name).toBe('RequestContext');
    expect(module.MessageList.name).toBe('MessageList');
    const stack = module.ProcessorError.fromThrown('p', 'processInput', new Error('x')).stack ?? '';
    expect(stack).toContain('ProcessorError.fromThrown');
    expect(stack).not.toContain('_ProcessorError');
    expect((module.RequestContext.readThrough(new Map()) as object).constructor.name).toBe('RequestContext');
    const restored = module.MessageList.deserialize({ messages: [], systemMessages: [], taggedSystemMessages: [], unsavedIds: [] });
    expect((restored as object).constructor.name).toBe('MessageList');
  });
});
