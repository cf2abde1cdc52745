// Each built entry point, with the chunks it imports statically, stays under its budget: an entry
// that grows past it (e.g. bundling a tokenizer's data) fails CI.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entries, outName } from '../scripts/entries.mjs';

/**
 * 400 KB until 7 December 2026; 440 KB since the second round of hostile-input fixes that day, which
 * every entry that runs the loop carries (the root entry's CJS 398 → 435 KB, `./loop` 388 → 425 KB):
 * tripwire metadata checked with the journal's JSON codec (≈ 8 KB), token counts checked where they
 * enter and after each hook (≈ 5 KB), per-step settings checked as call options are (≈ 2.5 KB),
 * provider parts checked where they enter (`src/model/checked-part.ts`, ≈ 20 KB). 456 KB since the
 * third round (the root entry's CJS 436 → 445 KB): provider parts checked on the `OBSERVABLE_STREAM`
 * path and the event-loop turns of an always-ready read (≈ 4 KB), memory's id checks (≈ 2 KB),
 * `processLLMRequest`'s `callOptions` and its refusal of an answer a later hook could change, the
 * bounded tool-input error text. 472 KB since the fourth round (the root entry's CJS 445 → 453 KB): every
 * built-in processor's option values and names checked at construction (`guard-options.ts`,
 * `option-keys.ts`, ≈ 6 KB), thrown values read once and safely, `pacedCall`, the response cache's
 * strict acceptance.
 */
const BUDGET = 472 * 1024;
/**
 * Entries allowed more, and why. `./durable` runs agents (its worker drives the loop), so it holds
 * the root entry's code (≈ 340 KB, shared with `rxagent` in an app that imports both) plus the
 * journal, the worker, the retention job, owner sessions and their sweep (≈ 140 KB; 482 KB CJS on
 * 7 December 2026, when the budget went from 480 to 512 KB; 510 KB later that day, after the
 * hostile-input fixes: the restore check's schema, contained hook values, reader id checks — 544 KB).
 * `./ai-sdk` holds the same loop (`processorsMiddleware` runs processors; the resume readers), 408
 * KB CJS after those fixes: 432 KB. After the second round (see `BUDGET`; with the encoded run-id
 * header, the row checks of the journal): `./ai-sdk` 449 KB CJS, `./durable` 565 KB CJS: 464 and
 * 576 KB. After the third round (submit checked by the run's own option check, submit writes
 * retried, the journals' row checks, and the root's growth above): `./ai-sdk` 460 KB CJS,
 * `./durable` 583 KB CJS: 480 and 600 KB. After the fourth round (handover, cancel and fail-closed
 * ends retried through blips, the owner session's `lock$` and loss windows, `handOn`, the shared
 * live tail per run, `listRuns`' reported rows, memory's run ids, and the root's growth above):
 * `./durable` 605 KB CJS: 632 KB. After the fifth round (8 December 2026: the check of messages and
 * step texts after each hook call, `writer.custom()`'s JSON check, tool-chunk field checks, the UI
 * responses' keep-alive and `TransportLimitError`): `./ai-sdk` 482 KB CJS: 496 KB.
 */
const BUDGETS = { './durable': 632 * 1024, './ai-sdk': 496 * 1024 };
const budgetOf = (subpath) => BUDGETS[subpath] ?? BUDGET;
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

/** The entry file and every local file it reaches through static imports / `require` (dynamic `import()` excluded). */
function closure(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  const code = readFileSync(file, 'utf8');
  const staticImports = /^\s*(?:import|export)\s[^;'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]|\brequire\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm;
  for (const match of code.matchAll(staticImports)) closure(resolve(dirname(file), match[1] ?? match[2] ?? match[3]), seen);
  return seen;
}

const rows = [];
for (const subpath of Object.keys(entries)) {
  for (const extension of ['.js', '.cjs']) {
    const file = join(dist, `${outName(subpath)}${extension}`);
    const files = closure(file);
    const bytes = [...files].reduce((sum, path) => sum + statSync(path).size, 0);
    rows.push({ entry: `${subpath}${extension === '.cjs' ? ' (cjs)' : ''}`, kb: Math.round(bytes / 1024), files: files.size, budget: budgetOf(subpath) });
  }
}
const over = rows.filter((row) => row.kb * 1024 > row.budget);
console.log(`dist size (entry + static chunks): ${rows.map((row) => `${row.entry} ${row.kb} KB`).join(', ')}`);
if (over.length > 0) {
  console.error(`dist size: over budget: ${over.map((row) => `${row.entry} (${row.kb} KB > ${row.budget / 1024} KB)`).join(', ')}`);
  process.exit(1);
}
console.log(`dist size: ok (every entry under ${BUDGET / 1024} KB; ${Object.entries(BUDGETS).map(([subpath, bytes]) => `${subpath} under ${bytes / 1024} KB`).join(', ')})`);
