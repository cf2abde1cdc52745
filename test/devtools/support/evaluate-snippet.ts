/**
 * Runs a marble export's snippet as a test file would: its `import { … } from 'rxagent/testing'`
 * line bound to the real `rxagent/testing`, the rest evaluated as written (plain JavaScript once
 * its type import and `satisfies` clause are left out), returning its `diagram` and `values`.
 */
import * as testing from 'rxagent/testing';

export function evaluateSnippet(code: string): { diagram: string; values: Record<string, unknown> } {
  const importLine = /^import \{ ([^}]+) \} from 'rxagent\/testing';$/m.exec(code);
  if (importLine === null) throw new Error(`the snippet imports nothing from rxagent/testing:\n${code}`);
  const names = (importLine[1] as string).split(',').map((name) => name.trim());
  const exports = testing as unknown as Record<string, unknown>;
  for (const name of names) if (!(name in exports)) throw new Error(`the snippet imports ${name}, which rxagent/testing does not export`);
  // the TypeScript-only parts (a type import, `satisfies`) left out: the rest is plain JavaScript
  const script = code
    .replace(importLine[0], '')
    .replace(/^import type \{ ChunkType \} from 'rxagent';$/m, '')
    .replace(/^\} satisfies Record<string, ChunkType>;$/m, '};');
  const body = `${script}\nreturn { diagram, values };`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the point: run the exported text as written
  const evaluate = new Function(...names, body) as (...args: unknown[]) => { diagram: string; values: Record<string, unknown> };
  return evaluate(...names.map((name) => exports[name]));
}
