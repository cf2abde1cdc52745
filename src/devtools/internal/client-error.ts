/** What the inspector answers a request Node could not parse (its server's `clientError`). */

/** The request-line length past which a request that overflowed Node's header limit is called a too-long URI. */
const LONG_REQUEST_LINE = 8 * 1024;

/**
 * What Node cannot parse, answered in words: a request whose URL and headers are past Node's limit
 * (16 KB, `--max-http-header-size`) never reaches the routes — a run id that long in `?id=` — and
 * gets a `414` when its request line is what is long (`431` for long headers), each with a JSON
 * body that says so, instead of a bare status. A request Node timed out gets its `408`; anything else
 * Node rejects is a plain `400`.
 */
export function clientErrorAnswer(error: NodeJS.ErrnoException & { rawPacket?: Buffer }): readonly [number, string, { error: string; message: string }] {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'Request Timeout', { error: 'request-timeout', message: 'The request was not received in time.' }];
  if (error.code !== 'HPE_HEADER_OVERFLOW') return [400, 'Bad Request', { error: 'bad-request', message: 'The request could not be read as HTTP.' }];
  const raw = error.rawPacket;
  const lineEnd = raw === undefined ? -1 : raw.indexOf('\r\n');
  if (lineEnd === -1 || lineEnd > LONG_REQUEST_LINE) {
    return [414, 'URI Too Long', { error: 'uri-too-long', message: `The URL is past the 16 KB (16,384 bytes) Node reads of a request line and its headers: a run id this long cannot be named in a URL. Read such a run from its journal (journal.getRun / read$).` }];
  }
  return [431, 'Request Header Fields Too Large', { error: 'headers-too-large', message: 'The request headers are past the 16 KB (16,384 bytes) Node reads of a request line and its headers.' }];
}
