import { describe, expect, it } from 'vitest';
import { decideStatus, type RunFacts } from '../../src/runner/outcome.js';
import type { TestCounts } from '../../src/runner/report/types.js';
import { runInProject } from './report-real-runs.js';

const counts = (passed: number, failed = 0, errors = 0, skipped = 0): TestCounts => ({
  total: passed + failed + errors + skipped,
  passed,
  failed,
  errors,
  skipped,
});

const facts = (overrides: Partial<RunFacts>): RunFacts => ({
  exit_code: 0,
  signal: null,
  timed_out: false,
  counts: counts(3),
  output: '',
  ...overrides,
});

// Real runs reach decideStatus in the report-*.test.ts files; these are the rule's corners.
describe('decideStatus', () => {
  it('passes only with exit 0, at least one passed test and no failure or error', () => {
    expect(decideStatus(facts({}))).toBe('passed');
    expect(decideStatus(facts({ counts: counts(3, 0, 0, 2) }))).toBe('passed');
  });

  it('never passes without positive evidence: no counts, zero tests or only skipped tests', () => {
    expect(decideStatus(facts({ counts: null }))).toBe('no_tests');
    expect(decideStatus(facts({ counts: counts(0) }))).toBe('no_tests');
    expect(decideStatus(facts({ counts: counts(0, 0, 0, 4) }))).toBe('no_tests');
  });

  it('reads zero tests as no_tests whatever the exit code when the runner says so', () => {
    expect(
      decideStatus(
        facts({ exit_code: 5, counts: counts(0), output: '=== no tests ran in 0.01s ===' }),
      ),
    ).toBe('no_tests');
    expect(decideStatus(facts({ exit_code: 5, counts: null }))).toBe('no_tests');
    expect(
      decideStatus(
        facts({
          exit_code: 1,
          counts: null,
          output: '\u001b[31mNo test files found, exiting with code 1\u001b[39m',
        }),
      ),
    ).toBe('no_tests');
    expect(
      decideStatus(facts({ exit_code: 0, counts: counts(0), output: 'ℹ tests 0\nℹ pass 0' })),
    ).toBe('no_tests');
  });

  it('a timeout wins over everything, a signal is an error even with passing counts', () => {
    expect(decideStatus(facts({ timed_out: true, exit_code: null, signal: 'SIGTERM' }))).toBe(
      'timeout',
    );
    expect(decideStatus(facts({ exit_code: null, signal: 'SIGKILL' }))).toBe('error');
  });

  it('no result at all with a failing exit is an error (crash, collection error, setup errors only)', () => {
    expect(decideStatus(facts({ exit_code: 2, counts: null }))).toBe('error');
    expect(decideStatus(facts({ exit_code: 2, counts: counts(0, 0, 2) }))).toBe('error');
    expect(decideStatus(facts({ exit_code: 1, counts: counts(0) }))).toBe('error');
  });

  it('tests that ran with a failure, or a failing exit despite passing counts, are failed', () => {
    expect(decideStatus(facts({ exit_code: 1, counts: counts(2, 1) }))).toBe('failed');
    expect(decideStatus(facts({ exit_code: 1, counts: counts(2, 0, 1) }))).toBe('failed');
    // A file that failed to load is not in vitest's Tests count; a coverage threshold fails the exit.
    expect(decideStatus(facts({ exit_code: 1, counts: counts(4) }))).toBe('failed');
    expect(decideStatus(facts({ exit_code: 0, counts: counts(2, 1) }))).toBe('failed');
  });

  it('a real process killed by SIGKILL after printing a passing result line is an error', () => {
    const run = runInProject({}, () => [
      'python3',
      '-c',
      'import os, signal, sys; print("==== 3 passed in 0.01s ===="); sys.stdout.flush(); os.kill(os.getpid(), signal.SIGKILL)',
    ]);
    expect(run).toMatchObject({ exit_code: null, signal: 'SIGKILL' });
    expect(decideStatus({ ...run, timed_out: false, counts: counts(3) })).toBe('error');
  });
});
