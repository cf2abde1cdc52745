import { describe, expect, it } from 'vitest';
import { clientErrorAnswer } from '../../src/devtools/internal/client-error.js';

/** A parse error as Node's HTTP server hands it to `clientError`. */
function parseError(code: string, rawPacket?: string): NodeJS.ErrnoException & { rawPacket?: Buffer } {
  return Object.assign(new Error(code), { code, ...(rawPacket === undefined ? {} : { rawPacket: Buffer.from(rawPacket) }) });
}

describe("the inspector's answer to what Node cannot parse", () => {
  it('a request Node timed out keeps its 408 (Node answers 408 itself when no clientError handler is set)', () => {
    expect(clientErrorAnswer(parseError('ERR_HTTP_REQUEST_TIMEOUT'))[0]).toBe(408);
  });

  it('a request line past 8 KB is a 414; long headers after a short line are a 431; anything else a 400', () => {
    expect(clientErrorAnswer(parseError('HPE_HEADER_OVERFLOW', `GET /api/run?id=${'x'.repeat(9000)} HTTP/1.1\r\n`))[0]).toBe(414);
    expect(clientErrorAnswer(parseError('HPE_HEADER_OVERFLOW', `GET /api/run?id=${'x'.repeat(9000)}`))[0]).toBe(414);
    expect(clientErrorAnswer(parseError('HPE_HEADER_OVERFLOW', `GET / HTTP/1.1\r\ncookie: ${'x'.repeat(20000)}`))[0]).toBe(431);
    expect(clientErrorAnswer(parseError('HPE_INVALID_METHOD'))[0]).toBe(400);
  });

  it('every answer is a JSON body naming the problem', () => {
    for (const code of ['ERR_HTTP_REQUEST_TIMEOUT', 'HPE_HEADER_OVERFLOW', 'HPE_INVALID_METHOD']) {
      const [, reason, body] = clientErrorAnswer(parseError(code));
      expect(reason).not.toBe('');
      expect(JSON.parse(JSON.stringify(body))).toEqual({ error: expect.any(String), message: expect.any(String) });
    }
  });
});
