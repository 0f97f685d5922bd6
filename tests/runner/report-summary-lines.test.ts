import { describe, expect, it } from 'vitest';
import { failingTestNames } from '../../src/runner/report/failing-names.js';
import { countsFromSummaryLines } from '../../src/runner/report/summary-lines.js';
import { summarizeOutput } from '../../src/runner/summary.js';
import { runInProject } from './report-real-runs.js';

const counts = (passed: number, failed: number, errors: number, skipped: number) => ({
  total: passed + failed + errors + skipped,
  passed,
  failed,
  errors,
  skipped,
});

describe('countsFromSummaryLines', () => {
  it('reads pytest final lines in their framed, -q and no-tests forms', () => {
    expect(
      countsFromSummaryLines(
        '=============== 1 failed, 2 passed, 1 skipped, 1 error in 0.12s ================\n',
      ),
    ).toEqual(counts(2, 1, 1, 1));
    expect(countsFromSummaryLines('..F\n1 failed, 2 passed in 0.05s\n')).toEqual(
      counts(2, 1, 0, 0),
    );
    expect(
      countsFromSummaryLines(
        '==== 3 passed, 1 xfailed, 1 xpassed, 2 warnings in 65.20s (0:01:05) ====',
      ),
    ).toEqual(counts(4, 0, 0, 1));
    expect(countsFromSummaryLines('===== 4 deselected in 0.01s =====')).toEqual(counts(0, 0, 0, 0));
    expect(
      countsFromSummaryLines(
        '============================ no tests ran in 0.62s =============================',
      ),
    ).toEqual(counts(0, 0, 0, 0));
    expect(
      countsFromSummaryLines(
        '=============================== 2 errors in 0.76s ===============================',
      ),
    ).toEqual(counts(0, 0, 2, 0));
  });

  it("reads node's counters in the spec form (ℹ) and from a real TAP run (#), cancelled as failed and todo as skipped", () => {
    const spec = [
      'ℹ tests 6',
      'ℹ suites 1',
      'ℹ pass 2',
      'ℹ fail 1',
      'ℹ cancelled 1',
      'ℹ skipped 1',
      'ℹ todo 1',
      'ℹ duration_ms 12.5',
    ].join('\n');
    expect(countsFromSummaryLines(spec)).toEqual(counts(2, 2, 0, 2));

    // Node 20 and 22 write TAP when stdout is not a terminal; Node 24 writes spec unless asked for TAP.
    const tap = runInProject(
      {
        'test/a.test.mjs':
          "import { test } from 'node:test';\nimport assert from 'node:assert';\n" +
          "test('ok', () => {});\ntest('bad', () => { assert.equal(1, 2); });\ntest('later', { todo: true }, () => {});\n",
      },
      () => [process.execPath, '--test', '--test-reporter=tap'],
    );
    expect(tap.output).toMatch(/^# tests 3$/m);
    expect(countsFromSummaryLines(tap.output)).toEqual(counts(1, 1, 0, 1));
    const summary = summarizeOutput(tap.output);
    expect(summary).toMatch(/^not ok 2 - bad$/m);
    expect(summary).toMatch(/^\s+error: '1 == 2'$/m);
    expect(summary).toMatch(/^# fail 1$/m);
  });

  it('reads the vitest Tests line (not the Test Files line), including "no tests"', () => {
    const output =
      ' Test Files  1 failed | 2 passed (3)\n      Tests  1 failed | 5 passed | 2 skipped | 1 todo (9)\n   Duration  1.2s\n';
    expect(countsFromSummaryLines(output)).toEqual(counts(5, 1, 0, 3));
    expect(countsFromSummaryLines(' Test Files  1 failed (1)\n      Tests  no tests\n')).toEqual(
      counts(0, 0, 0, 0),
    );
    expect(countsFromSummaryLines('No test files found, exiting with code 1\n')).toEqual(
      counts(0, 0, 0, 0),
    );
  });

  it('reads the jest Tests line (literal text: jest is not installed here)', () => {
    const output =
      'Test Suites: 1 failed, 1 passed, 2 total\nTests:       1 failed, 1 skipped, 1 todo, 3 passed, 6 total\nSnapshots:   0 total\n';
    expect(countsFromSummaryLines(output)).toEqual(counts(3, 1, 0, 2));
  });

  it('sums every cargo test binary', () => {
    const output = [
      'test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s',
      '     Running tests/api.rs (target/debug/deps/api-1a2b)',
      'test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s',
    ].join('\n');
    expect(countsFromSummaryLines(output)).toEqual(counts(4, 2, 0, 1));
  });

  it("reads a real unittest run's `Ran N tests` and `FAILED (…)` lines, and names its failing tests", () => {
    const run = runInProject(
      {
        'tests/__init__.py': '',
        'tests/test_x.py':
          'import unittest\nclass T(unittest.TestCase):\n    def test_a(self): self.assertEqual(1, 1)\n' +
          '    def test_b(self): self.assertEqual(1, 2)\n    @unittest.skip("later")\n    def test_c(self): pass\n' +
          '    def test_d(self): raise KeyError(1)\n',
      },
      () => ['python3', '-m', 'unittest', 'discover'],
    );
    expect(run.output).toMatch(
      /^Ran 4 tests in .*\n\nFAILED \(failures=1, errors=1, skipped=1\)$/m,
    );
    expect(countsFromSummaryLines(run.output)).toEqual(counts(1, 1, 1, 1));
    expect(failingTestNames(run.output)).toEqual([
      'test_d (tests.test_x.T.test_d)',
      'test_b (tests.test_x.T.test_b)',
    ]);
  });

  it("reads the plain `N passed, N failed` line and mocha's spec counters", () => {
    expect(countsFromSummaryLines('5 passed, 1 failed, 2 skipped (12ms)\n')).toEqual(
      counts(5, 1, 0, 2),
    );
    expect(countsFromSummaryLines('  2 passing (5ms)\n  1 pending\n  1 failing\n')).toEqual(
      counts(2, 1, 0, 1),
    );
  });

  it('takes the format whose result lines come last, and returns null when there are none', () => {
    const pytestPrintingVitestText =
      'captured:       Tests  9 passed (9)\n      Tests  9 passed (9)\n====== 1 failed in 0.10s ======\n';
    expect(countsFromSummaryLines(pytestPrintingVitestText)).toEqual(counts(0, 1, 0, 0));
    expect(countsFromSummaryLines('make: *** [test] Error 2\n')).toBeNull();
    expect(countsFromSummaryLines('')).toBeNull();
  });
});
