import { describe, expect, it } from 'vitest';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { describeStorage, textMessage } from './storage-suite.js';

describeStorage('InMemoryStorage', () => new InMemoryStorage());

describe('InMemoryStorage specifics', () => {
  it('hands out copies: mutating what was saved or read changes nothing stored', async () => {
    const storage = new InMemoryStorage();
    const message = textMessage('m1', 'original');
    await storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [message], ensureThread: true });
    message.content.parts.push({ type: 'text', text: 'mutated after save' });
    const [read] = await storage.getMessages({ threadId: 't' });
    read!.content.parts.length = 0;
    const [again] = await storage.getMessages({ threadId: 't' });
    expect(again?.content.parts).toEqual([{ type: 'text', text: 'original' }]);
  });

  it('uses the injected clock', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const storage = new InMemoryStorage({ now: () => now });
    expect((await storage.createThread({ id: 't', resourceId: 'r' })).createdAt).toEqual(now);
    expect((await storage.saveResource({ id: 'r' })).updatedAt).toEqual(now);
  });
});
