/** A runner whose subject lives in its own worker process (bench/subject-worker.ts). */
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerReply, WorkerRequest } from '../subject-worker.js';
import type { Runner, SuiteProfile, Timing, Workload } from './suite.js';

const workerPath = join(dirname(fileURLToPath(import.meta.url)), '..', 'subject-worker.ts');

/** A worker-process runner, plus what only a subject can do (the slow consumer). */
export interface WorkerRunner extends Runner {
  readonly version: string;
  slowConsumer(chunks: number): Promise<{ maxBuffered: number; received: number }>;
}

/** Starts the worker of `subject` and resolves once it loaded the implementation. */
export function startWorker(subject: 'rxagent' | 'reference' | 'ai-sdk', profile: SuiteProfile, options: { name?: string; env?: NodeJS.ProcessEnv } = {}): Promise<WorkerRunner> {
  const child = fork(workerPath, [subject, profile.name], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...options.env },
  });
  const name = options.name ?? subject;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  const call = (request: WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ ...request, id });
    });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      const error = new Error(`bench worker ${subject} exited with ${String(code)}`);
      for (const waiter of pending.values()) waiter.reject(error);
      reject(error);
    });
    child.on('message', (reply: WorkerReply) => {
      if ('ready' in reply) {
        resolve({
          name,
          version: reply.version,
          measures: (workload: Workload) => workload.by === '*' || workload.by === subject,
          measure: (workload: Workload) => call({ kind: 'measure', row: workload.row }) as Promise<Timing>,
          slowConsumer: (chunks: number) => call({ kind: 'slow', chunks }) as Promise<{ maxBuffered: number; received: number }>,
          close: () => {
            child.removeAllListeners('exit');
            child.kill();
          },
        });
        return;
      }
      const waiter = pending.get(reply.id);
      if (waiter === undefined) return;
      pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply.value);
      else waiter.reject(new Error(reply.error));
    });
  });
}
