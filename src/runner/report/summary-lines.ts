import { visibleLines } from './text.js';
import type { TestCounts } from './types.js';

type CountField = Exclude<keyof TestCounts, 'total'>;

/** A runner's final result report: which lines belong to it and how they read as counts. */
interface ResultFormat {
  line: RegExp;
  /** The subset of `line` worth showing in a summary, when not all of it is. */
  summaryLine?: RegExp;
  /** Counts from this format's lines (in output order), or null when they hold no counts. */
  counts(lines: string[]): TestCounts | null;
}

const PYTEST_FINAL = /^=*\s*(?:no tests ran|\d+ \w+(?:, \d+ \w+)*) in \d+(?:\.\d+)?s\b/;
// node's counters (spec `ℹ`, TAP `#`); tape prints the TAP ones padded (`# pass  1`).
const NODE_LINE = /^(?:ℹ|#) (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) +(\d+)/;
const VITEST_LINE = /^\s*(?:Test Files {2,}\S.*|Tests {2,}\S.*|No test files found\b.*)$/;
const VITEST_TESTS = /^\s*(?:Tests {2,}|No test files found)/;
const JEST_LINE = /^(?:Test Suites:\s+.*\d+ total|Tests:\s+.*\d+ total|No tests found\b.*)$/;
const JEST_TESTS = /^(?:Tests:|No tests found)/;
const CARGO_LINE = /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;/;
// Package result lines (`ok  pkg 0.01s`, `FAIL pkg [build failed]`, `?  pkg [no test files]`); TAP's
// `ok 1 - name` does not match (no duration or bracket after the name).
const GO_PACKAGE_LINE = /^(?:ok|FAIL|\?)\s+\S+\s+(?:\d+(?:\.\d+)?s|\(cached\)|\[[^\]]+\])/;
// With `-v`, per-test verdicts too.
const GO_LINE = new RegExp(`^(?:=== RUN |--- (?:PASS|FAIL|SKIP): )|${GO_PACKAGE_LINE.source}`);

// uvu: `Total:     2`, `Passed:    1`, `Skipped:   0`, one per line.
const UVU_LINE = /^\s*(Total|Passed|Skipped):\s+(\d+)$/;
// ava's default reporter: `3 tests passed`, `2 tests failed`, `1 known failure`, and its ✔ lines.
const AVA_COUNT =
  /^\s*(\d+) (tests? passed|tests? failed|known failures?|tests? skipped|tests? todo|uncaught exceptions?|unhandled rejections?)$/;
const AVA_LINE = new RegExp(`${AVA_COUNT.source}|^\\s*✔ (?!\\[expected fail\\])\\S`);
// unittest: `Ran 3 tests in 0.001s` then `OK`, `OK (skipped=1)` or `FAILED (failures=1, errors=1)`.
const UNITTEST_RAN = /^Ran (\d+) tests? in \d/;
const UNITTEST_LINE = /^Ran \d+ tests? in \d|^(?:OK|FAILED)(?: \(([\w ,=]+)\))?$/;
// mocha's spec reporter: `2 passing (5ms)`, `1 failing`, `1 pending`.
const MOCHA_LINE = /^\s*(\d+) (passing|failing|pending)(?: \(\d+(?:\.\d+)?m?s\))?$/;
// The plain form many small runners print: `5 passed, 1 failed` (optionally `, 2 skipped (12ms)`).
const PLAIN_LINE =
  /^\s*\d+ (?:passed|failed)(?:, \d+ (?:passed|failed|skipped|pending|todo|errors?))*(?: \(\d+(?:\.\d+)?m?s\)| in \d+(?:\.\d+)?m?s)?$/;
// node-tap's closing comment: `# { total: 2, pass: 1, fail: 1 }`.
const NODE_TAP_LINE = /^# \{ total: \d+(?:, \w+: \d+)* \}$/;

const FORMATS: readonly ResultFormat[] = [
  { line: PYTEST_FINAL, counts: (lines) => pytestCounts(lines[lines.length - 1] ?? '') },
  { line: NODE_LINE, counts: nodeCounts },
  { line: VITEST_LINE, counts: (lines) => lastMatching(lines, VITEST_TESTS, vitestCounts) },
  { line: JEST_LINE, counts: (lines) => lastMatching(lines, JEST_TESTS, jestCounts) },
  { line: CARGO_LINE, counts: cargoCounts },
  { line: GO_LINE, summaryLine: GO_PACKAGE_LINE, counts: goCounts },
  { line: UVU_LINE, counts: uvuCounts },
  { line: NODE_TAP_LINE, counts: (lines) => nodeTapCounts(lines[lines.length - 1] ?? '') },
  { line: AVA_LINE, summaryLine: AVA_COUNT, counts: avaCounts },
  { line: UNITTEST_LINE, counts: unittestCounts },
  { line: MOCHA_LINE, counts: mochaCounts },
  { line: PLAIN_LINE, counts: (lines) => plainCounts(lines[lines.length - 1] ?? '') },
];

/**
 * Test counts read from a runner's final result lines, for runs without a machine-readable report.
 * When several formats appear (a runner printing another tool's output), the one whose result
 * lines come last wins. Null when no known result line is present.
 */
export function countsFromSummaryLines(output: string): TestCounts | null {
  const lines = visibleLines(output);
  let best: { lastIndex: number; counts: TestCounts } | null = null;
  for (const format of FORMATS) {
    const matching: string[] = [];
    let lastIndex = -1;
    lines.forEach((line, index) => {
      if (format.line.test(line.trimEnd())) {
        matching.push(line.trimEnd());
        lastIndex = index;
      }
    });
    if (lastIndex <= (best?.lastIndex ?? -1)) continue;
    const counts = format.counts(matching);
    if (counts) best = { lastIndex, counts };
  }
  return best?.counts ?? null;
}

/** True for a line of any known runner's final result report (used to keep them in summaries). */
export function isResultLine(line: string): boolean {
  return FORMATS.some((format) => (format.summaryLine ?? format.line).test(line.trimEnd()));
}

/** Counts from the last line matching `pattern` (the per-test line, not the per-file one). */
function lastMatching(
  lines: string[],
  pattern: RegExp,
  read: (line: string) => TestCounts,
): TestCounts | null {
  const line = lines.findLast((candidate) => pattern.test(candidate));
  return line === undefined ? null : read(line);
}

function emptyCounts(): TestCounts {
  return { total: 0, passed: 0, failed: 0, errors: 0, skipped: 0 };
}

/** Adds `count` to a field (unknown labels are ignored) and keeps `total` the sum of the fields. */
function add(counts: TestCounts, field: CountField | undefined, count: number): void {
  if (!field) return;
  counts[field] += count;
  counts.total += count;
}

/** `label count` or `count label` pairs named by `labels`. */
function countLabelled(text: string, pair: RegExp, labels: Record<string, CountField>): TestCounts {
  const counts = emptyCounts();
  for (const match of text.matchAll(pair)) {
    const [, count = '0', label = ''] = match;
    add(counts, labels[label], Number(count));
  }
  return counts;
}

const PYTEST_LABELS: Record<string, CountField> = {
  passed: 'passed',
  xpassed: 'passed',
  failed: 'failed',
  error: 'errors',
  errors: 'errors',
  skipped: 'skipped',
  xfailed: 'skipped',
};

function pytestCounts(line: string): TestCounts {
  return countLabelled(line.replace(/ in \d+(?:\.\d+)?s\b.*$/, ''), /(\d+) (\w+)/g, PYTEST_LABELS);
}

const NODE_LABELS: Record<string, CountField> = {
  pass: 'passed',
  fail: 'failed',
  cancelled: 'failed',
  skipped: 'skipped',
  todo: 'skipped',
};

function nodeCounts(lines: string[]): TestCounts | null {
  // Only the last report: a watch or multi-run output repeats the block.
  const start = lines.findLastIndex((line) => NODE_LINE.exec(line)?.[1] === 'tests');
  if (start < 0) return null;
  const counts = emptyCounts();
  for (const line of lines.slice(start + 1)) {
    const [, label = '', count = '0'] = NODE_LINE.exec(line) ?? [];
    add(counts, NODE_LABELS[label], Number(count));
  }
  return counts;
}

const VITEST_LABELS: Record<string, CountField> = {
  passed: 'passed',
  failed: 'failed',
  skipped: 'skipped',
  todo: 'skipped',
};

function vitestCounts(line: string): TestCounts {
  return countLabelled(line.replace(/\(\d+\)\s*$/, ''), /(\d+) (\w+)/g, VITEST_LABELS);
}

const JEST_LABELS: Record<string, CountField> = {
  passed: 'passed',
  failed: 'failed',
  skipped: 'skipped',
  todo: 'skipped',
};

function jestCounts(line: string): TestCounts {
  return countLabelled(line, /(\d+) (\w+)/g, JEST_LABELS);
}

function cargoCounts(lines: string[]): TestCounts {
  const counts = emptyCounts();
  for (const line of lines) {
    const [, passed = '0', failed = '0', ignored = '0'] = CARGO_LINE.exec(line) ?? [];
    add(counts, 'passed', Number(passed));
    add(counts, 'failed', Number(failed));
    add(counts, 'skipped', Number(ignored));
  }
  return counts;
}

const GO_VERDICTS: Record<string, CountField> = {
  PASS: 'passed',
  ok: 'passed',
  FAIL: 'failed',
  SKIP: 'skipped',
};

/** Per test with `-v`; without it go reports only per package, so packages are the unit. */
function goCounts(lines: string[]): TestCounts {
  const counts = emptyCounts();
  const verbose = lines.some((line) => line.startsWith('=== RUN '));
  for (const line of lines) {
    if (verbose) {
      add(counts, GO_VERDICTS[/^--- (PASS|FAIL|SKIP): /.exec(line)?.[1] ?? ''], 1);
    } else {
      const [, verdict = '', rest = ''] = /^(ok|FAIL)\s+\S+\s+(.*)$/.exec(line) ?? [];
      if (!/\[no test/.test(rest)) add(counts, GO_VERDICTS[verdict], 1);
    }
  }
  return counts;
}

/** The last `Total:` block; failed is what the total leaves after passed and skipped. */
function uvuCounts(lines: string[]): TestCounts | null {
  const start = lines.findLastIndex((line) => UVU_LINE.exec(line)?.[1] === 'Total');
  if (start < 0) return null;
  const read: Record<string, number> = {};
  for (const line of lines.slice(start)) {
    const [, label = '', count = '0'] = UVU_LINE.exec(line) ?? [];
    read[label] ??= Number(count);
  }
  const total = read.Total ?? 0;
  const passed = read.Passed ?? 0;
  const skipped = read.Skipped ?? 0;
  return { total, passed, failed: Math.max(0, total - passed - skipped), errors: 0, skipped };
}

const AVA_LABELS: Record<string, CountField> = {
  passed: 'passed',
  failed: 'failed',
  known: 'skipped',
  skipped: 'skipped',
  todo: 'skipped',
  uncaught: 'errors',
  unhandled: 'errors',
};

/** ava prints `N tests passed` only when none failed; otherwise its ✔ lines are the passes. */
function avaCounts(lines: string[]): TestCounts | null {
  const totals = lines.filter((line) => AVA_COUNT.test(line));
  if (totals.length === 0) return null;
  const counts = emptyCounts();
  for (const line of totals) {
    const [, count = '0', label = ''] = AVA_COUNT.exec(line) ?? [];
    const word = /passed|failed|skipped|todo/.exec(label)?.[0] ?? label.split(' ')[0]!;
    add(counts, AVA_LABELS[word], Number(count));
  }
  if (counts.passed === 0) add(counts, 'passed', lines.length - totals.length);
  return counts;
}

const UNITTEST_LABELS: Record<string, CountField> = {
  failures: 'failed',
  errors: 'errors',
  skipped: 'skipped',
  'expected failures': 'skipped',
};

/** `Ran N tests`, less what the `FAILED (…)`/`OK (…)` line after it counts, passed. */
function unittestCounts(lines: string[]): TestCounts | null {
  const start = lines.findLastIndex((line) => UNITTEST_RAN.test(line));
  if (start < 0) return null;
  const total = Number(UNITTEST_RAN.exec(lines[start]!)![1]);
  const verdict = lines.slice(start + 1).find((line) => /^(?:OK|FAILED)\b/.test(line)) ?? '';
  const counts = emptyCounts();
  for (const [, label = '', count = '0'] of verdict.matchAll(/([\w ]+)=(\d+)/g))
    add(counts, UNITTEST_LABELS[label.trim()], Number(count));
  add(counts, 'passed', Math.max(0, total - counts.total));
  return counts;
}

const MOCHA_LINE_PAIRS = /(\d+) (passing|failing|pending)/g;
const MOCHA_LABELS: Record<string, CountField> = {
  passing: 'passed',
  failing: 'failed',
  pending: 'skipped',
};

/** The last `N passing` line and the `failing`/`pending` lines after it. */
function mochaCounts(lines: string[]): TestCounts | null {
  const start = lines.findLastIndex((line) => MOCHA_LINE.exec(line)?.[2] === 'passing');
  return countLabelled(lines.slice(Math.max(0, start)).join('\n'), MOCHA_LINE_PAIRS, MOCHA_LABELS);
}

const PLAIN_LABELS: Record<string, CountField> = {
  passed: 'passed',
  failed: 'failed',
  skipped: 'skipped',
  pending: 'skipped',
  todo: 'skipped',
  error: 'errors',
  errors: 'errors',
};

function plainCounts(line: string): TestCounts {
  return countLabelled(line, /(\d+) (\w+)/g, PLAIN_LABELS);
}

const NODE_TAP_LABELS: Record<string, CountField> = {
  pass: 'passed',
  fail: 'failed',
  skip: 'skipped',
  todo: 'skipped',
};

function nodeTapCounts(line: string): TestCounts {
  // `label: count` turned into the `count label` pairs countLabelled reads.
  return countLabelled(line.replace(/(\w+): (\d+)/g, '$2 $1'), /(\d+) (\w+)/g, NODE_TAP_LABELS);
}
