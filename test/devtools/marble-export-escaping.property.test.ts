/**
 * Exported marbles are data, never code (issue 31 §4). For any title and payload strings (unicode,
 * with line terminators, U+2028/U+2029, comment ends, backticks, `${`, quotes, backslashes, lone
 * surrogates and bidi controls mixed in), the snippet `toMarbleDiagram` writes:
 * - parses with TypeScript's parser without a diagnostic, to the same statements (kind by kind, the
 *   whole tree) and the same comments as the export of plain strings;
 * - keeps the title inside its one header line, written so that it reads back as the title;
 * - holds every payload string as a literal TypeScript reads back exactly, whose source text is
 *   also safe pasted into a comment or a template literal (no raw line terminator, comment end,
 *   backtick, `${`, control, format or lone surrogate code point);
 * - run as written, rebuilds the chunks and defines nothing global.
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` / 5 (CI 200; the soak run 4,000), at least 20.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import ts from 'typescript';
import type { ChunkType } from 'rxagent';
import { from, lastValueFrom, toArray } from 'rxjs';
import { Inspector, toMarbleDiagram } from 'rxagent/devtools';
import { createChunkBuilders, testUsage } from 'rxagent/testing';
import { escapeText, sameValue } from '../../src/devtools/internal/js-literal.js';
import { checkProperty, expectNone, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { evaluateSnippet } from './support/evaluate-snippet.js';

const RUNS = Math.max(20, Math.floor(PROPERTY_RUNS / 5));

/** What breaks generated source when written raw: each is mixed into the generated strings. */
const DANGEROUS = ['\n', '\r', '\r\n', '\u2028', '\u2029', '*/', '/*', '//', '`', '${', '${x}', "'", '"', '\\', '\\u', '\ud800', '\udfff', '\u202e', '\u2066', '\ufeff', '\u0000', '\u0085', '\u{E0041}', '\u{1D173}', '\u00a0', '<!--', '-->', '</script>'];

const text = fc.string({ unit: fc.oneof(fc.constantFrom(...DANGEROUS), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })), maxLength: 12 });

/** A title and five payload strings, all different (equal chunks would share a diagram key). */
const input = fc.record({ title: text, payloads: fc.uniqueArray(text, { minLength: 5, maxLength: 5 }) });

/** A run whose strings are `payloads`: a text delta, a reasoning delta, tool input, a data part, an error message. */
function runWith(payloads: readonly string[]): ChunkType[] {
  const [delta, reasoning, query, data, message] = payloads as [string, string, string, string, string];
  const chunk = createChunkBuilders('run-1');
  return [
    chunk.start(),
    chunk.stepStart(0),
    chunk.textStart(),
    chunk.textDelta(delta),
    chunk.textEnd(),
    chunk.reasoningDelta(reasoning),
    chunk.toolCall({ toolCallId: 'call-1', toolName: 'search', args: { query } }),
    chunk.data('data-note', { note: data }),
    chunk.error(new Error(message)),
    chunk.finish('stop', { text: delta, usage: testUsage({ inputTokens: 1, outputTokens: 2 }) }),
  ];
}

function parse(code: string): { file: ts.SourceFile; diagnostics: readonly ts.DiagnosticWithLocation[] } {
  const file = ts.createSourceFile('exported.test.ts', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  // parse errors only (no type check): the parser's own list
  const diagnostics = (file as unknown as { parseDiagnostics: readonly ts.DiagnosticWithLocation[] }).parseDiagnostics;
  return { file, diagnostics };
}

/** Every node's kind, depth first: the shape of the file without its literals' text. */
function shape(file: ts.SourceFile): string[] {
  const kinds: string[] = [];
  const visit = (node: ts.Node, depth: number): void => {
    kinds.push(`${depth}:${ts.SyntaxKind[node.kind]}`);
    node.forEachChild((child) => visit(child, depth + 1));
  };
  visit(file, 0);
  return kinds;
}

/** The text of every comment in the file, as the scanner sees it. */
function comments(code: string): string[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, code);
  const found: string[] = [];
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.SingleLineCommentTrivia || token === ts.SyntaxKind.MultiLineCommentTrivia) found.push(scanner.getTokenText());
  }
  return found;
}

/** Every string literal: what it reads as, and its source text. */
function stringLiterals(file: ts.SourceFile): Array<{ text: string; source: string }> {
  const found: Array<{ text: string; source: string }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push({ text: node.text, source: node.getText(file) });
    node.forEachChild(visit);
  };
  visit(file);
  return found;
}

/**
 * What a literal's source must not hold raw, so that the same text is safe pasted into a comment,
 * a JSDoc block or a template literal: line terminators, a comment end, a backtick or `${`, and
 * control, format (bidi, zero-width) or lone surrogate code points.
 */
const UNSAFE_SOURCE = /[\n\r\u2028\u2029`]|\*\/|\$\{|[\p{Cc}\p{Cf}\p{Cs}]/u;

/** What TypeScript reads `body` as, between single quotes (how the header writes the title). */
function readBack(body: string): string | undefined {
  const { file, diagnostics } = parse(`'${body}';`);
  const statement = file.statements[0];
  if (diagnostics.length > 0 || file.statements.length !== 1 || statement === undefined || !ts.isExpressionStatement(statement)) return undefined;
  return ts.isStringLiteral(statement.expression) ? statement.expression.text : undefined;
}

function problemsOf(title: string, payloads: readonly string[]): string[] {
  const problems: string[] = [];
  const chunks = runWith(payloads);
  const exported = toMarbleDiagram(chunks, { title });
  const plain = toMarbleDiagram(runWith(payloads.map((_, index) => `plain ${index}`)), { title: 'plain title' });
  const { file, diagnostics } = parse(exported.code);
  if (diagnostics.length > 0) problems.push(`parse errors: ${diagnostics.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')).join('; ')}`);
  const expectedShape = shape(parse(plain.code).file);
  if (shape(file).join(' ') !== expectedShape.join(' ')) problems.push(`statements differ from the plain export: ${file.statements.map((statement) => ts.SyntaxKind[statement.kind]).join(', ')}`);
  const found = comments(exported.code);
  const expectedComments = comments(plain.code);
  if (found.length !== expectedComments.length) problems.push(`${found.length} comments, the plain export has ${expectedComments.length}`);
  const header = /^\/\/ (.*): 10 chunks, exported by the rxagent inspector\.$/su.exec(found[0] ?? '');
  if (header === null) problems.push(`the header comment is not one line ending the usual way: ${JSON.stringify(found[0])}`);
  else if (readBack(header[1] as string) !== title) problems.push(`the header reads back as ${JSON.stringify(readBack(header[1] as string))}, not the title`);
  for (const comment of found) if (/[\n\r\u2028\u2029]/u.test(comment.slice(0, 2) === '//' ? comment : '')) problems.push(`a line comment spans lines: ${JSON.stringify(comment)}`);
  const literals = stringLiterals(file);
  for (const payload of payloads) if (!literals.some((literal) => literal.text === payload)) problems.push(`no literal reads back as ${JSON.stringify(payload)}`);
  // an escaped character (`\``, `\${`, `*\/`) is safe; an escaped line terminator or invisible character is not
  for (const literal of literals) if (UNSAFE_SOURCE.test(literal.source.replace(/\\[^\n\r\u2028\u2029\p{Cc}\p{Cf}\p{Cs}]/gu, '_'))) problems.push(`a literal is not safe in a comment or template: ${JSON.stringify(literal.source)}`);
  const globalsBefore = Object.getOwnPropertyNames(globalThis).join(',');
  let evaluated: ReturnType<typeof evaluateSnippet> | undefined;
  try {
    evaluated = evaluateSnippet(exported.code);
  } catch (error) {
    problems.push(`running the snippet threw: ${String(error)}`);
  }
  if (Object.getOwnPropertyNames(globalThis).join(',') !== globalsBefore) problems.push('running the snippet defined a global');
  if (evaluated !== undefined) {
    if (evaluated.diagram !== exported.diagram) problems.push(`the snippet's diagram is ${JSON.stringify(evaluated.diagram)}, not ${JSON.stringify(exported.diagram)}`);
    if (!sameValue(evaluated.values, exported.values)) problems.push("the snippet's values differ from the chunks");
  }
  return problems;
}

describe('marble export: strings are data, never code (property)', () => {
  it(
    'any title and payload strings parse to the plain export\'s statements and read back exactly',
    async () => {
      await checkProperty('marble-export-escaping', input, async ({ title, payloads }) => expectNone(problemsOf(title, payloads), `title ${JSON.stringify(title)}, payloads ${JSON.stringify(payloads)}`), RUNS);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'payload strings alone (a plain title): every literal reads back exactly and is safe in a comment or template',
    async () => {
      await checkProperty('marble-export-escaping-payloads', input, async ({ payloads }) => expectNone(problemsOf('plain title', payloads), `payloads ${JSON.stringify(payloads)}`), RUNS);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it("the inspector's export: a run title and agent id with line breaks and comment ends stay in the header", async () => {
    const inspector = new Inspector();
    const chunks = runWith(['a', 'b', 'c', 'd', 'e']);
    const title = 'line one\nglobalThis.pwned = true; /* */ \u2028 `${x}`';
    await lastValueFrom(inspector.trace(() => from(chunks), { agentId: 'agent\r\nx', title }).pipe(toArray()));
    const [summary] = inspector.runs();
    const { code } = inspector.exportMarbles(summary!.runId);
    const { file, diagnostics } = parse(code);
    expect(diagnostics).toEqual([]);
    expect(file.statements.map((statement) => ts.SyntaxKind[statement.kind])).toEqual(['ImportDeclaration', 'ImportDeclaration', 'FirstStatement', 'FirstStatement', 'FirstStatement']);
    const header = comments(code)[0] ?? '';
    expect(header).not.toMatch(/[\n\r\u2028\u2029]/u);
    expect(readBack(/^\/\/ (.*): \d+ chunks/u.exec(header)?.[1] ?? '')).toBe(`Run ${summary!.runId} of agent "agent\r\nx" ("${title}")`);
    // as an it() test: the title is also the input in the test's comment, inert there too
    const asTest = parse(inspector.exportMarbles(summary!.runId, { test: true }).code);
    expect(asTest.diagnostics).toEqual([]);
    expect(asTest.file.statements.map((statement) => ts.SyntaxKind[statement.kind])).toEqual([
      'ImportDeclaration',
      'ImportDeclaration',
      'ImportDeclaration',
      'FirstStatement',
      'FirstStatement',
      'FirstStatement',
      'ExpressionStatement',
    ]);
  });

  it('examples: a title that closes its comment, a payload with U+2028, a lone surrogate, a template', () => {
    for (const [title, payloads] of [
      ['x\nprocess.exit(1)', ['a', 'b', 'c', 'd', 'e']],
      ['t', ['\u2028', '\ud800', '`${globalThis}`', '*/ end', "'; throw 1; '"]],
    ] as const) {
      expect(problemsOf(title, payloads)).toEqual([]);
    }
    const { code } = toMarbleDiagram(runWith(['a\u2028b', 'b', 'c', 'd', 'e']), { title: 'x\u2029y */' });
    expect(code).toContain("chunk.textDelta('a\\u2028b')");
    expect(code.split('\n')[0]).toBe('// x\\u2029y *\\/: 10 chunks, exported by the rxagent inspector.');
    // ordinary text of any script reads as written; invisible and astral format characters become escapes
    expect(escapeText('Grüße, 你好 👋 "ok" a/b * c')).toBe('Grüße, 你好 👋 "ok" a/b * c');
    expect(escapeText('\u{E0041}\u200b\u00a0$x${')).toBe('\\udb40\\udc41\\u200b\\u00a0$x\\${');
  });
});
