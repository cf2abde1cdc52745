/**
 * `npm run inspect` (examples/inspector/inspect.ts) as a user runs it: a process that prints the
 * page's address, serves the offline demo agent with no API key, and stops on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('npm run inspect', () => {
  it('prints its address, serves the demo agent offline, stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/inspector/inspect.ts'], {
      env: { ...process.env, PORT: '0', OPENAI_API_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = '';
        child.stdout.on('data', (data: Buffer) => {
          output += data.toString();
          const match = /rxagent inspector: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
          if (match) resolve(match[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited with ${code} before printing its address: ${output}`)));
        setTimeout(() => reject(new Error(`no address after 30 s: ${output}`)), 30_000);
      });
      const info = (await (await fetch(new URL('/api/info', url))).json()) as { agentId: string; suggestions: string[] };
      expect(info.agentId).toBe('support-desk');
      expect(info.suggestions).toContain('Can I get a refund?');
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
