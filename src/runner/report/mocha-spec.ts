import { clipMessage, visibleLines } from './text.js';
import { countsFromTests } from './counts.js';
import type { TestCaseResult } from './types.js';

/**
 * mocha's spec reporter, as a user's script chose it: the tree of suites and tests printed
 * before the `N passing` counter, read by indentation. A suite at depth d is indented 2·d spaces;
 * its tests 2·(d+1), as `✔ title (12ms)` (`✓` on older releases and Windows), `1) title` or
 * `- title` (pending).
 */
const PASSED = /^( +)[✔✓] (.+?)(?: \(\d+ms\))?$/;
const FAILED = /^( +)\d+\) (.+)$/;
const PENDING = /^( +)- (.+)$/;
const SUITE = /^( {2,})(\S.*)$/;
const COUNTER = /^\s*(\d+) (passing|pending|failing)\b/;
/** The heading of a failure's details after the counters: `  1) suite`. */
const DETAILS_HEADING = /^ {2}(\d+)\) /;

/**
 * Per-test results from mocha's spec output, with ids as its xunit report gives them (`suite
 * nested > test`: the parents' titles joined by spaces, as mocha's `fullTitle`). Undefined unless
 * the output holds exactly one spec tree whose tests add up to mocha's own counters, so a log that
 * is not (only) mocha's spec never yields a wrong list.
 */
export function parseMochaSpecOutput(output: string): TestCaseResult[] | undefined {
  const lines = visibleLines(output);
  const passing = lines.flatMap((line, index) => (/^\s*\d+ passing \(/.test(line) ? [index] : []));
  if (passing.length !== 1) return undefined;
  const counterAt = passing[0]!;
  const tests = treeTests(lines.slice(0, counterAt));
  if (!tests || !addsUp(tests, counters(lines.slice(counterAt, counterAt + 3)))) return undefined;
  attachMessages(tests, lines.slice(counterAt + 1));
  return tests;
}

/**
 * The tests of the tree, or undefined when a test sits where no suite opened for it: printed
 * output that looks like a suite line (a test's own `console.log`) must not rename what follows.
 */
function treeTests(lines: string[]): TestCaseResult[] | undefined {
  const suites: { indent: number; title: string }[] = [];
  const tests: TestCaseResult[] = [];
  // A line's parent is the open suite two spaces out; the root's children are indented by two.
  const parentsAt = (indent: number) => {
    const open = suites.filter((suite) => suite.indent < indent);
    const parent = open.at(-1)?.indent ?? 0;
    return parent === indent - 2 ? open : undefined;
  };
  for (const line of lines) {
    const test = testLine(line);
    const suite = test ? undefined : SUITE.exec(line.trimEnd());
    const indent = test?.indent ?? suite?.[1]!.length ?? 0;
    const parents = (test || suite) && parentsAt(indent);
    if (test && !parents) return undefined;
    if (!parents) continue; // not a tree line, or output indented where no suite could be
    suites.splice(parents.length);
    if (suite) suites.push({ indent, title: suite[2]! });
    else {
      // As mocha's xunit report: the parents' full title, then the test's own.
      const path = parents.map((open) => open.title).join(' ');
      tests.push({
        id: path === '' ? test!.title : `${path} > ${test!.title}`,
        status: test!.status,
      });
    }
  }
  return tests;
}

function testLine(
  line: string,
): { indent: number; title: string; status: TestCaseResult['status'] } | undefined {
  const text = line.trimEnd();
  for (const [pattern, status] of [
    [PASSED, 'passed'],
    [FAILED, 'failed'],
    [PENDING, 'skipped'],
  ] as const) {
    const match = pattern.exec(text);
    if (match && match[1]!.length >= 2)
      return { indent: match[1]!.length, title: match[2]!, status };
  }
  return undefined;
}

function counters(lines: string[]): Record<'passing' | 'pending' | 'failing', number> {
  const found = { passing: 0, pending: 0, failing: 0 };
  for (const line of lines) {
    const match = COUNTER.exec(line);
    if (match) found[match[2] as keyof typeof found] = Number(match[1]);
  }
  return found;
}

function addsUp(
  tests: TestCaseResult[],
  expected: Record<'passing' | 'pending' | 'failing', number>,
): boolean {
  const counts = countsFromTests(tests);
  return (
    counts.total > 0 &&
    counts.passed === expected.passing &&
    counts.skipped === expected.pending &&
    counts.failed === expected.failing
  );
}

/** Each failing test's message: the lines of its numbered details block after its title's `:`. */
function attachMessages(tests: TestCaseResult[], after: string[]): void {
  const failing = tests.filter((test) => test.status === 'failed');
  const blocks = new Map<number, string[]>();
  let current: string[] | undefined;
  for (const line of after) {
    const heading = DETAILS_HEADING.exec(line);
    if (heading) blocks.set(Number(heading[1]), (current = []));
    current?.push(line);
  }
  failing.forEach((test, index) => {
    const block = blocks.get(index + 1);
    const start = block?.findIndex((line) => line.trimEnd().endsWith(':')) ?? -1;
    const message = block && clipMessage(block.slice(start + 1).join('\n'));
    if (message) test.message = message;
  });
}
