/**
 * rxagent under test, from source (as `tsx` runs it). `RXAGENT_BENCH_SRC` points at another copy
 * of `src/` (e.g. the code before an optimisation, for `bench:compare -- --baseline-src DIR`).
 */
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { Agent as AgentClass } from '../../src/index.js';
import type { BenchAgent, BenchSubject } from './subject.js';

const sourceDir = process.env.RXAGENT_BENCH_SRC;
const { Agent } = (await import(
  sourceDir === undefined ? '../../src/index.js' : pathToFileURL(join(resolve(sourceDir), 'index.ts')).href
)) as { Agent: typeof AgentClass };

const echo = {
  description: 'Echoes its input.',
  inputSchema: z.object({ n: z.number() }),
  execute: async (input: { n: number }) => input,
};

/** The rxagent adapter. */
export const rxagentSubject: BenchSubject = {
  name: sourceDir === undefined ? 'rxagent' : 'baseline',
  agent({ model, inputProcessors, outputProcessors, tools }): BenchAgent {
    const agent = new Agent({
      id: 'bench',
      instructions: 'You are a benchmark.',
      model,
      ...(inputProcessors ? { inputProcessors: inputProcessors as never } : {}),
      ...(outputProcessors ? { outputProcessors: outputProcessors as never } : {}),
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
      stream$(prompt) {
        return new Promise<number>((resolve, reject) => {
          let count = 0;
          agent.stream$(prompt).subscribe({
            next: () => {
              count++;
            },
            error: reject,
            complete: () => resolve(count),
          });
        });
      },
    };
  },
};
