/**
 * Doctest examples in product files: Python's `>>>` examples with their expected output, and the code
 * blocks of Rust doc comments. Where the base runs them (pytest --doctest-modules, unittest's
 * DocTestSuite, cargo's doc tests) they are base tests living in product code, and the trusted runs
 * take the Player's copy of that code: so a base example the Player changed or removed is a test
 * change, found by comparing the two texts.
 */
import type { FileVersions, IntegrityFinding } from './integrity-types.js';

/** Which doctests the base runs: Python's (a runner option or a DocTestSuite), Rust's (a library crate). */
export interface DoctestsRun {
  python: boolean;
  rust: boolean;
}

/**
 * Python examples as doctest's own finder and parser read them (src/analysis/python-doctests.ts),
 * per file: the base's and the Player's. A file without an entry is read by line pattern.
 */
export type ParsedDoctests = ReadonlyMap<string, { base: DoctestExample[]; now: DoctestExample[] }>;

/** A base example the Player changed or removed in product code the base's doctests run: must_fix. */
export function doctestFindings(
  productCode: readonly FileVersions[],
  run: DoctestsRun,
  parsed: ParsedDoctests = new Map(),
): IntegrityFinding[] {
  return productCode.flatMap((file) => {
    const judged = file.path.endsWith('.rs') ? run.rust : file.path.endsWith('.py') && run.python;
    if (!judged || file.base === undefined) return [];
    return removedExamples(file.path, file.base, file.now ?? '', parsed.get(file.path)).map(
      (example) =>
        changedExample(
          file.path,
          example,
          'the base runs its doctests, so the example is a base test, and the trusted runs take your copy of this file',
        ),
    );
  });
}

/**
 * A base example the Player changed or removed in a text file the base's modules run as doctests
 * (`DocFileSuite`, `testfile`; src/analysis/python-doctest-files.ts): must_fix, named by the file.
 */
export function doctestFileFindings(files: ParsedDoctests): IntegrityFinding[] {
  return [...files].flatMap(([file, examples]) =>
    removedExamples(file, '', '', examples).map((example) =>
      changedExample(
        file,
        { ...example, owner: file },
        "the base's tests run this file as doctests (DocFileSuite, testfile), so the example is a base test",
      ),
    ),
  );
}

function changedExample(file: string, example: DoctestExample, why: string): IntegrityFinding {
  return {
    kind: 'doctest_changed',
    severity: 'must_fix',
    file,
    line: example.line,
    test: example.owner,
    detail: `a doctest example of \`${example.owner}\` (line ${example.line} at base) was changed or removed: ${why}. Restore it, or acknowledge the change in record_verdict acknowledged_changes [{test: "${example.owner}", criterion, reason}] if a criterion changes it`,
  };
}

export interface DoctestExample {
  /** 1-based line of the example's first line. */
  line: number;
  /** The function, class or item it documents (or the module, `<module>`). */
  owner: string;
  /** The example's source and expected output, whitespace-normalised: what must stay. */
  text: string;
}

export function doctestExamples(file: string, text: string): DoctestExample[] {
  return file.endsWith('.rs') ? rustExamples(text) : pythonExamples(text);
}

/** Base examples no longer in the Player's version, each once (the k-th copy with the k-th). */
export function removedExamples(
  file: string,
  base: string,
  now: string,
  parsed?: { base: DoctestExample[]; now: DoctestExample[] },
): DoctestExample[] {
  const remaining = new Map<string, number>();
  for (const example of parsed?.now ?? doctestExamples(file, now))
    remaining.set(example.text, (remaining.get(example.text) ?? 0) + 1);
  return (parsed?.base ?? doctestExamples(file, base)).filter((example) => {
    const left = remaining.get(example.text) ?? 0;
    if (left > 0) remaining.set(example.text, left - 1);
    return left === 0;
  });
}

function pythonExamples(text: string): DoctestExample[] {
  const lines = text.split(/\r?\n/);
  const examples: DoctestExample[] = [];
  let owner = '<module>';
  for (let index = 0; index < lines.length; index += 1) {
    const definition = /^\s*(?:async\s+)?(?:def|class)\s+(\w+)/.exec(lines[index]!);
    if (definition) owner = definition[1]!;
    const prompt = /^(\s*)>>> ?(.*)$/.exec(lines[index]!);
    if (!prompt) continue;
    const start = index;
    const parts = [prompt[2]!.trim()];
    while (index + 1 < lines.length && /^\s*\.\.\.(?: |$)/.test(lines[index + 1]!))
      parts.push(lines[++index]!.trim().slice(3).trim());
    // The expected output: up to a blank line, the next prompt or the docstring's end.
    while (
      index + 1 < lines.length &&
      lines[index + 1]!.trim() !== '' &&
      !/^\s*>>>/.test(lines[index + 1]!) &&
      !/^\s*(?:"""|''')/.test(lines[index + 1]!)
    )
      parts.push(`=> ${lines[++index]!.trim().replace(/(?:"""|''')$/, '')}`);
    examples.push({ line: start + 1, owner, text: parts.join('\n') });
  }
  return examples;
}

function rustExamples(text: string): DoctestExample[] {
  const lines = text.split(/\r?\n/);
  const examples: DoctestExample[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const fence = /^\s*\/\/[/!]\s*```(\w*)/.exec(lines[index]!);
    if (!fence || /^(?:text|ignore|no_run|compile_fail)$/.test(fence[1]!)) continue;
    const start = index;
    const body: string[] = [];
    while (index + 1 < lines.length && !/^\s*\/\/[/!]\s*```/.test(lines[index + 1]!))
      body.push(lines[++index]!.replace(/^\s*\/\/[/!]\s?/, '').trim());
    index += 1;
    examples.push({ line: start + 1, owner: documentedItem(lines, index), text: body.join('\n') });
  }
  return examples;
}

/** The item a doc comment ending at `index` documents: the next `fn`, `struct`, … name. */
function documentedItem(lines: string[], index: number): string {
  for (let next = index + 1; next < lines.length; next += 1) {
    if (/^\s*\/\/[/!]/.test(lines[next]!) || /^\s*#\[/.test(lines[next]!)) continue;
    const item = /\b(?:fn|struct|enum|trait|mod|const|static|type|macro_rules!)\s+(\w+)/.exec(
      lines[next]!,
    );
    return item?.[1] ?? '<crate>';
  }
  return '<crate>';
}
