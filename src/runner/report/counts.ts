import type { TestCaseResult, TestCounts, TestStatus } from './types.js';

const COUNT_FIELD: Record<TestStatus, Exclude<keyof TestCounts, 'total'>> = {
  passed: 'passed',
  failed: 'failed',
  error: 'errors',
  skipped: 'skipped',
};

export function countsFromTests(tests: readonly TestCaseResult[]): TestCounts {
  const counts: TestCounts = { total: tests.length, passed: 0, failed: 0, errors: 0, skipped: 0 };
  for (const test of tests) counts[COUNT_FIELD[test.status]] += 1;
  return counts;
}
