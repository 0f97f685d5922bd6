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
const NODE_LINE = /^(?:ℹ|#) (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) (\d+)/;
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

const FORMATS: readonly ResultFormat[] = [
  { line: PYTEST_FINAL, counts: (lines) => pytestCounts(lines[lines.length - 1] ?? '') },
  { line: NODE_LINE, counts: nodeCounts },
  { line: VITEST_LINE, counts: (lines) => lastMatching(lines, VITEST_TESTS, vitestCounts) },
  { line: JEST_LINE, counts: (lines) => lastMatching(lines, JEST_TESTS, jestCounts) },
  { line: CARGO_LINE, counts: cargoCounts },
  { line: GO_LINE, summaryLine: GO_PACKAGE_LINE, counts: goCounts },
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
