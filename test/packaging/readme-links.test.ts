/**
 * README.md is also the package's page on npm and the README inside `node_modules/rxagent`, where a
 * relative link (`docs/agent.md`) leads nowhere: every link to a file of the repository is absolute
 * (the `repository` URL of package.json, `/blob/main/…` for pages, `/raw/main/…` for images), and
 * the file it names exists. The tarball ships NOTICE and CHANGELOG.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  repository: { url: string };
  files: string[];
  dependencies: Record<string, string>;
};
const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');

/** Every link target of a Markdown text: `[text](url)`, `![alt](url)`, `<a href>`, `<img src>`, `[label]: url`. */
function linkTargets(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [
    ...[...withoutCode.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!),
    ...[...withoutCode.matchAll(/<(?:a|img)\s[^>]*?(?:href|src)="([^"]+)"/g)].map((match) => match[1]!),
    ...[...withoutCode.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((match) => match[1]!),
  ];
}

describe('README links', () => {
  const targets = linkTargets(readFileSync(join(root, 'README.md'), 'utf8'));

  it('finds the links it checks (the extractor works)', () => {
    expect(targets.length).toBeGreaterThanOrEqual(6);
    expect(linkTargets('[a](docs/x.md) ![b](img.png "t") <a href="y.md">y</a> `[c](no.md)`\n[d]: z.md')).toEqual(['docs/x.md', 'img.png', 'y.md', 'z.md']);
  });

  it('every link to a repository file is absolute, to the repository URL of package.json', () => {
    const relative = targets.filter((target) => !/^[a-z][a-z+.-]*:/i.test(target) && !target.startsWith('#'));
    expect(relative, `relative links in README.md (use ${repository}/blob/main/<path>)`).toEqual([]);
  });

  it('every absolute link into the repository names a file that exists', () => {
    const inRepository = targets.filter((target) => target.startsWith(`${repository}/`));
    expect(inRepository.length).toBeGreaterThanOrEqual(6);
    for (const target of inRepository) {
      const match = /^\/(blob|raw|tree)\/main\/([^#?]+)/.exec(target.slice(repository.length));
      expect(match, `${target}: expected ${repository}/blob|raw|tree/main/<path>`).not.toBeNull();
      expect(existsSync(join(root, decodeURIComponent(match![2]!))), `${target} names a missing file`).toBe(true);
    }
  });
});

describe('the package', () => {
  it('ships NOTICE and CHANGELOG.md in the tarball', () => {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], { cwd: root, encoding: 'utf8' }),
    ) as Array<{ files: Array<{ path: string }> }>;
    const paths = packed!.files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(['NOTICE', 'CHANGELOG.md', 'LICENSE', 'README.md', 'package.json']));
  });

  it('takes the packages an app shares with it (@ai-sdk/provider, @ai-sdk/provider-utils) as caret ranges', () => {
    for (const name of ['@ai-sdk/provider', '@ai-sdk/provider-utils']) expect(pkg.dependencies[name], name).toMatch(/^\^\d+\.\d+\.\d+$/);
    expect(pkg.dependencies['rxjs']).toBeUndefined(); // a peer dependency: the app's own copy
  });
});
