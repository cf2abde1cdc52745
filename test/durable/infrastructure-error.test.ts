/**
 * The one classifier of infrastructure failures (src/durable/internal/infrastructure-error.ts):
 * which storage errors fail an attempt (the run goes on from its last commit) and which are the
 * run's own; and the backoff between the attempts.
 */
import { describe, expect, it } from 'vitest';
import { ProcessorError } from 'rxagent';
import { StorageError } from 'rxagent/memory';
import {
  INFRASTRUCTURE_BACKOFF_MAX_MS,
  infrastructureBackoffMs,
  isInfrastructureError,
  isStorageInfrastructureError,
} from '../../src/durable/internal/infrastructure-error.js';

const coded = (code: string, message = `failed (${code})`): Error => Object.assign(new Error(message), { code });

const infrastructure: Array<[string, unknown]> = [
  ['08000 connection exception', coded('08000')],
  ['08003 connection does not exist', coded('08003')],
  ['08006 connection failure', coded('08006')],
  ['08P01 protocol violation', coded('08P01')],
  ['40001 serialization failure', coded('40001')],
  ['40P01 deadlock detected', coded('40P01')],
  ['55P03 lock not available (lock_timeout)', coded('55P03')],
  ['57P01 admin shutdown (pg_terminate_backend)', coded('57P01')],
  ['57P02 crash shutdown', coded('57P02')],
  ['57P03 cannot connect now (starting up)', coded('57P03')],
  ['57014 statement timeout / query canceled', coded('57014')],
  ['53000 insufficient resources', coded('53000')],
  ['53300 too many connections', coded('53300')],
  ['25P03 idle-in-transaction session timeout', coded('25P03')],
  ['ECONNRESET', coded('ECONNRESET', 'read ECONNRESET')],
  ['ECONNREFUSED', coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
  ['EPIPE', coded('EPIPE', 'write EPIPE')],
  ['ETIMEDOUT', coded('ETIMEDOUT', 'connect ETIMEDOUT')],
  ['pg: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
  ['pg: Connection terminated due to connection timeout', new Error('Connection terminated due to connection timeout')],
  ['pg: client not queryable', new Error('Client has encountered a connection error and is not queryable')],
  ['pg: Query read timeout', new Error('Query read timeout')],
  ['pg-pool: connect timeout', new Error('timeout exceeded when trying to connect')],
  ['GuardedPool: pool timeout', new Error('no connection from the pool within 5000 ms')],
  ['StorageError around 57P01', new StorageError({ operation: 'toolCall', cause: coded('57P01') })],
  ['ProcessorError around StorageError around ECONNRESET', new ProcessorError('memory', 'processOutputResult', 'failed', { cause: new StorageError({ operation: 'saveMessages', cause: coded('ECONNRESET') }) })],
  ['AggregateError of ECONNREFUSED (two addresses)', new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], 'connect failed')],
];

const ownFailures: Array<[string, unknown]> = [
  ['23505 unique violation', coded('23505')],
  ['22P02 invalid text representation', coded('22P02')],
  ['42P01 undefined table', coded('42P01')],
  ['28P01 invalid password (a misconfiguration, not a blip)', coded('28P01')],
  ['57P04 database dropped', coded('57P04')],
  ['a tool throwing', new Error('card declined')],
  ['a TypeError', new TypeError('x is not a function')],
  ['StorageError of a closed store', new StorageError({ operation: 'append', message: 'the store is closed' })],
  ['StorageError around 23505', new StorageError({ operation: 'append', cause: coded('23505') })],
  ['not an error', 'ECONNRESET'],
  ['null', null],
  ['undefined', undefined],
];

describe('isInfrastructureError', () => {
  it.each(infrastructure)('%s: infrastructure (the attempt fails, the run goes on)', (_name, error) => {
    expect(isInfrastructureError(error)).toBe(true);
  });

  it.each(ownFailures)('%s: the run\'s own', (_name, error) => {
    expect(isInfrastructureError(error)).toBe(false);
  });

  it('follows a cause chain only so far (a cycle ends)', () => {
    const cyclic = new Error('a');
    const other = new Error('b', { cause: cyclic });
    Object.defineProperty(cyclic, 'cause', { value: other });
    expect(isInfrastructureError(cyclic)).toBe(false);
  });
});

describe('isStorageInfrastructureError (a run\'s terminal error that its storage caused)', () => {
  it('a StorageError of the infrastructure anywhere in the chain', () => {
    const save = new StorageError({ operation: 'saveMessages', cause: coded('25P03') });
    expect(isStorageInfrastructureError(new ProcessorError('memory', 'processOutputResult', 'failed', { cause: save }))).toBe(true);
    expect(isStorageInfrastructureError(save)).toBe(true);
  });

  it('not a bare network error of the run\'s own (a processor calling another service), nor a storage error of the run\'s own', () => {
    expect(isStorageInfrastructureError(new ProcessorError('moderation', 'processOutputResult', 'failed', { cause: coded('ECONNRESET') }))).toBe(false);
    expect(isStorageInfrastructureError(new StorageError({ operation: 'saveMessages', cause: coded('23505') }))).toBe(false);
  });
});

describe('infrastructureBackoffMs', () => {
  it('grows exponentially from 100 ms, capped at 5 s, jittered between half and all of it', () => {
    expect([0, 1, 2, 3].map((retry) => infrastructureBackoffMs(retry, () => 1))).toEqual([100, 200, 400, 800]);
    expect([0, 1, 2, 3].map((retry) => infrastructureBackoffMs(retry, () => 0))).toEqual([50, 100, 200, 400]);
    expect(infrastructureBackoffMs(40, () => 1)).toBe(INFRASTRUCTURE_BACKOFF_MAX_MS);
    for (let retry = 0; retry < 30; retry++) {
      const delay = infrastructureBackoffMs(retry);
      expect(delay).toBeGreaterThanOrEqual(50);
      expect(delay).toBeLessThanOrEqual(INFRASTRUCTURE_BACKOFF_MAX_MS);
    }
  });
});
