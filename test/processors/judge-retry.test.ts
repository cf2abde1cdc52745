/**
 * Issue 31 §1: a guard's judge call through infrastructure faults. 408/429/5xx, timeouts and
 * network errors are retried with backoff (honouring `Retry-After`) within `judgeDeadlineMs`; then
 * `errorStrategy` applies, whose default blocks. 4xx and unreadable answers are not retried.
 * Everything runs on fake timers: no test waits the real 10 s.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { processInput } from '../../src/operators/process-input.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { InvalidProcessorOptionError } from '../../src/contract/errors/invalid-processor-option-error.js';
import { ModerationProcessor, type ModerationOptions } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { PromptInjectionDetector } from '../../src/processors/prompt-injection-detector.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { LanguageDetector } from '../../src/processors/language-detector.js';
import { backoffMs, retryAfterMs } from '../../src/processors/internal/judge-retry.js';
import { APICallError } from '@ai-sdk/provider';
import { contextWith, listWith, textMessage, textOf } from './support/harness.js';
import { faultJudge, type Fault } from './support/fault-judge.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(new Date('2026-12-06T12:00:00Z'));
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs the processor's input hook on `text`, advancing fake time until it settles. */
async function judgeInput(options: Partial<ModerationOptions> & { model: ModerationOptions['model'] }, text = 'hello there') {
  const list = listWith([textMessage('u1', 'user', text)]);
  const processor = new ModerationProcessor(options);
  let settled = false;
  const pending = lastValueFrom(of(list).pipe(processInput([processor], contextWith(list))))
    .catch((error: unknown) => error)
    .finally(() => {
      settled = true;
    });
  const started = Date.now();
  for (let step = 0; step < 400 && !settled; step++) await vi.advanceTimersByTimeAsync(50);
  const result = await pending;
  return { result, list, elapsed: Date.now() - started };
}

const run = (script: Fault[], options: Partial<ModerationOptions> = {}, text?: string) => {
  const model = faultJudge(script);
  return { model, outcome: judgeInput({ model, ...options }, text) };
};

describe('judge calls through infrastructure faults', () => {
  it('429 with Retry-After (seconds): waits at least that long, then the answer decides', async () => {
    const { model, outcome } = run([{ kind: 'status', status: 429, retryAfter: '3' }, { kind: 'ok' }]);
    const { result, list } = await outcome;
    expect(TripWire.isInstance(result)).toBe(false);
    expect(list.get.input.db().map(textOf)).toEqual(['hello there']);
    expect(model.starts).toHaveLength(2);
    expect((model.starts[1] as number) - (model.starts[0] as number)).toBeGreaterThanOrEqual(3_000);
  });

  it('429 with Retry-After as an HTTP date: waits until then', async () => {
    const at = new Date(Date.now() + 4_000).toUTCString();
    const { model, outcome } = run([{ kind: 'status', status: 429, retryAfter: at }, { kind: 'ok' }]);
    await outcome;
    expect(model.starts).toHaveLength(2);
    expect((model.starts[1] as number) - (model.starts[0] as number)).toBeGreaterThanOrEqual(3_000);
  });

  it('503 then ok: retried after a short backoff, the content passes', async () => {
    const { model, outcome } = run([{ kind: 'status', status: 503 }, { kind: 'ok' }]);
    const { result, elapsed } = await outcome;
    expect(TripWire.isInstance(result)).toBe(false);
    expect(model.starts).toHaveLength(2);
    expect(elapsed).toBeLessThan(1_000);
  });

  it('a network error, a 408 and a 502 in a row, then ok: each retried, the backoff grows', async () => {
    const { model, outcome } = run([{ kind: 'throw' }, { kind: 'status', status: 408 }, { kind: 'status', status: 502 }, { kind: 'ok' }]);
    const { result } = await outcome;
    expect(TripWire.isInstance(result)).toBe(false);
    expect(model.starts).toHaveLength(4);
    const gaps = model.starts.slice(1).map((start, index) => start - (model.starts[index] as number));
    expect(gaps[2]).toBeGreaterThan(gaps[0] as number);
  });

  it('a hung call is aborted at judgeDeadlineMs and the content is blocked (the default)', async () => {
    const { model, outcome } = run([{ kind: 'hang' }], { judgeDeadlineMs: 5_000 });
    const { result, elapsed } = await outcome;
    expect(TripWire.isInstance(result)).toBe(true);
    expect((result as TripWire).reason).toMatch(/did not answer in time/);
    expect(model.starts).toHaveLength(1);
    expect(elapsed).toBeGreaterThanOrEqual(5_000);
    expect(elapsed).toBeLessThan(5_200);
  });

  it('a provider timeout (TimeoutError) is retried, then ok', async () => {
    const timeout = Object.assign(new Error('The operation timed out.'), { name: 'TimeoutError' });
    const model = faultJudge([{ kind: 'ok' }]);
    const original = model.doStream.bind(model);
    let first = true;
    model.doStream = async (options) => {
      if (first) {
        first = false;
        model.starts.push(Date.now());
        throw timeout;
      }
      return original(options);
    };
    const { result } = await judgeInput({ model });
    expect(TripWire.isInstance(result)).toBe(false);
    expect(model.starts).toHaveLength(2);
  });

  for (const status of [400, 401, 403]) {
    it(`HTTP ${status} is not retried (and blocks)`, async () => {
      const { model, outcome } = run([{ kind: 'status', status }, { kind: 'ok' }]);
      const { result } = await outcome;
      expect(model.starts).toHaveLength(1);
      expect(TripWire.isInstance(result)).toBe(true);
    });
  }

  it('an unreadable answer is not retried (and blocks)', async () => {
    const { model, outcome } = run([{ kind: 'ok', answer: 'I would rather not answer in JSON.' }, { kind: 'ok' }]);
    const { result } = await outcome;
    expect(model.starts).toHaveLength(1);
    expect(TripWire.isInstance(result)).toBe(true);
  });

  it('deadline exhausted by 503s: blocked by default, within the deadline, after several attempts', async () => {
    const onError = vi.fn();
    const { model, outcome } = run([{ kind: 'status', status: 503 }], { onError });
    const { result, elapsed, list } = await outcome;
    expect(TripWire.isInstance(result)).toBe(true);
    expect((result as TripWire).reason).toMatch(/could not be reached .*attempts within judgeDeadlineMs 10000.*errorStrategy is 'strict'/);
    expect(model.starts.length).toBeGreaterThanOrEqual(4);
    expect(elapsed).toBeLessThanOrEqual(10_100);
    expect((model.starts.at(-1) as number) - (model.starts[0] as number)).toBeLessThan(10_000);
    expect(onError).toHaveBeenCalledTimes(1);
    expect(list.get.input.db().map(textOf)).toEqual(['hello there']); // (blocked by the tripwire, not removed)
  });

  it("a Retry-After past the deadline ends the call at once (no useless wait), blocked", async () => {
    const { model, outcome } = run([{ kind: 'status', status: 429, retryAfter: '60' }, { kind: 'ok' }]);
    const { result, elapsed } = await outcome;
    expect(model.starts).toHaveLength(1);
    expect(TripWire.isInstance(result)).toBe(true);
    expect(elapsed).toBeLessThan(200);
  });

  it("errorStrategy 'fail-open': the content goes through and onFailOpen is told each time", async () => {
    const onFailOpen = vi.fn();
    const { outcome } = run([{ kind: 'status', status: 503 }], { errorStrategy: 'fail-open', onFailOpen });
    const { result, list } = await outcome;
    expect(TripWire.isInstance(result)).toBe(false);
    expect(list.get.input.db().map(textOf)).toEqual(['hello there']);
    expect(onFailOpen).toHaveBeenCalledTimes(1);
    expect(onFailOpen.mock.calls[0]?.[0]).toMatchObject({ processorId: 'moderation', kind: 'infrastructure' });
    expect((onFailOpen.mock.calls[0]?.[0] as { attempts: number }).attempts).toBeGreaterThan(1);
  });

  it("'warn' is kept as a deprecated alias of 'fail-open' (onFailOpen called too)", async () => {
    const onFailOpen = vi.fn();
    const { outcome } = run([{ kind: 'throw' }], { errorStrategy: 'warn', onFailOpen, judgeDeadlineMs: 1_000 });
    const { result } = await outcome;
    expect(TripWire.isInstance(result)).toBe(false);
    expect(onFailOpen).toHaveBeenCalledTimes(1);
  });
});

describe('guard options', () => {
  const model = faultJudge([{ kind: 'ok' }]);
  const guards = {
    moderation: (options: object) => new ModerationProcessor({ model, ...options }),
    pii: (options: object) => new PIIDetector({ model, ...options }),
    injection: (options: object) => new PromptInjectionDetector({ model, ...options }),
    scrubber: (options: object) => new SystemPromptScrubber({ model, ...options }),
    language: (options: object) => new LanguageDetector({ model, targetLanguages: ['en'], ...options }),
  };
  const bad: Array<[string, unknown]> = [
    ['errorStrategy', 'fail-opn'],
    ['errorStrategy', 'block'],
    ['contentErrorStrategy', 'ignore'],
    ['maxConcurrentJudgeCalls', 0],
    ['maxConcurrentJudgeCalls', Number.NaN],
    ['judgeDeadlineMs', -1],
    ['judgeDeadlineMs', '10s'],
  ];
  for (const [name, make] of Object.entries(guards)) {
    for (const [option, value] of bad) {
      it(`${name}: ${option} = ${String(value)} is an InvalidProcessorOptionError naming the processor and the option`, () => {
        let thrown: unknown;
        try {
          make({ [option]: value });
        } catch (error) {
          thrown = error;
        }
        expect(InvalidProcessorOptionError.isInstance(thrown)).toBe(true);
        const error = thrown as InvalidProcessorOptionError;
        expect(error.option).toBe(option);
        expect(error.message).toContain(option);
        expect(error.message).toContain(make({}).id);
      });
    }
  }
});

describe('backoff and Retry-After', () => {
  it('backoff doubles up to its cap, with jitter between half and all of it', () => {
    expect(backoffMs(0, () => 0)).toBe(100);
    expect(backoffMs(0, () => 0.999)).toBeCloseTo(200, 0);
    expect(backoffMs(3, () => 0)).toBe(800);
    expect(backoffMs(30, () => 0.999)).toBeLessThanOrEqual(4_000);
  });

  it('Retry-After reads seconds, an HTTP date, retry-after-ms, and ignores garbage', () => {
    const error = (headers: Record<string, string>) =>
      new APICallError({ message: 'x', url: 'u', requestBodyValues: {}, statusCode: 429, responseHeaders: headers });
    const now = Date.parse('2026-12-06T12:00:00Z');
    expect(retryAfterMs(error({ 'retry-after': '2' }), now)).toBe(2_000);
    expect(retryAfterMs(error({ 'Retry-After': 'Sun, 06 Dec 2026 12:00:05 GMT' }), now)).toBe(5_000);
    expect(retryAfterMs(error({ 'retry-after-ms': '150' }), now)).toBe(150);
    expect(retryAfterMs(error({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(new Error('x'), now)).toBeUndefined();
  });
});
