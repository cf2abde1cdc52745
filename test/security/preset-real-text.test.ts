/**
 * Presets on real text (issue 31 §3): every preset rule over the README, CHANGELOG and Markdown
 * files of the dependency tree (read from node_modules now, never copied into the repository) and
 * the repository's own README, CHANGELOG, docs and sources — the same scan as
 * `npm run presets:report`. Every match must have been reviewed once (test/fixtures/
 * preset-review.json: rule, SHA-256 of the normalised context, real or false, a note), or be a link
 * the `url` rule's automatic check reads as one; and no rule but `email` and `url` may have a false
 * match. A new match (a dependency updated, a doc edited) fails here until someone reviews it:
 * `npm run presets:report -- --pending` prints the entries to fill in.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FALSE_MATCHES_ALLOWED, judge, loadReviews, PRESET_RULES, REVIEW_FILE, realText, scanPresets, type JudgedMatch, type RealText } from '../../scripts/preset-scan.js';

const root = join(import.meta.dirname, '..', '..');

describe('presets on real text', () => {
  let text: RealText;
  let judged: JudgedMatch[];
  let elapsed = 0;

  beforeAll(() => {
    const started = performance.now();
    text = realText(root);
    judged = judge(scanPresets(text.files), loadReviews(join(root, REVIEW_FILE)));
    elapsed = performance.now() - started;
    const megabytes = text.files.reduce((sum, file) => sum + Buffer.byteLength(file.text), 0) / 1e6;
    for (const { rule } of PRESET_RULES) {
      const count = judged.filter((match) => match.rule === rule.name).length;
      if (count > 0) console.log(`[real text] ${rule.name}: ${count} matches, ${(count / megabytes).toFixed(2)} per MB`);
    }
    console.log(`[real text] ${text.files.length} files, ${megabytes.toFixed(2)} MB, scanned in ${Math.round(elapsed)} ms`);
  });

  it('reads the dependency tree and the repository (megabytes of text, every package the lock lists installed)', () => {
    expect(text.missing).toEqual([]);
    const dependencyFiles = text.files.filter((file) => file.origin === 'dependency');
    expect(dependencyFiles.length).toBeGreaterThan(200);
    expect(dependencyFiles.some((file) => file.path === 'node_modules/rxjs/CHANGELOG.md')).toBe(true);
    expect(text.files.some((file) => file.path === 'docs/security.md')).toBe(true);
    expect(text.files.some((file) => file.path === 'src/processors/internal/regex-presets.ts')).toBe(true);
    expect(text.files.reduce((sum, file) => sum + file.text.length, 0)).toBeGreaterThan(4_000_000);
  });

  it('every match was reviewed', () => {
    const unreviewed = judged.filter((match) => match.verdict === undefined).map((match) => `${match.rule} in ${match.file}: ${JSON.stringify(match.context)} (${match.hash})`);
    expect(unreviewed, 'run `npm run presets:report -- --pending` and add a verdict for each to test/fixtures/preset-review.json').toEqual([]);
  });

  it('no rule but email and url has a false match', () => {
    const falseMatches = judged
      .filter((match) => match.verdict === 'false' && !FALSE_MATCHES_ALLOWED.has(match.rule))
      .map((match) => `${match.rule} in ${match.file}: ${JSON.stringify(match.context)} — ${match.note ?? ''}`);
    expect(falseMatches).toEqual([]);
  });

  it('scans fast enough for CI (under 10 s)', () => {
    expect(elapsed).toBeLessThan(10_000);
  });
});

describe('the review file', () => {
  it('is checked entry by entry: a bad entry is a TypeError naming its index and field', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'preset-review-'));
    const write = (entries: unknown) => {
      const path = join(dir, 'review.json');
      writeFileSync(path, JSON.stringify(entries));
      return path;
    };
    const hash = 'a'.repeat(64);
    expect(() => loadReviews(write({}))).toThrow(/expected an array/);
    expect(() => loadReviews(write([{ rule: 'nope', hash, verdict: 'real', note: 'x' }]))).toThrow(/\[0\]\.rule: not a preset rule/);
    expect(() => loadReviews(write([{ rule: 'ipv4', hash: 'abc', verdict: 'real', note: 'x' }]))).toThrow(/\[0\]\.hash: expected 64 hex digits/);
    expect(() => loadReviews(write([{ rule: 'ipv4', hash, verdict: 'maybe', note: 'x' }]))).toThrow(/\[0\]\.verdict/);
    expect(() => loadReviews(write([{ rule: 'ipv4', hash, verdict: 'real', note: ' ' }]))).toThrow(/\[0\]\.note/);
    expect(() => loadReviews(write([{ rule: 'ipv4', hash, verdict: 'real', note: 'x' }, { rule: 'ipv4', hash, verdict: 'false', note: 'y' }]))).toThrow(/\[1\]: ipv4 .* reviewed twice/);
    expect(loadReviews(write([{ rule: 'ipv4', hash, verdict: 'real', note: 'x' }]))).toEqual([{ rule: 'ipv4', hash, verdict: 'real', note: 'x' }]);
  });
});
