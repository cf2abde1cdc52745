import { describe } from 'vitest';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { describeMemory } from './memory-suite.js';

describe('Memory on InMemoryStorage', () => describeMemory(() => new InMemoryStorage()));
