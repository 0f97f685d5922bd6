import { parseCfg, testDependence } from '../scope/rust-cfg.js';
import { cfgAttributePredicate, walkCode } from '../scope/rust-test-blocks.js';

/** A place in Rust code where `test` decides what the product does. */
export interface CfgRead {
  /** 1-based line of the `cfg` it starts with. */
  line: number;
  what: string;
}

const MACRO = /^(?:(?:::)?(?:std|core)\s*::\s*)?cfg\s*!\s*[([{]/;

/**
 * Each `cfg!(…)` whose predicate `test` decides, and each `#[cfg(…)]` that leaves an item out
 * under test while it is built otherwise (`not(test)`, `any(not(test), unix)`): read by the
 * predicate's grammar, comments and strings skipped, so a spelling (`not(not(test))`, a
 * `std::cfg!`, a bracketed macro) does not hide one. A `#[cfg(test)]` item is test-only code.
 */
export function cfgReadsOfTest(source: string): CfgRead[] {
  const reads: CfgRead[] = [];
  const lineAt = (index: number) => source.slice(0, index).split('\n').length;
  walkCode(source, 0, (index) => {
    if (/\w/.test(source[index - 1] ?? '')) return index + 1;
    const rest = source.slice(index, index + 40);
    const macro = MACRO.exec(rest);
    if (macro) {
      const open = index + macro[0].length - 1;
      const close = closing(source, open);
      const predicate = parseCfg(source.slice(open + 1, close - 1));
      if (!predicate || testDependence(predicate) !== 'none')
        reads.push({ line: lineAt(index), what: `\`${oneLine(source, index, close)}\`` });
      return close;
    }
    if (!/^#\s*!?\s*\[\s*cfg\s*\(/.test(rest)) return index + 1;
    const close = closing(source, source.indexOf('[', index));
    const predicate = cfgAttributePredicate(source.slice(index, close));
    if (predicate && testDependence(predicate) === 'reads')
      reads.push({ line: lineAt(index), what: `\`${oneLine(source, index, close)}\`` });
    return close;
  });
  return reads;
}

/** Just past the bracket that closes the one at `open` (`(`, `[` or `{`), strings skipped. */
function closing(source: string, open: number): number {
  const pairs: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
  const stack: string[] = [];
  return walkCode(source, open, (index) => {
    const char = source[index]!;
    if (pairs[char]) stack.push(pairs[char]);
    else if (char === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return { stop: index + 1 };
    }
    return index + 1;
  });
}

function oneLine(source: string, from: number, to: number): string {
  return source.slice(from, to).replace(/\s+/g, ' ').slice(0, 120);
}
