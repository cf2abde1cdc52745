/** The runnable examples keep running (each in its own process, as a user runs them). */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- plain ESM helper (no type declarations)
import { entryDrift, specifier, entries } from '../scripts/entries.mjs';

const runExample = (file: string) =>
  execFileSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, OPENAI_API_KEY: '' } });

/** The .ts files of examples/ itself and examples/shared/ (the other folders are checked by their own tests). */
function exampleFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.[cm]?tsx?$/.test(name)) files.push(path);
    }
  };
  walk('examples');
  return files;
}

describe('examples import rxagent by name, as a user copying them would', () => {
  it.each(exampleFiles())('%s: no relative import of the sources; every rxagent import is a published entry point', (file) => {
    const source = readFileSync(file, 'utf8');
    const specifiers = [...source.matchAll(/(?:from|import\(|require\()\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!);
    expect(specifiers.filter((name) => name.includes('src/'))).toEqual([]);
    const published = Object.keys(entries as Record<string, string>).map((subpath) => (specifier as (subpath: string) => string)(subpath));
    for (const name of specifiers.filter((name) => name === 'rxagent' || name.startsWith('rxagent/'))) expect(published).toContain(name);
  });

  it('package.json exports and tsconfig.json paths match scripts/entries.mjs', () => {
    expect((entryDrift as () => string[])()).toEqual([]);
  });
});

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

describe('the demo (examples/support-agent.ts)', () => {
  const runDemo = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, ['--import', 'tsx', 'examples/support-agent.ts'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      });
      child.stdin?.end();
    });

  it('offline: the banner names the scripted model; the turns run; exit code 0', async () => {
    const { code, stdout } = await runDemo({ OPENAI_API_KEY: '' });
    expect(stdout).toMatch(/rxagent demo — offline scripted model "offline-support"/);
    expect(stdout).toContain('[EMAIL]');
    expect(code).toBe(0);
  }, 90_000);

  it('every model call failing (a server that rejects the key): the banner names the model and base URL used; exit code 1', async () => {
    const requests: string[] = [];
    const server = createServer((request: IncomingMessage, response) => {
      requests.push(`${request.method} ${request.url}`);
      request.resume();
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const { code, stdout, stderr } = await runDemo({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: baseURL, OPENAI_MODEL: 'gpt-test-model' });
      expect(stdout).toContain(`rxagent demo — model "gpt-test-model" (openai.chat) at ${baseURL}`);
      expect(stderr).toMatch(/demo: every turn that reached the model failed \(3\/3\)/);
      expect(code).toBe(1);
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.every((line) => line === 'POST /v1/chat/completions')).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 90_000);
});

describe('examples/README.md indexes the examples', () => {
  it('every example file or folder is linked from it, and every link exists', () => {
    const index = readFileSync('examples/README.md', 'utf8');
    const links = [...index.matchAll(/\]\(([^)#]+)\)/g)].map((match) => match[1]!).filter((link) => !link.startsWith('../'));
    for (const link of links) expect(statSync(join('examples', link)).isFile() || statSync(join('examples', link)).isDirectory(), link).toBe(true);
    for (const name of readdirSync('examples')) {
      if (name === 'README.md') continue;
      const linked = links.some((link) => link === name || link.startsWith(`${name}/`));
      expect(linked, `examples/${name} is not in examples/README.md`).toBe(true);
    }
  });
});
