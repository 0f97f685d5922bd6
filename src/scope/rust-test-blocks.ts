import { parseCfg, testDependence, type CfgPredicate } from './rust-cfg.js';

/**
 * Rust keeps unit tests inside the source (`#[cfg(test)] mod tests { … }`, `#[test] fn …`). The trusted
 * runs take a crate's code from the Player but its in-source tests from the base, the fail-to-pass run
 * the other way round: this swaps the test items of `code`, at the top level and inside inline modules
 * (`mod inner { … }`), for those of `tests`, each put back into the module it was in there.
 */
export function withTestBlocksOf(code: string, tests: string | undefined): string {
  const kept = removeRanges(code, sourceLayout(code).items);
  const testItems = tests ? sourceLayout(tests).items : [];
  if (testItems.length === 0) return kept;
  const modules = sourceLayout(kept).modules;
  const inserted = new Map<number, string[]>();
  const appended: string[] = [];
  for (const item of testItems) {
    // Into the deepest module `code` has; modules it lacks are written around the item.
    let depth = item.module.length;
    while (depth > 0 && !modules.has(moduleKey(item.module.slice(0, depth)))) depth--;
    const text = item.module
      .slice(depth)
      .reduceRight(
        (inner, name) => `mod ${name} {\n${inner}\n}`,
        tests!.slice(item.start, item.end),
      );
    if (depth === 0) appended.push(text);
    else {
      const close = modules.get(moduleKey(item.module.slice(0, depth)))!;
      inserted.set(close, [...(inserted.get(close) ?? []), text]);
    }
  }
  let result = kept;
  for (const [close, texts] of [...inserted].sort(([a], [b]) => b - a))
    result = `${result.slice(0, close)}\n${texts.join('\n\n')}\n${result.slice(close)}`;
  if (appended.length === 0) return result;
  return `${result.replace(/\s*$/, '\n')}\n${appended.join('\n\n')}\n`;
}

/** The test items of a Rust source, as written: equal for two sources with the same tests. */
export function testBlocks(source: string): string[] {
  return sourceLayout(source).items.map((item) => source.slice(item.start, item.end));
}

interface TestItem {
  /** [start, end) of the item with its attributes. */
  start: number;
  end: number;
  /** Names of the inline modules it sits in, outermost first. */
  module: string[];
}

interface SourceLayout {
  items: TestItem[];
  /** Inline modules by path (`a::b`): the index of each one's closing brace. */
  modules: Map<string, number>;
}

const moduleKey = (names: string[]) => names.join('::');

/** The test items of a Rust source, at the top level and in inline modules, and those modules. */
function sourceLayout(source: string): SourceLayout {
  const layout: SourceLayout = { items: [], modules: new Map() };
  scanModule(source, 0, [], layout);
  return layout;
}

/** A `mod name {` opening at `index`: the name and the index of its brace. */
export const MODULE_OPENING = /^mod\s+(?:r#)?([A-Za-z_]\w*)\s*\{/;

/**
 * Walks one module's items from `from` (past its opening brace) to its closing brace, the end of the
 * file for the top level; returns the index just past that brace.
 */
function scanModule(source: string, from: number, module: string[], layout: SourceLayout): number {
  let depth = 0;
  return walkCode(source, from, (index) => {
    if (depth === 0 && source.startsWith('#[', index)) {
      const attributes = attributeGroup(source, index);
      if (!attributes.texts.some(isTestAttribute)) return attributes.end;
      const end = itemEnd(source, attributes.end);
      layout.items.push({ start: index, end, module });
      return end;
    }
    const opening =
      depth === 0 && !/\w/.test(source[index - 1] ?? '')
        ? MODULE_OPENING.exec(source.slice(index, index + 200))
        : null;
    if (opening) {
      const name = opening[1]!;
      return scanModule(source, index + opening[0].length, [...module, name], layout);
    }
    const char = source[index];
    if (char === '{') depth++;
    else if (char === '}') {
      if (depth === 0 && module.length > 0) {
        layout.modules.set(moduleKey(module), index);
        return { stop: index + 1 };
      }
      depth--;
    }
    return index + 1;
  });
}

/** The outer attributes stacked from `index` on (comments between them allowed), and where they end. */
export function attributeGroup(source: string, index: number): { texts: string[]; end: number } {
  const texts: string[] = [];
  let at = index;
  let end = index;
  while (source.startsWith('#[', at)) {
    end = matching(source, at + 1, '[', ']');
    texts.push(source.slice(at, end));
    at = end;
    for (;;) {
      while (/\s/.test(source[at] ?? '')) at++;
      if (!source.startsWith('//', at) && !source.startsWith('/*', at)) break;
      at = skipNonCode(source, at);
    }
  }
  return { texts, end };
}

/**
 * `#[cfg(…)]` whose predicate, read by its grammar, holds only under test (`test`,
 * `all(test, unix)`, `not(not(test))`; not `any(test, feature = "x")`, compiled into the product
 * with that feature), or a test function's own attribute (`#[test]`, `#[tokio::test]`).
 */
export function isTestAttribute(attribute: string): boolean {
  if (isTestFunctionAttribute(attribute)) return true;
  const predicate = cfgAttributePredicate(attribute);
  return predicate !== undefined && testDependence(predicate) === 'only';
}

/** The predicate of a `#[cfg(…)]` or `#![cfg(…)]` attribute; undefined for any other attribute. */
export function cfgAttributePredicate(attribute: string): CfgPredicate | undefined {
  const inner = /^#\s*!?\s*\[\s*cfg\s*\(([\s\S]*)\)\s*\]$/.exec(attribute.trim())?.[1];
  return inner === undefined ? undefined : parseCfg(inner);
}

/** A test function's own attribute: `#[test]`, `#[tokio::test]`, `#[test(…)]` (a path ending in `test`). */
export function isTestFunctionAttribute(attribute: string): boolean {
  return /^#\s*\[\s*(?:[\w]+\s*::\s*)*test\s*(?:\(|\])/.test(attribute);
}

/** Past the item that follows its attributes: up to its `;`, or its block's closing brace. */
export function itemEnd(source: string, from: number): number {
  return walkCode(source, from, (index) => {
    const char = source[index];
    if (char === ';') return { stop: index + 1 };
    if (char === '{') return { stop: matching(source, index, '{', '}') };
    // Brackets and parentheses hold no item end: `fn f() -> [u8; 4] {`, `#[…]` further on.
    if (char === '[') return matching(source, index, '[', ']');
    if (char === '(') return matching(source, index, '(', ')');
    return index + 1;
  });
}

/** Index just past the bracket that closes the one at `open`. */
function matching(source: string, open: number, opening: string, closing: string): number {
  let depth = 0;
  return walkCode(source, open, (index) => {
    if (source[index] === opening) depth++;
    else if (source[index] === closing && --depth === 0) return { stop: index + 1 };
    return index + 1;
  });
}

/**
 * Visits each code character from `from` on, past comments and literals. `visit` returns the index to
 * go on from, or `{ stop }` to end the walk there; the walk returns where it ended.
 */
export function walkCode(
  source: string,
  from: number,
  visit: (index: number) => number | { stop: number },
): number {
  let index = from;
  while (index < source.length) {
    const skipped = skipNonCode(source, index);
    if (skipped !== index) {
      index = skipped;
      continue;
    }
    const next = visit(index);
    if (typeof next !== 'number') return next.stop;
    index = next;
  }
  return source.length;
}

/** Past a comment, string or char literal starting at `index`; `index` itself when none starts there. */
function skipNonCode(source: string, index: number): number {
  const rest = source.slice(index, index + 3);
  if (rest.startsWith('//')) {
    const end = source.indexOf('\n', index);
    return end === -1 ? source.length : end;
  }
  if (rest.startsWith('/*')) {
    let depth = 0;
    let at = index;
    while (at < source.length) {
      if (source.startsWith('/*', at)) {
        depth++;
        at += 2;
      } else if (source.startsWith('*/', at)) {
        at += 2;
        if (--depth === 0) return at;
      } else at++;
    }
    return source.length;
  }
  const raw = /^b?r(#*)"/.exec(source.slice(index, index + 40));
  if (raw && !/\w/.test(source[index - 1] ?? '')) {
    const close = `"${raw[1]}`;
    const end = source.indexOf(close, index + raw[0].length);
    return end === -1 ? source.length : end + close.length;
  }
  if (source[index] === '"') {
    let at = index + 1;
    while (at < source.length && source[at] !== '"') at += source[at] === '\\' ? 2 : 1;
    return at + 1;
  }
  if (source[index] === "'") {
    // A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
    if (source[index + 1] === '\\') return source.indexOf("'", index + 3) + 1 || source.length;
    const width = source.codePointAt(index + 1)! > 0xffff ? 2 : 1;
    if (source[index + 1 + width] === "'") return index + 2 + width;
  }
  return index;
}

function removeRanges(source: string, ranges: { start: number; end: number }[]): string {
  let result = '';
  let from = 0;
  for (const { start, end } of ranges) {
    result += source.slice(from, start);
    from = end;
  }
  return result + source.slice(from);
}
