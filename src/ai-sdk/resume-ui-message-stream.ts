/** A journaled run as a UI message stream, from any instance, resumable after any UI chunk. */
import type { UIMessageChunk } from 'ai';
import { assertRunAccess, type RunAccess, type RunJournal } from '../storage/index.js';
import { journalUIEvents, planResume, uiEventStream } from './internal/journal-ui-events.js';
import type { ToUIMessageStreamOptions } from './to-ui-message-stream.js';

/**
 * Options of {@link resumeUIMessageStream}: who may read the run (`authorize` + `request`, or
 * `unsafeNoAuthorization: true`; see `RunAccess` in `rxagent/durable`), the encoder options of
 * `toUIMessageStream` (live release only) and the cursor.
 *
 * @example
 * ```ts
 * import type { ResumeUIMessageStreamOptions } from 'rxagent/ai-sdk';
 * const options: ResumeUIMessageStreamOptions = { request, authorize, after: request.headers.get('last-event-id'), sendReasoning: false };
 * ```
 */
export type ResumeUIMessageStreamOptions = RunAccess &
  Omit<ToUIMessageStreamOptions, 'release'> & {
    /**
     * Resume after this UI chunk: `<seq>:<k>` (an SSE id of `resumeUIMessageStreamResponse`), or
     * `<seq>` (after every UI chunk of entry seq). `null`/`undefined`/`''`: the whole run.
     */
    after?: string | null;
  };

/**
 * The run's UI message chunks read from its journal, as `toUIMessageStream` would have encoded
 * them, from any instance: the whole run (no cursor) or the rest after a UI chunk id
 * (`<seq>:<k>`); live until the terminal chunk. Encoding is deterministic (the `start` chunk's
 * journaled `messageId` is the message id), so every instance yields the same chunks. Reading
 * pauses while the stream's reader does. Errors (`RunNotFoundError` — also for a run `authorize`
 * refuses —, `JournalCursorError`, `JournalSchemaError`, `MalformedJournalEntryError` for a row it
 * cannot serve, a storage failure) error the stream. Errors of the run reach `onError` in their
 * client-safe form. Without `authorize` or `unsafeNoAuthorization` it throws
 * `MissingAuthorizationError`.
 *
 * @example
 * ```ts
 * import { readUIMessageStream } from 'ai';
 * import { resumeUIMessageStream } from 'rxagent/ai-sdk';
 * import { runTokenAuthorization } from 'rxagent/durable';
 * const stream = resumeUIMessageStream(journal, runId, { request, authorize: runTokenAuthorization({ secret }) });
 * for await (const message of readUIMessageStream({ stream })) console.log(message.parts);
 * ```
 */
export function resumeUIMessageStream(journal: RunJournal, runId: string, options: ResumeUIMessageStreamOptions): ReadableStream<UIMessageChunk> {
  assertRunAccess('resumeUIMessageStream', options);
  const { after, authorize, unsafeNoAuthorization, request, ...encoderOptions } = options;
  const access = { authorize, unsafeNoAuthorization, request } as RunAccess;
  return uiEventStream(
    () => planResume(journal, runId, after, access),
    (plan, ready) => journalUIEvents(journal, runId, plan, encoderOptions, ready),
    (events) => events.map((event) => event.chunk),
    { runId },
  );
}
