/**
 * The inspector's answers to a client that does not read, and to a run id too long for a URL.
 *
 * Found here (each failed before its fix):
 * - `GET /api/run` handed the whole record (up to `maxBytesPerRun`, 16 MiB) to the socket at once:
 *   a client that never read kept all of it queued in the server for as long as it stayed
 *   connected. Now the answer is written a slice at a time, the next only after `drain`, and a
 *   client that takes nothing for `RESPONSE_DRAIN_TIMEOUT_MS` is disconnected (virtual time here).
 * - a run id of ≈16 KB or more in `?id=` got Node's bare `431` (its request line is past Node's
 *   header limit, before the inspector sees it): now a `414` with a JSON body that says why.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { from, lastValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Agent, type ChunkType } from 'rxagent';
import { inspect, Inspector, type InspectorServer } from 'rxagent/devtools';
import { scriptedModel } from 'rxagent/testing';
import { FeedHub, handleRequest, RESPONSE_DRAIN_TIMEOUT_MS, RESPONSE_SLICE_CHARS, type InspectorRoutesContext } from '../../src/devtools/internal/routes.js';

const chunkOf = (type: string, payload: Record<string, unknown> = {}): ChunkType => ({ type, runId: 'run-big', from: 'AGENT', payload }) as unknown as ChunkType;

/** An inspector holding one run of a few MB. */
async function bigRun(): Promise<{ inspector: Inspector; runId: string; json: string }> {
  const inspector = new Inspector();
  const text = 'x'.repeat(10_000);
  const chunks = [chunkOf('start'), ...Array.from({ length: 1_000 }, (_, index) => chunkOf('text-delta', { id: 't0', text: `${index}${text}` })), chunkOf('finish')];
  await lastValueFrom(inspector.trace(() => from(chunks)));
  const runId = inspector.runs()[0]!.runId;
  return { inspector, runId, json: JSON.stringify(inspector.run(runId)) };
}

function contextOf(inspector: Inspector): InspectorRoutesContext {
  return {
    agent: { id: 'a', stream$: () => from([]) },
    inspector,
    assets: new Map(),
    callOptions: {},
    suggestions: [],
    hosts: new Set(['127.0.0.1']),
    feeds: new FeedHub(inspector),
  };
}

/** A response whose client reads only when the test says: `write` is false until `drain()`. */
class SlowResponse extends EventEmitter {
  headersSent = false;
  writableEnded = false;
  destroyed = false;
  status = 0;
  written = '';
  writableLength = 0;
  writeHead(status: number) {
    this.status = status;
    this.headersSent = true;
    return this;
  }
  write(piece: string | Buffer) {
    this.written += String(piece);
    this.writableLength += Buffer.byteLength(String(piece));
    return false;
  }
  end(piece?: string | Buffer) {
    if (piece !== undefined) this.write(piece);
    this.writableEnded = true;
    return this;
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
    return this;
  }
  /** The client took everything: the socket asks for more. */
  drain() {
    this.writableLength = 0;
    this.emit('drain');
  }
}

const request = (url: string) => ({ method: 'GET', url, headers: { host: '127.0.0.1' } }) as unknown as IncomingMessage;

describe('GET /api/run to a client that does not read', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes one slice and waits for drain: a client that reads nothing holds at most one slice in the server (was: the whole record)', async () => {
    const { inspector, runId, json } = await bigRun();
    expect(json.length).toBeGreaterThan(2_000_000);
    const response = new SlowResponse();
    await handleRequest(contextOf(inspector), request(`/api/run?id=${encodeURIComponent(runId)}`), response as unknown as ServerResponse);
    expect(response.status).toBe(200);
    expect(response.written.length).toBeLessThanOrEqual(RESPONSE_SLICE_CHARS);
    expect(response.writableEnded).toBe(false);
    // the client reads: slice after slice, then the end, and the body is the record
    for (let turn = 0; turn < 10_000 && !response.writableEnded; turn++) response.drain();
    expect(response.writableEnded).toBe(true);
    expect(response.written).toBe(json);
    response.emit('close');
  });

  it('a client that takes nothing for RESPONSE_DRAIN_TIMEOUT_MS is disconnected, and nothing more is written', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { inspector, runId } = await bigRun();
    const response = new SlowResponse();
    await handleRequest(contextOf(inspector), request(`/api/run?id=${encodeURIComponent(runId)}`), response as unknown as ServerResponse);
    response.drain();
    const written = response.written.length;
    vi.advanceTimersByTime(RESPONSE_DRAIN_TIMEOUT_MS - 1);
    expect(response.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(response.destroyed).toBe(true);
    response.drain();
    expect(response.written.length).toBe(written);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a client that leaves mid-answer: the wait ends, no timer is left', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { inspector, runId } = await bigRun();
    const response = new SlowResponse();
    await handleRequest(contextOf(inspector), request(`/api/run?id=${encodeURIComponent(runId)}`), response as unknown as ServerResponse);
    response.emit('close');
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('a run id too long for a URL', () => {
  let server: InspectorServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** Sends a raw GET and reads the whole answer (the status line and the body). */
  function rawGet(port: number, path: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
      let answer = '';
      socket.on('data', (data) => (answer += data.toString('utf8')));
      socket.on('end', () => resolve(answer));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  it('?id= of 20,000 characters: a 414 naming the limit, not a bare 431', { timeout: 30_000 }, async () => {
    server = await inspect(new Agent({ id: 'a', model: scriptedModel({ rules: [] }) }), { port: 0 });
    const answer = await rawGet(server.port, `/api/run?id=${'r'.repeat(20_000)}`);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 414 URI Too Long');
    expect(answer).toContain('"error":"uri-too-long"');
    expect(answer).toMatch(/16 KB|16,384/);
  });

  it('headers past the limit with a short URL stay a 431, with a body that says so', { timeout: 30_000 }, async () => {
    server = await inspect(new Agent({ id: 'a', model: scriptedModel({ rules: [] }) }), { port: 0 });
    const answer = await new Promise<string>((resolve, reject) => {
      const port = server!.port;
      const socket = connect(port, '127.0.0.1', () => socket.write(`GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'b'.repeat(20_000)}\r\nConnection: close\r\n\r\n`));
      let text = '';
      socket.on('data', (data) => (text += data.toString('utf8')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(answer).toContain('"error":"headers-too-large"');
  });

  it('an id just under the limit still opens (404 for an unknown run, not an error of the size)', { timeout: 30_000 }, async () => {
    server = await inspect(new Agent({ id: 'a', model: scriptedModel({ rules: [] }) }), { port: 0 });
    const answer = await rawGet(server.port, `/api/run?id=${'r'.repeat(15_000)}`);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
  });
});
