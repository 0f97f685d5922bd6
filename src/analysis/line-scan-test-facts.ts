import type {
  MarkerOccurrence,
  ModuleStub,
  TestCase,
  TestFileFacts,
} from '../integrity/integrity.js';
import { stripComment, withoutStrings } from './source-text.js';

/**
 * Test facts from a line-by-line scan: the parser for Go and Rust, and the fallback for Python when
 * python3 is missing or the file does not parse. Less exact than a parser, but it still sees markers in
 * a file with a syntax error.
 */
export function scanTestFactsByLine(
  filePath: string,
  text: string,
  fallbackReason?: string,
): TestFileFacts {
  const rules = filePath.endsWith('.py') ? PYTHON : filePath.endsWith('.go') ? GO : RUST;
  const lines = text.split(/\r?\n/).map((line) => stripComment(line, rules.commentMarker));
  const spans = rules.findTests(lines);
  const ownerOf = (index: number) =>
    spans.find((span) => index >= span.head && index <= span.end)?.name;
  const skips: MarkerOccurrence[] = [];
  const moduleStubs: ModuleStub[] = [];
  lines.forEach((line, index) => {
    const test = ownerOf(index);
    for (const [pattern, marker] of rules.skips) {
      for (const match of line.matchAll(pattern))
        skips.push(withTest({ line: index + 1, marker: marker(match) }, test));
    }
    for (const { module, via } of rules.stubs(line))
      moduleStubs.push(withTest({ line: index + 1, module, via }, test));
  });
  const tests: TestCase[] = spans.map((span) => ({
    name: span.name,
    line: span.line + 1,
    assertions: lines
      .slice(span.head, span.end + 1)
      .reduce((sum, line) => sum + countMatches(line, rules.assertions), 0),
  }));
  const facts: TestFileFacts = {
    tests,
    skips,
    focuses: [],
    module_stubs: moduleStubs,
    parser: 'line_scan',
  };
  if (fallbackReason !== undefined) facts.fallback_reason = fallbackReason;
  return facts;
}

interface TestSpan {
  name: string;
  /** 0-based line of the `def`/`func`/`fn`. */
  line: number;
  /** First decorator/attribute line above it, so markers written there belong to the test. */
  head: number;
  /** Last line of its body. */
  end: number;
}

interface LineScanRules {
  commentMarker: string;
  findTests(lines: string[]): TestSpan[];
  skips: [RegExp, (match: RegExpMatchArray) => string][];
  assertions: RegExp[];
  stubs(line: string): { module: string; via: string }[];
}

function withTest<T extends object>(
  occurrence: T,
  test: string | undefined,
): T & { test?: string } {
  return test === undefined ? occurrence : { ...occurrence, test };
}

function countMatches(line: string, patterns: RegExp[]): number {
  return patterns.reduce((sum, pattern) => sum + [...line.matchAll(pattern)].length, 0);
}

const indentOf = (line: string) => line.length - line.trimStart().length;

/** Decorator/attribute lines directly above `index` belong to the definition there. */
function headOf(lines: string[], index: number, attribute: RegExp): number {
  let head = index;
  while (head > 0 && attribute.test(lines[head - 1] ?? '')) head -= 1;
  return head;
}

function braceBlockEnd(lines: string[], start: number): number {
  let depth = 0;
  let opened = false;
  for (let index = start; index < lines.length; index += 1) {
    for (const char of withoutStrings(lines[index] ?? '')) {
      if (char === '{') [depth, opened] = [depth + 1, true];
      else if (char === '}') depth -= 1;
    }
    if (opened && depth <= 0) return index;
  }
  return lines.length - 1;
}

const PYTHON_DECORATOR = /^\s*@/;

function marker(name: string): (match: RegExpMatchArray) => string {
  return () => name;
}

const PYTHON: LineScanRules = {
  commentMarker: '#',
  findTests(lines) {
    const spans: TestSpan[] = [];
    let currentClass: string | undefined;
    let classBodyIndent: number | undefined;
    lines.forEach((line, index) => {
      if (line.trim() === '') return;
      const indent = indentOf(line);
      if (indent === 0) {
        currentClass =
          /^class\s+(\w+)/.exec(line)?.[1] ??
          (PYTHON_DECORATOR.test(line) ? currentClass : undefined);
        classBodyIndent = undefined;
      } else if (currentClass !== undefined && classBodyIndent === undefined) {
        classBodyIndent = indent;
      }
      const name = /^\s*(?:async\s+)?def\s+(test\w*)\s*\(/.exec(line)?.[1];
      // Tests are module-level functions and methods of module-level classes; deeper defs are helpers.
      const inClass = indent > 0 && indent === classBodyIndent;
      if (name === undefined || (indent > 0 && !inClass)) return;
      let end = index;
      for (let next = index + 1; next < lines.length; next += 1) {
        const candidate = lines[next] ?? '';
        if (candidate.trim() === '') continue;
        if (indentOf(candidate) <= indent) break;
        end = next;
      }
      spans.push({
        name: inClass ? `${currentClass}.${name}` : name,
        line: index,
        head: headOf(lines, index, PYTHON_DECORATOR),
        end,
      });
    });
    return spans;
  },
  skips: [
    [/\bmark\.skip\b/g, marker('pytest.mark.skip')],
    [/\bmark\.skipif\b/g, marker('pytest.mark.skipif')],
    [/\bmark\.xfail\b/g, marker('pytest.mark.xfail')],
    [/\bpytest\.skip\b/g, marker('pytest.skip')],
    [/\bpytest\.xfail\b/g, marker('pytest.xfail')],
    [/\bpytest\.importorskip\b/g, marker('pytest.importorskip')],
    [/\bunittest\.skip\b/g, marker('unittest.skip')],
    [/^\s*@skip\b/g, marker('unittest.skip')],
    [/\b(skipIf|skipUnless|expectedFailure|SkipTest)\b/g, (match) => `unittest.${match[1]}`],
    [/\.skipTest\b/g, marker('skipTest')],
  ],
  assertions: [
    /^\s*assert\b/g,
    /\bassert[A-Z_]\w*\s*\(/g,
    /\bpytest\.(?:raises|warns|approx)\s*\(/g,
  ],
  stubs(line) {
    const stubs: { module: string; via: string }[] = [];
    for (const match of line.matchAll(/\bsys\.modules\[\s*(["'])([^"']+)\1\s*\]\s*=(?!=)/g)) {
      stubs.push({ module: match[2] ?? '', via: 'sys.modules[...]' });
    }
    for (const match of line.matchAll(
      /([\w.]*\.setitem)\(\s*sys\.modules\s*,\s*(["'])([^"']+)\2/g,
    )) {
      stubs.push({ module: match[3] ?? '', via: match[1] ?? 'setitem' });
    }
    for (const match of line.matchAll(/\bsys\.modules\.setdefault\(\s*(["'])([^"']+)\1/g)) {
      stubs.push({ module: match[2] ?? '', via: 'sys.modules.setdefault' });
    }
    const bulk = /\bsys\.modules\.update\(|([\w.]*patch\.dict)\(\s*["']?sys\.modules/.exec(line);
    if (bulk) {
      const via = bulk[1] ? `${bulk[1]}(sys.modules)` : 'sys.modules.update';
      const keys = [...line.matchAll(/(["'])([\w.]+)\1\s*:/g)].map((match) => match[2] ?? '');
      for (const module of keys.length > 0 ? keys : ['<dynamic>']) stubs.push({ module, via });
    }
    return stubs;
  },
};

const GO: LineScanRules = {
  commentMarker: '//',
  findTests(lines) {
    return lines.flatMap((line, index) => {
      const name = /^func\s+(Test\w*)\s*\(/.exec(line)?.[1];
      return name ? [{ name, line: index, head: index, end: braceBlockEnd(lines, index) }] : [];
    });
  },
  skips: [[/\b(\w+)\.(Skip|Skipf|SkipNow)\s*\(/g, (match) => `${match[1]}.${match[2]}`]],
  assertions: [
    /\b\w+\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(/g,
    /\b(?:assert|require)\.\w+\s*\(/g,
    /\bExpect\s*\(/g,
  ],
  stubs: () => [],
};

const RUST_ATTRIBUTE = /^\s*#\[/;

const RUST: LineScanRules = {
  commentMarker: '//',
  findTests(lines) {
    return lines.flatMap((line, index) => {
      const name = /^\s*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)/.exec(line)?.[1];
      if (!name) return [];
      const head = headOf(lines, index, RUST_ATTRIBUTE);
      const isTest = lines
        .slice(head, index)
        .some((attribute) => /#\[\s*(?:[\w:]+::)?(?:rs)?test\b/.test(attribute));
      return isTest ? [{ name, line: index, head, end: braceBlockEnd(lines, index) }] : [];
    });
  },
  skips: [[/#\[\s*ignore\b/g, marker('#[ignore]')]],
  assertions: [/\b\w*assert\w*!/g, /#\[\s*should_panic\b/g],
  stubs: () => [],
};
