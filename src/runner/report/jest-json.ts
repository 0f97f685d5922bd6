import path from 'node:path';
import { clipMessage } from './text.js';
import type { TestCaseResult, TestStatus } from './types.js';

interface JestAssertion {
  ancestorTitles?: string[];
  title?: string;
  status?: string;
  failureMessages?: string[];
}

interface JestReport {
  testResults?: Array<{
    name?: string;
    status?: string;
    message?: string;
    assertionResults?: JestAssertion[];
  }>;
}

const STATUS: Record<string, TestStatus> = {
  passed: 'passed',
  failed: 'failed',
  pending: 'skipped',
  skipped: 'skipped',
  todo: 'skipped',
  disabled: 'skipped',
};

/**
 * jest's `--json` report. Ids are `file > describe > test` with the file relative to `rootDirectory`,
 * as jest prints them. A file that failed to load has no assertions: it becomes one error entry.
 */
export function parseJestJson(json: string, rootDirectory: string): TestCaseResult[] {
  const report = JSON.parse(json) as JestReport;
  const results: TestCaseResult[] = [];
  for (const file of report.testResults ?? []) {
    const relative = file.name ? path.relative(rootDirectory, file.name) : '';
    const assertions = file.assertionResults ?? [];
    if (assertions.length === 0 && file.status === 'failed') {
      results.push({
        id: relative,
        status: 'error',
        message: clipMessage(file.message ?? 'test file failed to run'),
      });
    }
    for (const assertion of assertions) {
      const id = [relative, ...(assertion.ancestorTitles ?? []), assertion.title ?? '']
        .filter(Boolean)
        .join(' > ');
      const status = STATUS[assertion.status ?? ''] ?? 'error';
      const failure = assertion.failureMessages?.join('\n');
      results.push(
        failure && status !== 'passed'
          ? { id, status, message: clipMessage(failure) }
          : { id, status },
      );
    }
  }
  return results;
}
