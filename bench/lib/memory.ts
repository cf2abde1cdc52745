/** Runs bench/memory-worker.ts in a child process (its own heap and RSS) and parses its report. */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryReport } from '../memory-worker.js';
import type { SuiteProfile } from './suite.js';

const worker = join(dirname(fileURLToPath(import.meta.url)), '..', 'memory-worker.ts');

/** The memory workload of `profile` for `subject`, in a fresh Node process. */
export function measureMemory(subject: 'rxagent' | 'reference' | 'ai-sdk', profile: SuiteProfile, env?: NodeJS.ProcessEnv): Promise<MemoryReport> {
  const { streams, chunks, processors } = profile.memory;
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', worker, subject, String(streams), String(chunks), String(processors)],
      { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } },
    );
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (data: string) => {
      output += data;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const last = output.trim().split('\n').pop() ?? '';
      if (code !== 0) {
        reject(new Error(`memory-worker ${subject} exited with ${String(code)}: ${output}`));
        return;
      }
      try {
        resolve(JSON.parse(last) as MemoryReport);
      } catch (error) {
        reject(new Error(`memory-worker ${subject}: unreadable report ${JSON.stringify(last)} (${String(error)})`));
      }
    });
  });
}
