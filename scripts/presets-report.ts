/**
 * `npm run presets:report`: every preset rule of `RegexFilterProcessor` over real text — the
 * documentation of the dependency tree (read from node_modules now, never copied into the
 * repository) and the repository's own docs and sources — every match per rule with its file,
 * line and context, then matches per MB per rule and how many are reviewed (real / false) in
 * test/fixtures/preset-review.json.
 *
 *   npm run presets:report                      # every match, then the summary
 *   npm run presets:report -- --summary         # the summary only
 *   npm run presets:report -- --rule phone      # one rule's matches (repeatable)
 *   npm run presets:report -- --unreviewed      # only matches nobody reviewed
 *   npm run presets:report -- --pending         # review entries to fill in for them (JSON, verdict to set)
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FALSE_MATCHES_ALLOWED, judge, loadReviews, PRESET_RULES, REVIEW_FILE, realText, scanPresets, type JudgedMatch } from './preset-scan.js';

const { values: flags } = parseArgs({
  options: {
    summary: { type: 'boolean', default: false },
    unreviewed: { type: 'boolean', default: false },
    pending: { type: 'boolean', default: false },
    rule: { type: 'string', multiple: true },
  },
});
const known = new Set(PRESET_RULES.map(({ rule }) => rule.name));
for (const rule of flags.rule ?? []) {
  if (!known.has(rule)) {
    console.error(`presets:report: unknown rule '${rule}' (${[...known].join(', ')})`);
    process.exit(2);
  }
}

const root = join(import.meta.dirname, '..');
const started = performance.now();
const { files, missing } = realText(root);
const judged = judge(scanPresets(files), loadReviews(join(root, REVIEW_FILE)));
const elapsed = performance.now() - started;
const wanted = (match: JudgedMatch) => (flags.rule === undefined || flags.rule.includes(match.rule)) && (!flags.unreviewed || match.verdict === undefined);

const lineOf = (path: string, offset: number) => {
  const text = files.find((file) => file.path === path)?.text ?? '';
  let line = 1;
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) line++;
  return line;
};

if (flags.pending) {
  const pending = new Map<string, { rule: string; hash: string; verdict: string; note: string; context: string }>();
  for (const match of judged) {
    if (match.verdict !== undefined || !wanted(match)) continue;
    pending.set(`${match.rule} ${match.hash}`, { rule: match.rule, hash: match.hash, verdict: 'real|false', note: '', context: match.context });
  }
  // `context` is for the reviewer's eyes only: drop it before adding an entry to the review file
  console.log(JSON.stringify([...pending.values()], null, 2));
  process.exit(0);
}

if (!flags.summary) {
  for (const { rule } of PRESET_RULES) {
    const ofRule = judged.filter((match) => match.rule === rule.name && wanted(match));
    if (ofRule.length === 0) continue;
    console.log(`\n## ${rule.name} (${ofRule.length})`);
    for (const match of ofRule) {
      const verdict = match.verdict === undefined ? 'UNREVIEWED' : match.note === 'automatic' ? `${match.verdict} (automatic)` : `${match.verdict}: ${match.note}`;
      console.log(`${match.file}:${lineOf(match.file, match.start)}  ${JSON.stringify(match.value)}  [${verdict}]\n    …${match.context}…`);
    }
  }
}

const bytes = (origin: 'dependency' | 'repository' | undefined) =>
  files.filter((file) => origin === undefined || file.origin === origin).reduce((sum, file) => sum + Buffer.byteLength(file.text), 0);
const origins = new Map(files.map((file) => [file.path, file.origin]));
const megabytes = { dependency: bytes('dependency') / 1e6, repository: bytes('repository') / 1e6, all: bytes(undefined) / 1e6 };
const perMb = (count: number, size: number) => (size === 0 ? '–' : (count / size).toFixed(2));

console.log(
  `\nReal text: ${files.length} files, ${megabytes.all.toFixed(2)} MB (dependencies' docs ${megabytes.dependency.toFixed(2)} MB, ` +
    `the repository's docs and src ${megabytes.repository.toFixed(2)} MB); scanned in ${Math.round(elapsed)} ms.` +
    (missing.length > 0 ? `\nNot installed (not scanned): ${missing.join(', ')}` : ''),
);
console.log('\n| rule | matches | per MB | per MB (deps) | per MB (repo) | real | false | unreviewed |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
let failing = false;
for (const { rule } of PRESET_RULES) {
  const ofRule = judged.filter((match) => match.rule === rule.name);
  const fromDeps = ofRule.filter((match) => origins.get(match.file) === 'dependency').length;
  const real = ofRule.filter((match) => match.verdict === 'real').length;
  const falseCount = ofRule.filter((match) => match.verdict === 'false').length;
  const unreviewed = ofRule.length - real - falseCount;
  if (unreviewed > 0 || (falseCount > 0 && !FALSE_MATCHES_ALLOWED.has(rule.name))) failing = true;
  console.log(
    `| ${rule.name} | ${ofRule.length} | ${perMb(ofRule.length, megabytes.all)} | ${perMb(fromDeps, megabytes.dependency)} | ${perMb(ofRule.length - fromDeps, megabytes.repository)} | ${real} | ${falseCount} | ${unreviewed} |`,
  );
}
console.log(
  failing
    ? '\nSome matches are unreviewed, or a rule other than email/url has false matches: test/security/preset-real-text.test.ts fails. `--pending` prints entries to review.'
    : '\nEvery match is reviewed; no rule other than email/url has a false match.',
);
