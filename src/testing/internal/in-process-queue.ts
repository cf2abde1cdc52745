/**
 * A `RunQueue` in one process for the conformance kit's takeover mode: the durable worker's real
 * code path (claim, execute, checkpoint, take over from the last commit) with pg-boss's part played
 * by hand. A job is delivered when the kit says so, to the handler of whichever worker works its
 * queue now; a delivery whose handler rejects is a failed attempt, as pg-boss would count it, and
 * the job stays for the next delivery (the takeover).
 */
import type { JobPolicies, RunJob, RunQueue } from '../../durable/index.js';

interface QueuedJob {
  readonly name: string;
  readonly id: string;
  readonly data: RunJob['data'];
  state: 'created' | 'active' | 'completed' | 'failed';
}

/** A queue whose jobs run when {@link InProcessQueue.deliver} is called. */
export class InProcessQueue implements RunQueue {
  readonly #jobs: QueuedJob[] = [];
  readonly #handlers = new Map<string, { id: string; handler: (jobs: RunJob[]) => Promise<unknown> }>();
  #works = 0;

  async createQueue(_name: string, _options?: JobPolicies): Promise<void> {}

  /** Schedules nothing: the kit's runs are short, the journal's retention purge never due. */
  async schedule(_name: string, _cron: string): Promise<void> {}

  async send(name: string, data: object, options: JobPolicies & { id: string }): Promise<string | null> {
    if (this.#jobs.some((job) => job.id === options.id)) return null;
    this.#jobs.push({ name, id: options.id, data: data as RunJob['data'], state: 'created' });
    return options.id;
  }

  async work(name: string, _options: object, handler: (jobs: RunJob[]) => Promise<unknown>): Promise<string> {
    const id = `work-${++this.#works}`;
    this.#handlers.set(name, { id, handler });
    return id;
  }

  async getJobById(name: string, id: string): Promise<{ readonly state: string } | null> {
    const job = this.#jobs.find((candidate) => candidate.name === name && candidate.id === id);
    return job === undefined ? null : { state: job.state };
  }

  async offWork(name: string, options?: { id?: string }): Promise<void> {
    const current = this.#handlers.get(name);
    if (current !== undefined && (options?.id === undefined || options.id === current.id)) this.#handlers.delete(name);
  }

  /**
   * Hands the oldest job not completed of the run to the worker working its queue: `completed`
   * when its handler resolved, `failed` when it rejected (the job stays, for another delivery).
   */
  async deliver(runId: string): Promise<{ outcome: 'completed' } | { outcome: 'failed'; error: unknown }> {
    const job = this.#jobs.find((candidate) => candidate.data.runId === runId && candidate.state !== 'completed');
    if (job === undefined) throw new Error(`conformance: no job of run ${runId} to deliver`);
    const worker = this.#handlers.get(job.name);
    if (worker === undefined) throw new Error(`conformance: no worker works ${job.name}`);
    job.state = 'active';
    try {
      await worker.handler([{ id: job.id, data: job.data, signal: new AbortController().signal }]);
      job.state = 'completed';
      return { outcome: 'completed' };
    } catch (error) {
      job.state = 'failed';
      return { outcome: 'failed', error };
    }
  }
}
