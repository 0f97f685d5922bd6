/**
 * The Go test a line of a `_test.go` file belongs to: the top-level `func TestX(t *testing.T)` (or a
 * benchmark, example or fuzz target) whose body holds it, and the `t.Run("name", …)` subtests around
 * it, named as `go test` names them (`TestX/name`, spaces as underscores). A subtest whose name is
 * not a literal (`t.Run(tc.name, …)`) leaves the citation with its parent. gofmt's layout is relied
 * on: a top-level func ends at the first `}` in column 0, a call's closing `})` at its own indent.
 */
export function enclosingGoTest(lines: readonly string[]): string | undefined {
  const cited = lines.length - 1;
  let start = -1;
  for (let index = cited; index >= 0; index -= 1) {
    const text = lines[index]!;
    if (index < cited && text.startsWith('}')) return undefined;
    if (!text.startsWith('func ')) continue;
    start = index;
    break;
  }
  const name = /^func\s+((?:Test|Benchmark|Example|Fuzz)\w*)\s*\(/.exec(lines[start] ?? '')?.[1];
  if (name === undefined) return undefined;
  return [name, ...openSubtests(lines.slice(start + 1, cited + 1))].join('/');
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
