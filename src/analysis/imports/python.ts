import type { PythonImport } from '../../scope/import-reach.js';
import { stripComment } from '../source-text.js';

/**
 * The import statements of a Python module, read from its text: the reach of the tests needs only
 * which modules a file names, and a scan of the statement lines finds them without starting an
 * interpreter for every file of a large base. Statements inside triple-quoted strings are skipped;
 * an import in a function body or a `try` counts (the module may load it).
 */
export function pythonImports(text: string): PythonImport[] {
  const imports: PythonImport[] = [];
  for (const statement of statements(text)) {
    const plain = /^import\s+(.+)$/s.exec(statement);
    if (plain) {
      for (const part of plain[1]!.split(',')) {
        const module = /^\s*([\w.]+)/.exec(part)?.[1];
        if (module) imports.push({ module, level: 0, names: [] });
      }
      continue;
    }
    const from = /^from\s+(\.*)\s*([\w.]*)\s+import\s+(.+)$/s.exec(statement);
    if (!from) continue;
    const names = from[3]!
      .replace(/[()\\]/g, ' ')
      .split(',')
      .map((part) => /^\s*(\w+)/.exec(part)?.[1])
      .filter((name): name is string => name !== undefined && name !== '');
    imports.push({ module: from[2]!, level: from[1]!.length, names });
  }
  return imports;
}

/** `import` and `from` statements, continuation lines joined, outside triple-quoted strings. */
function* statements(text: string): Generator<string> {
  let inString: string | undefined;
  let pending: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    if (inString) {
      if (raw.includes(inString)) inString = afterStrings(raw.slice(raw.indexOf(inString) + 3));
      continue;
    }
    const line = stripComment(raw, '#');
    if (pending !== undefined) {
      pending += ` ${line.trim()}`;
      if (!continues(pending)) {
        yield pending;
        pending = undefined;
      }
      continue;
    }
    const trimmed = line.trim();
    if (/^(?:import|from)\s/.test(trimmed)) {
      if (continues(trimmed)) pending = trimmed;
      else yield trimmed;
      continue;
    }
    inString = afterStrings(line);
  }
}

/** An open parenthesis or a trailing backslash carries the statement to the next line. */
function continues(statement: string): boolean {
  return (
    statement.endsWith('\\') ||
    (statement.match(/\(/g) ?? []).length > (statement.match(/\)/g) ?? []).length
  );
}

/** The triple quote a line leaves open, if any. */
function afterStrings(line: string): string | undefined {
  let open: string | undefined;
  let rest = line;
  for (;;) {
    const match = open ? rest.indexOf(open) : rest.search(/"""|'''/);
    if (match === -1) return open;
    if (!open) open = rest.slice(match, match + 3);
    else open = undefined;
    rest = rest.slice(match + 3);
  }
}
