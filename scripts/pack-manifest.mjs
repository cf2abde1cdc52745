// npm's `prepack` / `postpack`: the packed package.json (a tarball from `npm pack`, or what
// `npm publish` uploads) leaves out the `prepare` script. `prepare` builds dist/ in a clone or a
// git URL's install; a tarball ships dist/ already, and npm >= 11 lists a tarball's `prepare` as an
// install script "not yet covered by allowScripts" on every app's install (noise for a script
// that does not run there). `strip` keeps the original aside (with its times, so `prepare` does not
// take package.json for a changed build input) and `restore` puts it back.
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package.json text to pack: `text` without `scripts.prepare` (the same text when it has none).
 * @param {string} text
 * @returns {string}
 */
export function packedManifest(text) {
  const manifest = JSON.parse(text);
  if (manifest.scripts?.prepare === undefined) return text;
  delete manifest.scripts.prepare;
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** @param {string} root @param {'strip' | 'restore'} command */
export function packManifest(root, command) {
  const path = join(root, 'package.json');
  const aside = join(root, 'node_modules', '.cache', 'rxagent-pack', 'package.json');
  if (command === 'strip') {
    // a pack that died before its postpack left the original aside: put it back first
    if (existsSync(aside)) packManifest(root, 'restore');
    const text = readFileSync(path, 'utf8');
    const packed = packedManifest(text);
    if (packed === text) return;
    mkdirSync(join(aside, '..'), { recursive: true });
    const { atime, mtime } = statSync(path);
    writeFileSync(aside, text);
    utimesSync(aside, atime, mtime);
    writeFileSync(path, packed);
  } else if (command === 'restore') {
    if (!existsSync(aside)) return;
    const { atime, mtime } = statSync(aside);
    renameSync(aside, path);
    utimesSync(path, atime, mtime);
  } else {
    throw new TypeError(`pack-manifest: expected 'strip' or 'restore' (got ${JSON.stringify(command)})`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  packManifest(fileURLToPath(new URL('..', import.meta.url)), /** @type {'strip' | 'restore'} */ (process.argv[2]));
}
