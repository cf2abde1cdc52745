/**
 * The AI SDK itself (`ai`'s `streamText` / `generateText`) under test: what a user would pick
 * instead of an agent framework. The same model objects; output-stream processors become
 * `experimental_transform` stages (one `TransformStream` per processor, calling its
 * `processOutputStream` on every part), input processors are called on the messages before
 * `generateText` (the AI SDK has no such hook), tools are `tool()`s with `stopWhen`.
 */
import { generateText, stepCountIs, streamText, tool, type ModelMessage, type StreamTextTransform, type ToolSet } from 'ai';
import { z } from 'zod';
import type { BenchAgent, BenchProcessor, BenchSubject } from './subject.js';

type OutputHook = (args: { part: unknown }) => unknown;
type InputHook = (args: { messages: ModelMessage[] }) => ModelMessage[] | Promise<ModelMessage[]>;
type StepHook = (args: { messages: ModelMessage[] }) => unknown;

const tools = {
  echo: tool({
    description: 'Echoes its input.',
    inputSchema: z.object({ n: z.number() }),
    execute: async (input: { n: number }) => input,
  }),
} satisfies ToolSet;

/** One `processOutputStream` as a transform stage: sync hooks stay sync, async ones are awaited. */
function transformOf(hook: OutputHook): StreamTextTransform<ToolSet> {
  return () =>
    new TransformStream({
      transform(part, controller) {
        const result = hook({ part });
        if (result instanceof Promise) {
          return result.then((value) => {
            if (value != null) controller.enqueue(value as typeof part);
          });
        }
        if (result != null) controller.enqueue(result as typeof part);
        return undefined;
      },
    });
}

/** The AI SDK adapter. */
export const aiSdkSubject: BenchSubject = {
  name: 'ai-sdk',
  agent({ model, inputProcessors, outputProcessors, tools: withTools }): BenchAgent {
    const transforms = (outputProcessors ?? []).map((processor: BenchProcessor) => transformOf(processor.processOutputStream as OutputHook));
    const hooks = <T>(name: string, list: BenchProcessor[] | undefined): T[] =>
      (list ?? []).flatMap((processor) => (typeof processor[name] === 'function' ? [processor[name] as T] : []));
    const inputHooks = hooks<InputHook>('processInput', inputProcessors);
    // step processors: processInputStep → prepareStep, processOutputStep → onStepFinish
    const inputStepHooks = hooks<StepHook>('processInputStep', inputProcessors);
    const outputStepHooks = hooks<StepHook>('processOutputStep', outputProcessors);
    return {
      async stream(prompt) {
        const result = streamText({
          model,
          system: 'You are a benchmark.',
          prompt,
          ...(transforms.length > 0 ? { experimental_transform: transforms } : {}),
        });
        return result.fullStream as ReadableStream<unknown>;
      },
      async generate(prompt, maxSteps) {
        let messages: ModelMessage[] = [{ role: 'user', content: prompt }];
        for (const hook of inputHooks) messages = await hook({ messages });
        const result = await generateText({
          model,
          system: 'You are a benchmark.',
          messages,
          ...(withTools ? { tools, stopWhen: stepCountIs(maxSteps ?? 5) } : {}),
          ...(inputStepHooks.length > 0
            ? {
                prepareStep: async ({ messages: stepMessages }: { messages: ModelMessage[] }) => {
                  for (const hook of inputStepHooks) await hook({ messages: stepMessages });
                  return undefined;
                },
              }
            : {}),
          ...(outputStepHooks.length > 0
            ? {
                onStepFinish: async ({ response }: { response: { messages: ModelMessage[] } }) => {
                  for (const hook of outputStepHooks) await hook({ messages: response.messages });
                },
              }
            : {}),
        });
        return result.text;
      },
    };
  },
};
