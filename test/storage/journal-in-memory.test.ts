import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import { describeRunJournal } from './journal-suite.js';

describeRunJournal('InMemoryRunJournal', () => new InMemoryRunJournal({ pageSize: 50 }), {
  pageSize: 50,
  withRetention: (retention) => new InMemoryRunJournal({ pageSize: 50, ...retention }),
});
