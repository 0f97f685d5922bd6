import path from 'node:path';
import {
  attributeGroup,
  isTestFunctionAttribute,
  itemEnd,
  MODULE_OPENING,
  walkCode,
} from '../scope/rust-test-blocks.js';

/** A `#[test]`-style function of a Rust source: its libtest id and where it lies. */
interface RustTestFunction {
  /** `tests::adds` in src/lib.rs, `parse::tests::adds` in src/parse.rs, `adds` in tests/x.rs. */
  id: string;
  /** [start, end) with its attributes. */
  start: number;
  end: number;
}

/**
 * The test a line of a Rust source belongs to: the `#[test]` (`#[tokio::test]`, …) function holding
 * it, at any depth of inline modules (`#[cfg(test)] mod tests { … }`), named as libtest names it.
 */
export function enclosingRustTest(file: string, text: string, line: number): string | undefined {
  const lines = text.split('\n');
  if (line > lines.length) return undefined;
  const offset = lines.slice(0, line - 1).reduce((sum, each) => sum + each.length + 1, 0);
  const lineEnd = offset + lines[line - 1]!.length;
  return rustTestFunctions(file, text).find((test) => test.start <= lineEnd && offset < test.end)
    ?.id;
}

function rustTestFunctions(file: string, source: string): RustTestFunction[] {
  const found: RustTestFunction[] = [];
  scan(source, 0, fileModule(file), false, found);
  return found;
}

/**
 * The module path a file's items have in libtest's ids: none at a crate root (src/lib.rs,
 * src/main.rs, an integration test tests/x.rs, whose binary is its own crate), else the file's path
 * below src/ (src/a/b.rs and src/a/b/mod.rs are `a::b`).
 */
function fileModule(file: string): string[] {
  const parts = file.split('/');
  const src = parts.lastIndexOf('src');
  if (src === -1 || parts.includes('tests')) return [];
  const below = parts.slice(src + 1);
  const name = path.posix.basename(below.pop()!, '.rs');
  if (below.length === 0 && ['lib', 'main'].includes(name)) return [];
  return name === 'mod' ? below : [...below, name];
}

/** One module's test functions, from `from` to its closing brace (the end of the file at the top). */
function scan(
  source: string,
  from: number,
  module: string[],
  nested: boolean,
  found: RustTestFunction[],
): number {
  let depth = 0;
  return walkCode(source, from, (index) => {
    if (depth === 0 && source.startsWith('#[', index)) {
      const attributes = attributeGroup(source, index);
      const name = /^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe)\s+)*fn\s+(\w+)/.exec(
        source.slice(attributes.end, attributes.end + 300),
      )?.[1];
      if (!name || !attributes.texts.some(isTestFunctionAttribute)) return attributes.end;
      const end = itemEnd(source, attributes.end);
      found.push({ id: [...module, name].join('::'), start: index, end });
      return end;
    }
    const opening =
      depth === 0 && !/\w/.test(source[index - 1] ?? '')
        ? MODULE_OPENING.exec(source.slice(index, index + 200))
        : null;
    if (opening)
      return scan(source, index + opening[0].length, [...module, opening[1]!], true, found);
    const char = source[index];
    if (char === '{') depth++;
    else if (char === '}') {
      if (depth === 0 && nested) return { stop: index + 1 };
      depth--;
    }
    return index + 1;
  });
}
