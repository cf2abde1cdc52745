import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { LibSQLStorage } from '../../src/storage/libsql/libsql-storage.js';
import type { MemoryStorage } from '../../src/storage/types.js';
import { describeMemory } from './memory-suite.js';

const directory = mkdtempSync(join(tmpdir(), 'rxagent-memory-'));
const opened: MemoryStorage[] = [];
afterAll(async () => {
  await Promise.all(opened.map((storage) => storage.close()));
  rmSync(directory, { recursive: true, force: true });
});

describe('Memory on a libSQL file', () =>
  describeMemory(() => {
    const storage = new LibSQLStorage({ url: `file:${join(directory, 'memory.db')}` });
    opened.push(storage);
    return storage;
  }));
