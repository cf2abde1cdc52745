/** A journaled run as a UI message stream, from any instance, resumable after any UI chunk. */
import type { UIMessageChunk } from 'ai';
import type { RunJournal } from '../storage/index.js';
import { journalUIEvents, planResume, uiEventStream } from './internal/journal-ui-events.js';
import type { UIChunkEncoderOptions } from './internal/ui-chunk-encoder.js';

/**
 * Options of {@link resumeUIMessageStream}: the encoder options of `toUIMessageStream` (live
 * release only) and the cursor.
 *
 * @example
 * ```ts
 * import type { ResumeUIMessageStreamOptions } from 'rxagent/ai-sdk';
 * const options: ResumeUIMessageStreamOptions = { after: request.headers.get('last-event-id'), sendReasoning: false };
 * ```
 */
export interface ResumeUIMessageStreamOptions extends UIChunkEncoderOptions {
  /**
   * Resume after this UI chunk: `<seq>:<k>` (an SSE id of `resumeUIMessageStreamResponse`), or
   * `<seq>` (after every UI chunk of entry seq). `null`/`undefined`/`''`: the whole run.
   */
  after?: string | null;
}

/**
 * The run's UI message chunks read from its journal, as `toUIMessageStream` would have encoded
 * them, from any instance: the whole run (no cursor) or the rest after a UI chunk id
 * (`<seq>:<k>`); live until the terminal chunk. Encoding is deterministic (the `start` chunk's
 * journaled `messageId` is the message id), so every instance yields the same chunks. Reading
 * pauses while the stream's reader does. Errors (`RunNotFoundError`, `JournalCursorError`,
 * `JournalSchemaError`, a storage failure) error the stream.
 *
 * @example
 * ```ts
 * import { readUIMessageStream } from 'ai';
 * import { resumeUIMessageStream } from 'rxagent/ai-sdk';
 * for await (const message of readUIMessageStream({ stream: resumeUIMessageStream(journal, runId) })) console.log(message.parts);
 * ```
 */
export function resumeUIMessageStream(journal: RunJournal, runId: string, options: ResumeUIMessageStreamOptions = {}): ReadableStream<UIMessageChunk> {
  const { after, ...encoderOptions } = options;
  return uiEventStream(
    () => planResume(journal, runId, after),
    (plan, ready) => journalUIEvents(journal, runId, plan, encoderOptions, ready),
    (events) => events.map((event) => event.chunk),
  );
}
