import { stripAnsi } from './report/text.js';
import type { RunStatus, TestCounts } from './report/types.js';

export interface RunFacts {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  /** Counts from the report or the result lines; null when neither could be read. */
  counts: TestCounts | null;
  output: string;
}

/** pytest exits 5 when it collected nothing. */
const PYTEST_NO_TESTS_EXIT = 5;

// pytest, node's test runner (spec and TAP), vitest, jest.
const NO_TESTS_MARKERS = /no tests ran|^(?:ℹ|#) tests 0$|No test files found|No tests found/m;

/** A runner's own words that it found nothing to run. */
export function saysNoTests(output: string): boolean {
  return NO_TESTS_MARKERS.test(stripAnsi(output));
}

/**
 * The status of a finished run. A pass needs positive evidence: exit 0 AND at least one passed test
 * AND no failure or error. Silence, an unreadable report or zero tests are never a pass.
 */
export function decideStatus(facts: RunFacts): RunStatus {
  const { exit_code: exitCode, counts } = facts;
  if (facts.timed_out) return 'timeout';
  if (facts.signal !== null) return 'error';

  const total = counts?.total ?? 0;
  const failures = (counts?.failed ?? 0) + (counts?.errors ?? 0);
  const ran = (counts?.passed ?? 0) + (counts?.failed ?? 0);
  if (
    total === 0 &&
    (exitCode === 0 || exitCode === PYTEST_NO_TESTS_EXIT || saysNoTests(facts.output))
  ) {
    return 'no_tests';
  }
  if (exitCode === 0 && (counts?.passed ?? 0) >= 1 && failures === 0) return 'passed';
  if (exitCode === 0 && failures === 0) return 'no_tests'; // only skipped tests
  // Nothing ran to a verdict: a crash, a collection error, setup errors everywhere, no results.
  if (ran === 0) return 'error';
  return 'failed';
}
