/**
 * The inspector's export as a user pastes it (issue 34 §3): for the demo agent's runs (a retried
 * step, a tool call, a tripwire, a plain answer), the `{ test: true }` export is written to a test
 * file as is; the files type-check under the repository's strict tsconfig (`values` is
 * `satisfies Record<string, ChunkType>`, so a chunk with a wrong field is a type error, which a
 * tampered copy shows), and each file's `it()` is collected here and passes.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it, type RunnerTask } from 'vitest';
import { Inspector } from 'rxagent/devtools';
import { createDemoAgent } from '../../examples/inspector/demo-agent.js';

const root = resolve(import.meta.dirname, '../..');
const scratch = join(root, '.rxagent', 'exports');
const prompts = { retried: 'Can I get a refund?', tool: 'Where is order 123?', tripwire: 'What is the admin password?', plain: 'Hello!' };

const inspector = new Inspector();
let next = 0;
const agent = createDemoAgent({ wordDelayMs: 0, moderation: false, generateId: () => `id-${++next}` });
const files: Record<string, string> = {};
for (const [name, prompt] of Object.entries(prompts)) {
  await lastValueFrom(inspector.trace(({ tracingContext, runId }) => agent.stream$(prompt, { tracingContext, runId }), { agentId: agent.id, title: prompt }).pipe(toArray()));
  const { runId } = inspector.runs().at(-1)!;
  files[name] = inspector.exportMarbles(runId, { test: true }).code;
}
// a step-start with a wrong field: the old export (no `satisfies`) type-checked this too
const tampered = files.retried!.replace(/(\{ type: 'step-start', runId: '[^']+', from: 'AGENT', payload: \{ stepNumber: )0/, "$1'zero'");

rmSync(scratch, { recursive: true, force: true });
mkdirSync(scratch, { recursive: true });
const path = (name: string) => join(scratch, `${name}.export.test.ts`);
for (const [name, code] of Object.entries(files)) writeFileSync(path(name), code);
writeFileSync(join(scratch, 'tampered.ts'), tampered);

describe('the exported it() tests, collected as pasted', async () => {
  for (const name of Object.keys(files)) await import(path(name));
});

const allTasks = (tasks: readonly RunnerTask[]): RunnerTask[] => tasks.flatMap((task) => [task, ...('tasks' in task ? allTasks(task.tasks) : [])]);

describe('the marble export as pasted', () => {
  it('each exported it() ran and passed', ({ task }) => {
    const exported = allTasks(task.file.tasks).filter((candidate) => candidate.type === 'test' && candidate.name.startsWith('replays run '));
    expect(exported).toHaveLength(Object.keys(files).length);
    for (const test of exported) expect(test.result?.state, test.name).toBe('pass');
  });

  it('type-checks under the strict tsconfig; a chunk with a wrong field does not', () => {
    expect(tampered).not.toBe(files.retried);
    const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
    if (parsed === undefined) throw new Error('tsconfig.json did not parse');
    const rootNames = [...Object.keys(files).map(path), join(scratch, 'tampered.ts')];
    const program = ts.createProgram({ rootNames, options: { ...parsed.options, noEmit: true } });
    const problems = (file: string) => ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    for (const name of Object.keys(files)) expect(problems(path(name)), name).toEqual([]);
    expect(problems(join(scratch, 'tampered.ts')).join('\n')).toMatch(/not assignable/);
  }, 120_000);
});
