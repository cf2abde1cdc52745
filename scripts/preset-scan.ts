/**
 * The preset rules of `RegexFilterProcessor` run over real text (issue 31 §3): the README,
 * CHANGELOG and other Markdown files of every package in the dependency tree (read from
 * `node_modules` when this runs, never copied into the repository) plus the repository's own
 * README, CHANGELOG, docs and sources. Shared by `npm run presets:report` (which lists every match)
 * and `test/security/preset-real-text.test.ts` (which fails on a match nobody reviewed).
 *
 * Which files: the packages `package-lock.json` lists (so the set is the same on every machine
 * that ran `npm ci`), minus the optional ones (platform-specific builds and their fallbacks:
 * which of them is installed depends on the machine). A listed package that is not installed is
 * reported missing.
 *
 * Each match is keyed by its rule and the SHA-256 of its normalised context (the match with 40
 * characters either side, whitespace runs as one space): the key a review records.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { normalizeForMatching } from '../src/processors/internal/normalized-text.js';
import { RegexMatcher } from '../src/processors/internal/regex-matcher.js';
import { REGEX_PRESETS, type RegexPreset } from '../src/processors/regex-filter.js';

/** One file of real text. */
export interface RealTextFile {
  /** Path relative to the repository, `/`-separated (`node_modules/rxjs/CHANGELOG.md`, `docs/agent.md`). */
  path: string;
  /** Where it comes from: a dependency's documentation or the repository itself. */
  origin: 'dependency' | 'repository';
  /** Its text. */
  text: string;
}

/** The real text and what could not be read. */
export interface RealText {
  files: RealTextFile[];
  /** Packages the lock lists that are not installed (their files are not scanned). */
  missing: string[];
}

/** One match of one preset rule in real text. */
export interface PresetMatch {
  preset: RegexPreset;
  rule: string;
  file: string;
  start: number;
  end: number;
  /** The matched text. */
  value: string;
  /** The normalised context: the match with up to 40 characters either side, whitespace collapsed. */
  context: string;
  /** SHA-256 (hex) of `context`: what a review records. */
  hash: string;
}

/** A match reviewed once: true or false positive (`test/fixtures/preset-review.json`). */
export interface PresetReview {
  rule: string;
  hash: string;
  verdict: 'real' | 'false';
  note: string;
}

/** Characters of context either side of a match. */
export const CONTEXT_CHARS = 40;

const DOC_FILE = /^(?:readme|changelog|history)(?:\.[a-z]+)?$|\.(?:md|markdown)$/i;

function documentationIn(dir: string, depth: number, found: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // a package's own docs, not the packages it bundles (those the lock lists themselves)
      if (depth < 3 && entry.name !== 'node_modules' && !entry.name.startsWith('.')) documentationIn(path, depth + 1, found);
    } else if (entry.isFile() && DOC_FILE.test(entry.name)) {
      found.push(path);
    }
  }
}

function sourcesIn(dir: string, found: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourcesIn(path, found);
    else if (entry.isFile() && entry.name.endsWith('.ts')) found.push(path);
  }
}

interface LockPackage {
  optional?: boolean;
  link?: boolean;
}

/**
 * The real text of the repository at `root`: its dependencies' documentation and its own docs and
 * sources, sorted by path.
 */
export function realText(root: string): RealText {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockPackage> };
  const paths: string[] = [];
  const missing: string[] = [];
  for (const [key, meta] of Object.entries(lock.packages)) {
    if (!key.startsWith('node_modules/') || meta.optional === true || meta.link === true) continue;
    const dir = join(root, key);
    if (!existsSync(dir)) {
      missing.push(key);
      continue;
    }
    documentationIn(dir, 0, paths);
  }
  const dependencyCount = paths.length;
  for (const name of ['README.md', 'CHANGELOG.md']) if (existsSync(join(root, name))) paths.push(join(root, name));
  documentationIn(join(root, 'docs'), 0, paths);
  sourcesIn(join(root, 'src'), paths);
  const files = paths.map((path, index) => ({
    path: relative(root, path).split('\\').join('/'),
    origin: index < dependencyCount ? ('dependency' as const) : ('repository' as const),
    text: readFileSync(path, 'utf8'),
  }));
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, missing };
}

/** The normalised context of `text[start, end)`. */
export function contextOf(text: string, start: number, end: number): string {
  return text
    .slice(Math.max(0, start - CONTEXT_CHARS), Math.min(text.length, end + CONTEXT_CHARS))
    .replace(/\s+/g, ' ')
    .trim();
}

/** The review key of a context. */
export function hashOf(context: string): string {
  return createHash('sha256').update(context).digest('hex');
}

/** Every preset rule, with its preset. */
export const PRESET_RULES = (Object.keys(REGEX_PRESETS) as RegexPreset[]).flatMap((preset) => REGEX_PRESETS[preset].map((rule) => ({ preset, rule })));

/**
 * Every match of every preset rule in `files`, as `RegexFilterProcessor` finds them (the same
 * matcher on the same normalised view, built once per file), each rule on its own: matches of
 * different rules may overlap.
 */
export function scanPresets(files: readonly RealTextFile[]): PresetMatch[] {
  const matchers = PRESET_RULES.map(({ preset, rule }) => ({
    preset,
    rule: rule.name,
    matcher: new RegexMatcher({ processor: { id: 'presets-report', onViolation: undefined }, rules: [rule], strategy: 'warn', includeValues: false, normalize: true }),
  }));
  const matches: PresetMatch[] = [];
  for (const file of files) {
    const view = normalizeForMatching(file.text);
    for (const { preset, rule, matcher } of matchers) {
      for (const region of matcher.regionsOf(file.text, 0, view)) {
        const context = contextOf(file.text, region.start, region.end);
        matches.push({ preset, rule, file: file.path, start: region.start, end: region.end, value: file.text.slice(region.start, region.end), context, hash: hashOf(context) });
      }
    }
  }
  return matches;
}

/** `rule` + `hash`: the key of a review. */
export const reviewKey = (rule: string, hash: string): string => `${rule} ${hash}`;

/**
 * Rules that may keep reviewed false matches: `email` (people's contact data: an address-shaped
 * `user@host` that is not a mailbox is reviewed, not forbidden) and `url` (every match is a
 * link). Every other rule — secrets, tokens, keys, IBAN, card, SSN, phone, IP — has 0.
 */
export const FALSE_MATCHES_ALLOWED: ReadonlySet<string> = new Set(['email', 'url']);

/**
 * The verdict a check gives without a reviewer: a `url` match that reads (percent-decoded) as an
 * `http:`/`https:` URL whose host has a dot or is `localhost` is a URL — what the rule is for — so thousands of links need no
 * entry each. Any other match needs a review.
 */
export function automaticVerdict(match: Pick<PresetMatch, 'rule' | 'value'>): 'real' | undefined {
  if (match.rule !== 'url') return undefined;
  let decoded = match.value;
  try {
    decoded = decodeURIComponent(match.value);
  } catch {
    // not percent-encoded: read as written
  }
  try {
    const url = new URL(decoded);
    return (url.protocol === 'http:' || url.protocol === 'https:') && (url.hostname.includes('.') || url.hostname === 'localhost') ? 'real' : undefined;
  } catch {
    return undefined;
  }
}

/** The reviews of `path` (a JSON array of {@link PresetReview}), checked entry by entry. */
export function loadReviews(path: string): PresetReview[] {
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(parsed)) throw new TypeError(`${path}: expected an array of reviews`);
  const rules = new Set(PRESET_RULES.map(({ rule }) => rule.name));
  const seen = new Set<string>();
  return parsed.map((entry: unknown, index) => {
    const review = entry as Partial<PresetReview> | null;
    const where = `${path}[${index}]`;
    if (typeof review !== 'object' || review === null) throw new TypeError(`${where}: expected an object`);
    if (typeof review.rule !== 'string' || !rules.has(review.rule)) throw new TypeError(`${where}.rule: not a preset rule: ${JSON.stringify(review.rule)}`);
    if (typeof review.hash !== 'string' || !/^[0-9a-f]{64}$/.test(review.hash)) throw new TypeError(`${where}.hash: expected 64 hex digits (SHA-256), got ${JSON.stringify(review.hash)}`);
    if (review.verdict !== 'real' && review.verdict !== 'false') throw new TypeError(`${where}.verdict: expected 'real' or 'false', got ${JSON.stringify(review.verdict)}`);
    if (typeof review.note !== 'string' || review.note.trim() === '') throw new TypeError(`${where}.note: a short note saying why is required`);
    const key = reviewKey(review.rule, review.hash);
    if (seen.has(key)) throw new TypeError(`${where}: ${review.rule} ${review.hash} is reviewed twice`);
    seen.add(key);
    return { rule: review.rule, hash: review.hash, verdict: review.verdict, note: review.note };
  });
}

/** A match with its verdict: a review's, the automatic one, or none (`undefined`: nobody reviewed it). */
export interface JudgedMatch extends PresetMatch {
  verdict: 'real' | 'false' | undefined;
  /** The review's note, or `'automatic'`. */
  note: string | undefined;
}

/** Each match with its verdict. */
export function judge(matches: readonly PresetMatch[], reviews: readonly PresetReview[]): JudgedMatch[] {
  const byKey = new Map(reviews.map((review) => [reviewKey(review.rule, review.hash), review]));
  return matches.map((match) => {
    const review = byKey.get(reviewKey(match.rule, match.hash));
    if (review !== undefined) return { ...match, verdict: review.verdict, note: review.note };
    const automatic = automaticVerdict(match);
    return { ...match, verdict: automatic, note: automatic === undefined ? undefined : 'automatic' };
  });
}

/** Where the reviews live, relative to the repository. */
export const REVIEW_FILE = 'test/fixtures/preset-review.json';
