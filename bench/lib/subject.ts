/**
 * What a benchmarked implementation offers the workloads. Both adapters (rxagent, the reference)
 * take the same model objects and the same processor object literals.
 */
import type { MinimalModel } from '../minimal-model.js';

/** A processor as both implementations accept it: an object literal with hooks. */
export type BenchProcessor = { id: string } & Record<string, unknown>;

/** The `fullStream` of a started `stream()` call. */
export type ChunkStream = ReadableStream<unknown>;

/** One implementation under test. */
export interface BenchSubject {
  readonly name: string;
  /** A ready agent for one workload configuration (built outside the timed region). */
  agent(config: { model: MinimalModel; inputProcessors?: BenchProcessor[]; outputProcessors?: BenchProcessor[]; tools?: boolean }): BenchAgent;
}

/** An agent of one subject. */
export interface BenchAgent {
  /** `stream()`: resolves with `fullStream` (the run is started). */
  stream(prompt: string): Promise<ChunkStream>;
  /** `generate()`: resolves with the text. */
  generate(prompt: string, maxSteps?: number): Promise<string>;
  /** rxagent only: the run as `stream$()`, resolved with the chunk count when it completes. */
  stream$?(prompt: string): Promise<number>;
}

/** Reads a chunk stream to its end; returns how many chunks it had. */
export async function drain(stream: ChunkStream): Promise<number> {
  const reader = stream.getReader();
  let count = 0;
  for (;;) {
    const { done } = await reader.read();
    if (done) return count;
    count++;
  }
}
