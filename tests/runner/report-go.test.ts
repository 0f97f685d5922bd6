import { describe, expect, it } from 'vitest';
import { classifyFailure } from '../../src/runner/classify.js';
import { decideStatus } from '../../src/runner/outcome.js';
import { countsFromTests } from '../../src/runner/report/counts.js';
import { parseGoTestJson } from '../../src/runner/report/go-test-json.js';
import { countsFromSummaryLines } from '../../src/runner/report/summary-lines.js';
import { summarizeOutput } from '../../src/runner/summary.js';

// go is not installed on this machine, so this is a literal `go test -json ./...` stream (Go 1.24
// format, with build-output events) rather than a captured run.
const event = (fields: Record<string, unknown>): string =>
  JSON.stringify({ Time: '2026-01-05T10:00:00Z', ...fields });
const calc = 'example.com/calc';
const out = (Test: string | undefined, Output: string): string =>
  event({ Action: 'output', Package: calc, Test, Output });
const GO_TEST_JSON = [
  event({ Action: 'start', Package: calc }),
  event({ Action: 'run', Package: calc, Test: 'TestAdd' }),
  out('TestAdd', '=== RUN   TestAdd\n'),
  out('TestAdd', '--- PASS: TestAdd (0.00s)\n'),
  event({ Action: 'pass', Package: calc, Test: 'TestAdd', Elapsed: 0 }),
  event({ Action: 'run', Package: calc, Test: 'TestDiv' }),
  out('TestDiv', '=== RUN   TestDiv\n'),
  out('TestDiv', '    calc_test.go:14: Div(1, 0) = 0, want an error\n'),
  out('TestDiv', '--- FAIL: TestDiv (0.00s)\n'),
  event({ Action: 'fail', Package: calc, Test: 'TestDiv', Elapsed: 0 }),
  event({ Action: 'run', Package: calc, Test: 'TestTable' }),
  out('TestTable', '=== RUN   TestTable\n'),
  event({ Action: 'run', Package: calc, Test: 'TestTable/positive' }),
  out('TestTable/positive', '=== RUN   TestTable/positive\n'),
  event({ Action: 'run', Package: calc, Test: 'TestTable/negative' }),
  out('TestTable/negative', '=== RUN   TestTable/negative\n'),
  out('TestTable/negative', '    calc_test.go:31: Abs(-2) = -2, want 2\n'),
  out('TestTable', '--- FAIL: TestTable (0.00s)\n'),
  out('TestTable/positive', '    --- PASS: TestTable/positive (0.00s)\n'),
  event({ Action: 'pass', Package: calc, Test: 'TestTable/positive', Elapsed: 0 }),
  out('TestTable/negative', '    --- FAIL: TestTable/negative (0.00s)\n'),
  event({ Action: 'fail', Package: calc, Test: 'TestTable/negative', Elapsed: 0 }),
  event({ Action: 'fail', Package: calc, Test: 'TestTable', Elapsed: 0 }),
  event({ Action: 'run', Package: calc, Test: 'TestRemote' }),
  out('TestRemote', '=== RUN   TestRemote\n'),
  out('TestRemote', '    calc_test.go:40: needs network\n'),
  out('TestRemote', '--- SKIP: TestRemote (0.00s)\n'),
  event({ Action: 'skip', Package: calc, Test: 'TestRemote', Elapsed: 0 }),
  out(undefined, 'FAIL\n'),
  out(undefined, `FAIL\t${calc}\t0.004s\n`),
  event({ Action: 'fail', Package: calc, Elapsed: 0.004 }),
  event({
    ImportPath: `${calc}/broken [${calc}/broken.test]`,
    Action: 'build-output',
    Output: `# ${calc}/broken [${calc}/broken.test]\n`,
  }),
  event({
    ImportPath: `${calc}/broken [${calc}/broken.test]`,
    Action: 'build-output',
    Output: 'broken/broken.go:5:9: undefined: missingFunc\n',
  }),
  event({ ImportPath: `${calc}/broken [${calc}/broken.test]`, Action: 'build-fail' }),
  event({ Action: 'start', Package: `${calc}/broken` }),
  event({
    Action: 'output',
    Package: `${calc}/broken`,
    Output: `FAIL\t${calc}/broken [build failed]\n`,
  }),
  event({
    Action: 'fail',
    Package: `${calc}/broken`,
    Elapsed: 0,
    FailedBuild: `${calc}/broken [${calc}/broken.test]`,
  }),
  event({ Action: 'start', Package: `${calc}/empty` }),
  event({
    Action: 'output',
    Package: `${calc}/empty`,
    Output: `?   \t${calc}/empty\t[no test files]\n`,
  }),
  event({ Action: 'skip', Package: `${calc}/empty`, Elapsed: 0 }),
].join('\n');

/** What `go test -v ./...` prints: the Output fields of the same stream. */
const GO_TEST_TEXT = GO_TEST_JSON.split('\n')
  .map((line) => (JSON.parse(line) as { Output?: string }).Output ?? '')
  .join('');

describe('go test -json (literal sample: go is not installed here)', () => {
  it('reports leaf tests as pkg/TestName, a parent only when it failed on its own, a failed build as an error', () => {
    expect(parseGoTestJson(GO_TEST_JSON)).toEqual([
      { id: `${calc}/TestAdd`, status: 'passed' },
      {
        id: `${calc}/TestDiv`,
        status: 'failed',
        message: 'calc_test.go:14: Div(1, 0) = 0, want an error',
      },
      { id: `${calc}/TestTable/positive`, status: 'passed' },
      {
        id: `${calc}/TestTable/negative`,
        status: 'failed',
        message: 'calc_test.go:31: Abs(-2) = -2, want 2',
      },
      { id: `${calc}/TestRemote`, status: 'skipped', message: 'calc_test.go:40: needs network' },
      {
        id: `${calc}/broken`,
        status: 'error',
        message: `# ${calc}/broken [${calc}/broken.test]\nbroken/broken.go:5:9: undefined: missingFunc\nFAIL\t${calc}/broken [build failed]`,
      },
    ]);
  });

  it('ignores non-JSON lines mixed into the stream and marks a test cut off mid-run as an error', () => {
    const cutOff = [
      'go: downloading example.com/dep v1.0.0',
      event({ Action: 'run', Package: calc, Test: 'TestHangs' }),
      out('TestHangs', '=== RUN   TestHangs\n'),
      '{"Action":"output","Package":', // truncated by a kill
    ].join('\n');
    expect(parseGoTestJson(cutOff)).toEqual([
      {
        id: `${calc}/TestHangs`,
        status: 'error',
        message: 'the test started but never reported a result',
      },
    ]);
  });

  it('reads a package that go before 1.24 failed to build from its stderr lines', () => {
    // What go 1.19 prints for `go test -json ./...` when a test file names a removed function:
    // no event for the package at all.
    const stream = [
      '# example.com/bf/p [example.com/bf/p.test]',
      'p/a_test.go:5:32: undefined: B',
      'FAIL\texample.com/bf/p [build failed]',
      event({ Action: 'run', Package: calc, Test: 'TestAdd' }),
      event({ Action: 'pass', Package: calc, Test: 'TestAdd', Elapsed: 0 }),
    ].join('\n');
    expect(parseGoTestJson(stream)).toEqual([
      { id: `${calc}/TestAdd`, status: 'passed' },
      { id: 'example.com/bf/p', status: 'error', message: 'p/a_test.go:5:32: undefined: B' },
    ]);
  });

  it('counts from the verbose text agree on top-level tests, and the run is a code failure at the test line', () => {
    expect(countsFromSummaryLines(GO_TEST_TEXT)).toEqual({
      total: 4,
      passed: 1,
      failed: 2,
      errors: 0,
      skipped: 1,
    });
    const tests = parseGoTestJson(GO_TEST_JSON);
    const counts = countsFromTests(tests);
    const status = decideStatus({
      exit_code: 1,
      signal: null,
      timed_out: false,
      counts,
      output: GO_TEST_TEXT,
    });
    expect(status).toBe('failed');
    const failure = classifyFailure({
      status,
      output: GO_TEST_TEXT,
      exit_code: 1,
      firstPartyModules: [],
    });
    expect(failure.failure_class).toBe('code');
    expect(failure.advice).toContain('calc_test.go:14');
    const summary = summarizeOutput(GO_TEST_TEXT);
    // With -v the log line comes between `=== RUN` and `--- FAIL`.
    expect(summary).toMatch(
      /^=== RUN {3}TestDiv\n\s+calc_test\.go:14: Div\(1, 0\) = 0, want an error\n--- FAIL: TestDiv \(0\.00s\)\n/,
    );
    expect(summary).toContain(`FAIL\t${calc}\t0.004s`);
  });

  it('without -v, go reports per package, so counts are per package', () => {
    const text = `--- FAIL: TestDiv (0.00s)\n    calc_test.go:14: boom\nFAIL\nFAIL\t${calc}\t0.004s\nok  \t${calc}/util\t0.002s\n?   \t${calc}/empty\t[no test files]\n`;
    expect(countsFromSummaryLines(text)).toEqual({
      total: 2,
      passed: 1,
      failed: 1,
      errors: 0,
      skipped: 0,
    });
    expect(summarizeOutput(text)).toMatch(
      /^--- FAIL: TestDiv \(0\.00s\)\n {4}calc_test\.go:14: boom\n/,
    );
  });
});
