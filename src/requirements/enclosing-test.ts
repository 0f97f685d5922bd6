import path from 'node:path';
import { enclosingAnnotatedTest } from './annotated-enclosing-test.js';
import { enclosingGoTest } from './go-enclosing-test.js';
import { enclosingRustTest } from './rust-test-functions.js';
import { isTestFile } from '../scope/test-paths.js';

/** The test a cited line belongs to, and the test file whose run results hold it. */
export interface EnclosingTest {
  test: string;
  file: string;
}

/**
 * The test a line belongs to, by each language's grammar: the `def test…` around it (Python), the
 * nearest `test('…'`/`it('…'` call above it (JS/TS), the `func TestX` and `t.Run` subtests around it
 * or a suite's `func (s *S) TestX()` method under the test that runs the suite, in this file or
 * in `packageTests`, the package's other test files (Go), the method marked `@Test` or `[Fact]`
 * (Java, Kotlin, C#: `Class#method`, `Class.Method`), the `#[test]` function around it, in a test
 * file or inline in a source (Rust), the test that wrote a snapshot entry (jest/vitest
 * `__snapshots__/*.snap`). A citation inside a test is then checked as that test. Undefined for
 * helpers, fixtures and config (never a test), and for a line outside every test.
 */
export function enclosingTest(
  file: string,
  text: string,
  line: number,
  packageTests: readonly string[] = [],
): EnclosingTest | undefined {
  if (file.endsWith('.rs')) return named(enclosingRustTest(file, text, line), file);
  const annotated = ANNOTATED_LANGUAGES.get(path.posix.extname(file));
  if (annotated) return named(enclosingAnnotatedTest(linesUpTo(text, line), annotated), file);
  const snapshotOf = snapshotOwner(file);
  if (snapshotOf !== undefined) return named(snapshotKey(linesUpTo(text, line)), snapshotOf);
  if (!isTestFile(file)) return undefined;
  const lines = linesUpTo(text, line);
  if (file.endsWith('.py')) return named(enclosingPythonTest(lines), file);
  if (file.endsWith('.go')) {
    const files = [text, ...packageTests].map((source) => source.split(/\r?\n/));
    return named(enclosingGoTest(lines, files), file);
  }
  return named(enclosingJsTest(lines), file);
}

/** The test file a jest/vitest snapshot file belongs to: `__snapshots__/x.test.ts.snap` → `x.test.ts`. */
export function snapshotOwner(file: string): string | undefined {
  const parts = file.split('/');
  if (parts.at(-2) !== '__snapshots__' || !file.endsWith('.snap')) return undefined;
  return path.posix.join(...parts.slice(0, -2), path.posix.basename(file, '.snap'));
}

/** Languages whose tests are methods marked by an annotation or attribute. */
const ANNOTATED_LANGUAGES = new Map<string, 'jvm' | 'dotnet'>([
  ['.java', 'jvm'],
  ['.kt', 'jvm'],
  ['.cs', 'dotnet'],
]);

const named = (test: string | undefined, file: string) => (test ? { test, file } : undefined);

function linesUpTo(text: string, line: number): string[] {
  return text.split(/\r?\n/).slice(0, line);
}

/**
 * The test that owns the snapshot entry holding the last line: the entry's key (`exports[\`a > b 1\`]`)
 * without the counter jest and vitest add. Undefined between entries.
 */
function snapshotKey(lines: string[]): string | undefined {
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    if (index < lines.length - 1 && /`;\s*$/.test(lines[index]!)) return undefined;
    const key = /^exports\[`((?:\\.|[^`\\])*)`\]/.exec(lines[index]!)?.[1];
    if (key !== undefined) return key.replace(/\\(.)/g, '$1').replace(/ \d+$/, '');
  }
  return undefined;
}

function enclosingJsTest(lines: string[]): string | undefined {
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
