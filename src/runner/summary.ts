import { blockLineTiers, ERROR_STATEMENT, firstErrorBlock } from './report/error-block.js';
import { failingTestNames } from './report/failing-names.js';
import { isResultLine } from './report/summary-lines.js';
import { visibleLines } from './report/text.js';
import type { TestCaseResult } from './report/types.js';

const SUMMARY_LIMIT = 1500;

/** Between the error block and the final result lines. */
export const RESULT_SEPARATOR = '\n----- final result -----\n';

const GAP = '…';
/** Lines of this tier (library and runtime frames) are left out whenever a block must be shortened. */
const OMITTED_TIER = 3;
const MAX_LINE_LENGTH = 240;
/** The share of the limit the result lines may always use, however long the error block is. */
const RESULT_SHARE = 0.4;
/** Enough for node's block of eight counters or a few go packages and cargo binaries. */
const MAX_RESULT_LINES = 12;
const PYTEST_SHORT_SUMMARY = /^=+ short test summary info =+$/;

/**
 * A summary of a test run for the Player: the FIRST error block with its context (what failed,
 * where, the diff), then the runner's final result lines. At most `limit` characters, error first.
 * When a block is too long, the lines stating the error, its location and the diff are kept before
 * source context and library frames, and omitted runs are marked with `…`.
 */
export function summarizeOutput(output: string, limit = SUMMARY_LIMIT): string {
  const lines = visibleLines(output);
  const result = finalResultLines(lines);
  const early = firstErrorBlock(lines, result?.start ?? lines.length);
  // Node 22+ and mocha print only the test's name before their counters; the error follows them.
  // A wrapper forwarding stdout and stderr through separate pipes (run-s, concurrently) can deliver
  // vitest's failures (stderr) after its counters (stdout): the error block is then looked for there.
  const block = early?.some((line) => ERROR_STATEMENT.test(line))
    ? early
    : (failuresAfterCountersBlock(lines) ??
      early ??
      (result ? firstErrorBlock(lines.slice(result.start)) : null));

  if (!block && !result) return lastLinesWithin(lines, limit);
  const errorLines = block ? trimBlankEdges(block).map(clipLine) : [];
  // The result lines get what a short error block leaves, and at least their share of the limit.
  const errorLength = block ? errorLines.join('\n').length + RESULT_SEPARATOR.length : 0;
  const resultBudget = Math.max(Math.floor(limit * RESULT_SHARE), limit - errorLength);
  const resultText = result ? fitLines(result.lines, resultBudget, result.tiers) : '';
  if (!block) return resultText;
  const errorBudget = limit - (resultText ? resultText.length + RESULT_SEPARATOR.length : 0);
  const errorText = fitLines(errorLines, errorBudget, blockLineTiers(errorLines));
  return resultText ? `${errorText}${RESULT_SEPARATOR}${resultText}` : errorText;
}

/**
 * Sections listing each failure with its error after the counters: Node 22+'s spec reporter
 * (`✖ failing tests:`) and mocha's (`N failing`, then `1) suite` / `test:` and the error).
 */
const FAILURES_AFTER_COUNTERS = /^(?:✖ failing tests:|\d+ failing)$/;

function failuresAfterCountersBlock(lines: readonly string[]): string[] | null {
  const section = lines.findIndex((line) => FAILURES_AFTER_COUNTERS.test(line.trim()));
  return section < 0 ? null : firstErrorBlock(lines.slice(section + 1));
}

/** At most this much of the summary names the failing tests of a run without per-test results. */
const NAMES_LIMIT = 500;

/**
 * The summary, led by the first failing test of the report when the output does not show it (mocha's
 * xunit reporter prints nothing; a runner may print only counts): its id and its message. Without a
 * report, it is led by every failing test the runner named (uvu's `FAIL "name"`, ava's `✘ [fail]:`,
 * unittest's `FAIL: test (id)`) unless the first error block is the only failure.
 */
export function summaryWithFirstFailure(
  output: string,
  tests: readonly TestCaseResult[],
  limit = SUMMARY_LIMIT,
): string {
  const failing = tests.find((test) => test.status === 'failed' || test.status === 'error');
  const summary = summarizeOutput(output, limit);
  if (tests.length === 0) return withFailingNames(summary, output, limit);
  const name = failing?.id.split(/ > |::|\.|\//).pop() ?? '';
  if (!failing || summary.includes(name)) return summary;
  const lead = `✖ ${failing.id}\n${failing.message ?? ''}`.trim();
  return `${lead}\n${summarizeOutput(output, Math.max(0, limit - lead.length - 1))}`
    .slice(0, limit)
    .trim();
}

function withFailingNames(summary: string, output: string, limit: number): string {
  const names = failingTestNames(output);
  // One failing test is named by its own error block; several are listed, the first block kept.
  if (names.length === 0 || (names.length === 1 && summary.includes(names[0]!))) return summary;
  const listed = `Failing tests (${names.length}): ${names.join('; ')}`;
  const lead = listed.length <= NAMES_LIMIT ? listed : `${listed.slice(0, NAMES_LIMIT - 1)}${GAP}`;
  return `${lead}\n${summarizeOutput(output, Math.max(0, limit - lead.length - 1))}`.trim();
}

interface ResultLines {
  /** Where the result part begins; the error block is searched before it. */
  start: number;
  lines: string[];
  /** The counting lines (0) are kept before pytest's one line per failed test (1). */
  tiers: number[];
}

/**
 * The runner's last result lines, preceded for pytest by its short test summary info (one line per
 * failed test). The counting lines themselves are kept before the per-test lines.
 */
function finalResultLines(lines: readonly string[]): ResultLines | null {
  const resultIndices: number[] = [];
  lines.forEach((line, index) => {
    if (isResultLine(line)) resultIndices.push(index);
  });
  const kept = resultIndices.slice(-MAX_RESULT_LINES);
  const firstKept = kept[0] ?? lines.length;
  const shortSummary = lastIndexBefore(lines, PYTEST_SHORT_SUMMARY, firstKept);
  if (kept.length === 0 && shortSummary < 0) return null;

  const start = shortSummary >= 0 ? shortSummary : firstKept;
  const perTestLines =
    shortSummary >= 0
      ? lines.slice(shortSummary, firstKept).filter((line) => line.trim() !== '')
      : [];
  const resultLines = kept.map((index) => lines[index] ?? '');
  return {
    start,
    lines: [...perTestLines, ...resultLines],
    tiers: [...perTestLines.map(() => 1), ...resultLines.map(() => 0)],
  };
}

function lastIndexBefore(lines: readonly string[], pattern: RegExp, end: number): number {
  for (let index = end - 1; index >= 0; index -= 1) {
    if (pattern.test(lines[index] ?? '')) return index;
  }
  return -1;
}

function trimBlankEdges(block: string[]): string[] {
  let start = 0;
  let end = block.length;
  while (start < end && (block[start] ?? '').trim() === '') start += 1;
  while (end > start && (block[end - 1] ?? '').trim() === '') end -= 1;
  return block.slice(start, end);
}

function clipLine(line: string): string {
  return line.length <= MAX_LINE_LENGTH ? line : `${line.slice(0, MAX_LINE_LENGTH - 1)}${GAP}`;
}

/**
 * `lines` joined, or when that exceeds `budget`, the lines that fit chosen tier by tier (lowest
 * tier first, in order within a tier; never OMITTED_TIER), shown in their original order with `…`
 * for omitted runs.
 */
function fitLines(lines: readonly string[], budget: number, tiers: readonly number[]): string {
  const clipped = lines.map(clipLine);
  const whole = clipped.join('\n');
  if (whole.length <= budget) return whole;

  const selected = new Set<number>();
  // Each kept line may be preceded by a gap marker, and one may close the text.
  let used = GAP.length + 1;
  for (const tier of [...new Set(tiers)]
    .filter((tier) => tier < OMITTED_TIER)
    .sort((a, b) => a - b)) {
    clipped.forEach((line, index) => {
      const cost = line.length + 1 + GAP.length + 1;
      if (tiers[index] === tier && used + cost <= budget) {
        selected.add(index);
        used += cost;
      }
    });
  }
  const shown: string[] = [];
  clipped.forEach((line, index) => {
    if (selected.has(index)) shown.push(line);
    else if (shown[shown.length - 1] !== GAP) shown.push(GAP);
  });
  return shown.join('\n').slice(0, budget);
}

/** Without a recognised error or result line, the end of the output is the best guess. */
function lastLinesWithin(lines: readonly string[], limit: number): string {
  const shown: string[] = [];
  let used = 0;
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = clipLine(lines[index] ?? '');
    if (used + line.length + 1 > limit) break;
    shown.unshift(line);
    used += line.length + 1;
  }
  return trimBlankEdges(shown).join('\n');
}
