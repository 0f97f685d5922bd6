/**
 * The import paths of a Go source file, read from its text. Go puts every import declaration after
 * the package clause and before any other declaration, so the scan stops at the first `func`,
 * `type`, `var` or `const`; block comments are removed first and a path is always a quoted string.
 */
export function goImports(text: string): string[] {
  const paths: string[] = [];
  const code = text.replace(/\/\*[\s\S]*?\*\//g, ' ');
  let inBlock = false;
  for (const raw of code.split(/\r?\n/)) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (inBlock) {
      if (line.startsWith(')')) inBlock = false;
      else paths.push(...quoted(line));
      continue;
    }
    if (/^(?:func|type|var|const)\b/.test(line)) break;
    const declaration = /^import\s*(.*)$/.exec(line);
    if (!declaration) continue;
    const rest = declaration[1]!;
    if (rest.startsWith('(')) {
      const inside = rest.slice(1);
      paths.push(...quoted(inside));
      inBlock = !inside.includes(')');
    } else paths.push(...quoted(rest));
  }
  return paths;
}

/** The paths of `"a"`, `name "a"`, `. "a"`, `_ "a"` and raw-string forms on one line. */
function quoted(line: string): string[] {
  return [...line.matchAll(/"((?:\\.|[^"\\])*)"|`([^`]*)`/g)].map((match) => match[1] ?? match[2]!);
}
