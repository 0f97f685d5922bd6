/**
 * The Go test a line of a `_test.go` file belongs to: the top-level `func TestX(t *testing.T)` (or a
 * benchmark, example or fuzz target) whose body holds it, and the `t.Run("name", …)` subtests around
 * it, named as `go test` names them (`TestX/name`, spaces as underscores). A subtest whose name is
 * not a literal (`t.Run(tc.name, …)`) leaves the citation with its parent. A method
 * `func (s *MySuite) TestX()` is a testify-style suite test: the suite runner calls each `Test*`
 * method of the suite as a subtest of the test that runs it (`suite.Run(t, new(MySuite))` in
 * `func TestMySuite`), so it is `TestMySuite/TestX`, and its `s.Run("name", …)` subtests follow.
 * The runner is looked for in `files` (the cited file's lines first, then the package's other
 * test files).
 * gofmt's layout is relied on: a top-level func ends at the first `}` in column 0, a call's closing
 * `})` at its own indent.
 */
export function enclosingGoTest(
  lines: readonly string[],
  files: readonly (readonly string[])[] = [lines],
): string | undefined {
  const start = enclosingFunc(lines);
  if (start === undefined) return undefined;
  const method = SUITE_METHOD.exec(lines[start]!);
  if (!method) return testFuncAround(lines, start);
  const runner = files
    .map((file) => suiteRunner(file, method[1]!))
    .find((found) => found !== undefined);
  return runner && [runner, method[2]!, ...openSubtests(lines.slice(start + 1))].join('/');
}

/** The test (and its open subtests) of the top-level func at `start`, when it is a test func. */
function testFuncAround(lines: readonly string[], start: number): string | undefined {
  const name = /^func\s+((?:Test|Benchmark|Example|Fuzz)\w*)\s*\(/.exec(lines[start]!)?.[1];
  return name && [name, ...openSubtests(lines.slice(start + 1))].join('/');
}

/** `func (s *MySuite) TestX() {`: the receiver's type and the method's name. */
const SUITE_METHOD =
  /^func\s*\(\s*(?:\w+\s+)?\*?\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*(Test\w*)\s*\(\s*\)/;

/** The line of the top-level func whose body holds the last line, if any. */
function enclosingFunc(lines: readonly string[]): number | undefined {
  const cited = lines.length - 1;
  for (let index = cited; index >= 0; index -= 1) {
    const text = lines[index]!;
    if (index < cited && text.startsWith('}')) return undefined;
    if (text.startsWith('func ')) return index;
  }
  return undefined;
}

/**
 * The test that runs the suite `type` in one file: the test (or subtest) around a
 * `suite.Run(t, new(T))` or `suite.Run(t, &T{…})` call, or one handing it a variable its function
 * set to such a value. Undefined when this file runs no such suite.
 */
function suiteRunner(file: readonly string[], type: string): string | undefined {
  const made = String.raw`(?:new\(\s*${type}\s*\)|&\s*${type}\s*\{)`;
  const direct = new RegExp(String.raw`\b\w+\.Run\(\s*\w+\s*,\s*${made}`);
  const handed = /\b\w+\.Run\(\s*\w+\s*,\s*(\w+)\s*\)/;
  for (const [index, text] of file.entries()) {
    const variable = handed.exec(text)?.[1];
    const runs =
      direct.test(text) ||
      (variable !== undefined && setInFunc(file.slice(0, index), variable, made));
    const around = file.slice(0, index + 1);
    const start = runs ? enclosingFunc(around) : undefined;
    const runner = start === undefined ? undefined : testFuncAround(around, start);
    if (runner !== undefined) return runner;
  }
  return undefined;
}

/** Whether `variable` is set to a value `made` matches in the func around the end of `lines`. */
function setInFunc(lines: readonly string[], variable: string, made: string): boolean {
  const assigned = new RegExp(String.raw`\b${variable}\s*:?=\s*${made}`);
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    if (assigned.test(lines[index]!)) return true;
    if (lines[index]!.startsWith('func')) return false;
  }
  return false;
}

/** The literal names of the `t.Run` calls still open at the last line, outermost first. */
function openSubtests(body: readonly string[]): string[] {
  const open: { indent: string; name: string | undefined }[] = [];
  for (const [index, text] of body.entries()) {
    const indent = /^\s*/.exec(text)![0];
    const top = open.at(-1);
    if (index < body.length - 1 && top && indent === top.indent && text.trimStart().startsWith('}'))
      open.pop();
    const call = /^\s*\w+\.Run\(\s*(?:"((?:[^"\\]|\\.)*)"|[^,]+),\s*func\b.*\{\s*$/.exec(text);
    if (call) open.push({ indent, name: call[1] });
  }
  const names: string[] = [];
  for (const { name } of open) {
    if (name === undefined) break; // a computed name: the citation stays with the test above it
    names.push(name.replace(/\s/g, '_'));
  }
  return names;
}
