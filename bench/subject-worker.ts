/**
 * A worker process holding one implementation (rxagent, the reference, or the AI SDK): the parent sends row
 * names, the worker times them and answers. Keeps each implementation's process-wide side effects
 * (e.g. the reference's AsyncLocalStorage, which turns on async_hooks promise hooks for the whole
 * process on Node 22) away from the other one.
 *
 * Started by bench/lib/worker-runner.ts: `node --expose-gc --import tsx bench/subject-worker.ts <subject> <profile>`.
 */
import { readFileSync } from 'node:fs';
import { aiSdkSubject } from './lib/ai-sdk-subject.js';
import { loadReferenceSubject } from './lib/reference-subject.js';
import { rxagentSubject } from './lib/rxagent-subject.js';
import { profiles, slowConsumer, timeWorkload, workloads, type SuiteProfile } from './lib/suite.js';
import type { BenchSubject } from './lib/subject.js';

/** Parent → worker. */
export type WorkerRequest = { id: number; kind: 'measure'; row: string } | { id: number; kind: 'slow'; chunks: number };
/** Worker → parent. */
export type WorkerReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string } | { ready: true; version: string };

const [subjectName = 'rxagent', profileName = 'quick'] = process.argv.slice(2);
const profile = profiles[profileName as SuiteProfile['name']];
const reference = subjectName === 'reference' ? await loadReferenceSubject() : undefined;
const subject: BenchSubject = reference ?? (subjectName === 'ai-sdk' ? aiSdkSubject : rxagentSubject);
const byRow = new Map(workloads(profile).map((workload) => [workload.row, workload]));
const send = (reply: WorkerReply) => (process.send as (message: unknown) => boolean)(reply);

process.on('message', (request: WorkerRequest) => {
  const work = async (): Promise<unknown> => {
    if (request.kind === 'slow') return slowConsumer(subject, request.chunks, 'async');
    const workload = byRow.get(request.row);
    if (workload === undefined) throw new Error(`unknown row ${request.row}`);
    return timeWorkload(workload, subject);
  };
  work().then(
    (value) => send({ id: request.id, ok: true, value }),
    (error: unknown) => send({ id: request.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
const aiVersion = (): string => (JSON.parse(readFileSync(new URL('../node_modules/ai/package.json', import.meta.url), 'utf8')) as { version: string }).version;
send({ ready: true, version: reference?.version ?? (subjectName === 'ai-sdk' ? aiVersion() : 'source') });
