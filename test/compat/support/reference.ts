/**
 * The reference implementation's own processor classes (`@mastra/core`, pinned in
 * `bench/peer/package.json`), loaded from `bench/peer/node_modules` as a user would import them.
 * A missing install is an error (the suite fails, it does not skip): CI installs it in `.ci/run`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Processor } from '../../../src/contract/processor-types.js';

const peerDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'peer');
const coreDir = join(peerDir, 'node_modules', '@mastra', 'core');

/** A reference processor class: built from its own options, used unchanged as an rxagent processor. */
export type ReferenceProcessorClass = new (options?: Record<string, unknown>) => Processor;

/** The classes of `@mastra/core/processors` the suite runs. */
export interface ReferenceProcessors {
  ModerationProcessor: ReferenceProcessorClass;
  PromptInjectionDetector: ReferenceProcessorClass;
  PIIDetector: ReferenceProcessorClass;
  LanguageDetector: ReferenceProcessorClass;
  SystemPromptScrubber: ReferenceProcessorClass;
  RegexFilterProcessor: ReferenceProcessorClass;
  UnicodeNormalizer: ReferenceProcessorClass;
  BatchPartsProcessor: ReferenceProcessorClass;
  TokenLimiterProcessor: ReferenceProcessorClass;
  ToolCallFilter: ReferenceProcessorClass;
  StreamErrorRetryProcessor: ReferenceProcessorClass;
  PrefillErrorHandler: ReferenceProcessorClass;
  StructuredOutputProcessor: ReferenceProcessorClass;
}

/** Loads the pinned reference's processors; throws a clear error when `bench/peer` is not installed. */
export async function loadReferenceProcessors(): Promise<{ version: string; processors: ReferenceProcessors }> {
  const wanted = (JSON.parse(readFileSync(join(peerDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies['@mastra/core'];
  const manifest = join(coreDir, 'package.json');
  if (!existsSync(manifest)) {
    throw new Error(
      `compat suite: the reference @mastra/core@${String(wanted)} is not installed in bench/peer/node_modules. ` +
        'Install it with `cd bench/peer && npm ci --no-audit --no-fund` (CI does this in .ci/run).',
    );
  }
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  if (version !== wanted) {
    throw new Error(`compat suite: bench/peer has @mastra/core@${version}, the pinned version is ${String(wanted)}; run \`cd bench/peer && npm ci\`.`);
  }
  const entry = pathToFileURL(join(coreDir, 'dist', 'processors', 'index.js')).href;
  const processors = (await import(/* @vite-ignore */ entry)) as ReferenceProcessors;
  return { version, processors };
}
