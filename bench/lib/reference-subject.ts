/** The reference implementation (`@mastra/core`, pinned in bench/peer) under test. */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type { MinimalModel } from '../minimal-model.js';
import { ensurePeer, peerDir } from './peer.js';
import type { BenchAgent, BenchProcessor, BenchSubject, ChunkStream } from './subject.js';

/** The part of the reference's API the workloads use. */
interface ReferenceAgent {
  stream(prompt: string, options?: object): Promise<{ fullStream: ChunkStream }>;
  generate(prompt: string, options?: object): Promise<{ text: string }>;
}
interface ReferenceModule {
  Agent: new (config: {
    id: string;
    name: string;
    instructions: string;
    model: MinimalModel;
    inputProcessors?: BenchProcessor[];
    outputProcessors?: BenchProcessor[];
    tools?: Record<string, unknown>;
  }) => ReferenceAgent;
  createTool(options: { id: string; description: string; inputSchema: unknown; execute: (input: { n: number }) => Promise<unknown> }): unknown;
  z: { object(shape: Record<string, unknown>): unknown; number(): unknown };
  version: string;
}

/** Loads the reference (installing it on first use) and returns its adapter. */
export async function loadReferenceSubject(): Promise<BenchSubject & { version: string }> {
  ensurePeer();
  const reference = (await import(pathToFileURL(join(peerDir, 'index.mjs')).href)) as ReferenceModule;
  const echo = reference.createTool({
    id: 'echo',
    description: 'Echoes its input.',
    inputSchema: reference.z.object({ n: reference.z.number() }),
    execute: async (input) => input,
  });
  return {
    name: 'reference',
    version: reference.version,
    agent({ model, inputProcessors, outputProcessors, tools }): BenchAgent {
      const agent = new reference.Agent({
        id: 'bench',
        name: 'bench',
        instructions: 'You are a benchmark.',
        model,
        ...(inputProcessors ? { inputProcessors } : {}),
        ...(outputProcessors ? { outputProcessors } : {}),
        ...(tools ? { tools: { echo } } : {}),
      });
      return {
        async stream(prompt) {
          const output = await agent.stream(prompt);
          return output.fullStream;
        },
        async generate(prompt, maxSteps) {
          const result = await agent.generate(prompt, maxSteps === undefined ? {} : { maxSteps });
          return result.text;
        },
      };
    },
  };
}
