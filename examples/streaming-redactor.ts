/**
 * A streaming redactor as a plain RxJS pipeline — no Agent: the `processOutputStream` operator over
 * a chunk stream, with e-mail addresses split across chunks redacted before they reach the client.
 *
 *   npx tsx examples/streaming-redactor.ts
 */
import { concatMap, from, of, delay } from 'rxjs';
import { createRunContext, ofChunkType, processOutputStream } from 'rxagent/operators';
import { RegexFilterProcessor } from 'rxagent/processors';
import { chunk } from 'rxagent/testing';

const pieces = ['Write to me at ', 'ada.love', 'lace@exam', 'ple.com any time', ', or call +44 20 7946 0958.'];
const chunks$ = from([chunk.textStart(), ...pieces.map((text) => chunk.textDelta(text)), chunk.textEnd(), chunk.finish()]).pipe(
  concatMap((item) => of(item).pipe(delay(40))), // arrives like a token stream
);

const context = createRunContext();
chunks$
  .pipe(
    processOutputStream([new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' })], context),
    ofChunkType('text-delta'),
  )
  .subscribe({
    next: (delta) => process.stdout.write(delta.payload.text),
    complete: () => process.stdout.write('\n'),
  });
