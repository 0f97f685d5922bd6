import { isTestFile } from './test-paths.js';

/**
 * The test a line of a test file belongs to, by the file's text: the nearest `def test…` above it
 * that encloses it (Python), or the nearest `test('…'`/`it('…'` call above it (JS/TS). A citation
 * inside a test is then checked as that test. Undefined for helpers, fixtures and config (never a
 * test), and for a line outside every test.
 */
export function enclosingTest(file: string, text: string, line: number): string | undefined {
  if (!isTestFile(file)) return undefined;
  const lines = text.split(/\r?\n/).slice(0, line);
  if (file.endsWith('.py')) return enclosingPythonTest(lines);
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const call = /\b(?:it|test)(?:\.\w+)*(?:\([^()]*\))?\(\s*(['"`])((?:\\.|(?!\1).)*)\1/.exec(
      lines[index]!,
    );
    if (call) return call[2];
  }
  return undefined;
}

function enclosingPythonTest(lines: string[]): string | undefined {
  const indentOf = (text: string) => /^\s*/.exec(text)![0].length;
  const cited = lines.at(-1) ?? '';
  let limit = cited.trim() === '' ? Infinity : indentOf(cited) + 1;
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const text = lines[index]!;
    if (text.trim() === '' || text.trim().startsWith('#')) continue;
    const indent = indentOf(text);
    if (indent >= limit) continue;
    const def = /^\s*(?:async\s+)?def\s+(\w+)/.exec(text);
    if (def) return def[1]!.startsWith('test') ? def[1] : undefined;
    if (!/^\s*(?:class|@)/.test(text)) limit = indent;
    else if (/^\s*class\s/.test(text)) return undefined;
  }
  return undefined;
}
