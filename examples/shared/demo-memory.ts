/** The demo's memory: rxagent's embedded default, a libSQL file (`./.rxagent/demo.db`). */
import type { AgentMemory } from 'rxagent';
import { Memory } from 'rxagent/memory';
import { LibSQLStorage } from 'rxagent/storage/libsql';

export async function demoMemory(path = '.rxagent/demo.db'): Promise<{
  memory: AgentMemory;
  label: string;
  count(thread: string): Promise<number>;
  lastReply(thread: string): Promise<string>;
  close(): Promise<void>;
}> {
  const storage = new LibSQLStorage({ url: `file:${path}` });
  const memory = new Memory({ storage, lastMessages: 20 });
  return {
    memory,
    label: `libSQL file ${path}`,
    count: async (thread) => (await storage.getMessages({ threadId: thread })).length,
    lastReply: async (thread) => {
      const messages = await storage.getMessages({ threadId: thread });
      const reply = messages.findLast((message) => message.role === 'assistant');
      return reply?.content.parts.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
    },
    close: () => storage.close(),
  };
}
