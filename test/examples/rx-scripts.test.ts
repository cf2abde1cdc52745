/** examples/rx run as a user runs them (`npx tsx examples/rx/<file>.ts`), each in its own process. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = async (file: string) =>
  (await promisify(execFile)(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', timeout: 60_000 })).stdout;

describe('examples/rx scripts', () => {
  it('chat-session: the story is cut off by the second message, only turn 2 finishes', async () => {
    const output = await run('examples/rx/chat-session.ts');
    expect(output).toContain("Sure, let's talk about the weather instead.");
    expect(output).toContain('[turn 2 done: stop]');
    expect(output).not.toContain('[turn 1 done');
    expect(output).not.toContain('nobody got to hear the end of');
  }, 90_000);

  it('concurrency-limit: every request is answered', async () => {
    const lines = (await run('examples/rx/concurrency-limit.ts')).trim().split('\n');
    expect(lines.sort()).toEqual(Array.from({ length: 6 }, (_, index) => `r${index + 1}: Answer to "Question ${index + 1}".`));
  }, 90_000);
});
