/**
 * rxagent under test, from source (as `tsx` runs it). `RXAGENT_BENCH_SRC` points at another copy
 * of `src/` (e.g. the code before an optimisation, for `bench:compare -- --baseline-src DIR`), or at a
 * built `dist/` (`index.js`).
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { Agent as AgentClass } from '../../src/index.js';
import type { BenchAgent, BenchSubject } from './subject.js';

const sourceDir = process.env.RXAGENT_BENCH_SRC || undefined;
/** `src/`-like copies have `index.ts`; a built `dist/` has `index.js`. */
const entry = (dir: string) => pathToFileURL(join(resolve(dir), existsSync(join(resolve(dir), 'index.ts')) ? 'index.ts' : 'index.js')).href;
const { Agent } = (await import(sourceDir === undefined ? '../../src/index.js' : entry(sourceDir))) as { Agent: typeof AgentClass };

const echo = {
  description: 'Echoes its input.',
  inputSchema: z.object({ n: z.number() }),
  execute: async (input: { n: number }) => input,
};

/** The rxagent adapter. */
export const rxagentSubject: BenchSubject = {
  name: 'rxagent',
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
