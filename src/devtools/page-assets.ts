/**
 * The inspector page's files (plain HTML, JavaScript and CSS: no bundler, no framework), read
 * once when a server starts. They sit in `inspector-page/` beside this module in the sources and
 * beside the built entry in `dist/` (the build copies them there).
 */
import { readFile } from 'node:fs/promises';

/** One served file. */
export interface PageAsset {
  body: string;
  type: string;
}

/** The page's files by URL path (`/index.html`, `/inspector.js`, …). */
export type PageAssets = ReadonlyMap<string, PageAsset>;

const FILES: ReadonlyArray<[name: string, type: string]> = [
  ['index.html', 'text/html; charset=utf-8'],
  ['inspector.js', 'text/javascript; charset=utf-8'],
  ['timeline.js', 'text/javascript; charset=utf-8'],
  ['chat.js', 'text/javascript; charset=utf-8'],
  ['run-ids.js', 'text/javascript; charset=utf-8'],
  ['inspector.css', 'text/css; charset=utf-8'],
];

/** Reads the page's files. */
export async function loadPageAssets(): Promise<PageAssets> {
  // the CJS build gets `import.meta.url` from tsup (its file URL, from __filename)
  const folder = new URL('./inspector-page/', import.meta.url);
  const entries = await Promise.all(
    FILES.map(async ([name, type]): Promise<[string, PageAsset]> => [`/${name}`, { body: await readFile(new URL(name, folder), 'utf8'), type }]),
  );
  return new Map(entries);
}
