import { visibleLines } from './text.js';
import { uvuFailureName } from './uvu.js';

/** Lines on which a runner names a failing test, each capturing the name as printed. */
const FAILING_TEST_LINES: readonly RegExp[] = [
  // ava's default reporter: `✘ [fail]: name`.
  /^\s*✘ \[fail\]: (.+?)\s*$/,
  // TAP: `not ok 2 - name`, without a `# TODO`/`# time=` directive.
  /^\s*not ok \d+ (?:- )?(.+?)(?:\s+#\s.*)?$/,
  // unittest: `FAIL: test_b (pkg.module.Class.test_b)`, `ERROR: …`.
  /^(?:FAIL|ERROR): (\S+ \([\w.]+\))\s*$/,
  // vitest and jest: `FAIL  file > name`.
  /^\s*FAIL {1,2}(\S.*?)\s*$/,
  // pytest's short summary: `FAILED tests/x.py::test - message`.
  /^FAILED (\S+::\S+)/,
  // node's spec reporter: `✖ name (1.2ms)`.
  /^\s*✖ (.+?) \(\d+(?:\.\d+)?m?s\)\s*$/,
  // go: `--- FAIL: TestName (0.00s)`.
  /^\s*--- FAIL: (\S+)/,
];

/** TAP points that close a node-tap file or a node suite repeat their children's failures. */
const NOT_A_TEST = /^(?:Subtest|tests \d|\d+ subtests? failed)/;

/**
 * mocha's spec reporter numbers each failing test in its tree (`    1) breaks`) before its
 * `N passing` counter; after it, `1) suite` heads the failure's details.
 */
const MOCHA_FAILING_TEST = /^\s+\d+\) (.+?)\s*$/;
const MOCHA_COUNTER = /^\s*\d+ passing \(/;

/** Every failing test the output names, in order, once each (for runs without a per-test report). */
export function failingTestNames(output: string): string[] {
  const names = new Set<string>();
  const lines = visibleLines(output);
  const mochaCounter = lines.findIndex((line) => MOCHA_COUNTER.test(line));
  for (const [index, line] of lines.entries()) {
    const mochaName = index < mochaCounter ? MOCHA_FAILING_TEST.exec(line)?.[1] : undefined;
    const named = mochaName ?? uvuFailureName(line);
    if (named) {
      names.add(named);
      continue;
    }
    for (const pattern of FAILING_TEST_LINES) {
      const name = pattern.exec(line)?.[1]?.trim();
      if (name && !NOT_A_TEST.test(name)) {
        names.add(name);
        break;
      }
    }
  }
  return [...names];
}
