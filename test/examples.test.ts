/** The runnable examples keep running (each in its own process, as a user runs them). */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const runExample = (file: string) =>
  execFileSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, OPENAI_API_KEY: '' } });

describe('examples', () => {
  it('streaming-redactor redacts an e-mail split across chunks', () => {
    const output = runExample('examples/streaming-redactor.ts');
    expect(output).toContain('[EMAIL]');
    expect(output).not.toContain('lace@exam');
  });

  it('marble-test-a-processor passes', () => {
    expect(runExample('examples/marble-test-a-processor.ts')).toContain('marble test passed');
  });
});
