import { beforeAll, describe, expect, it } from 'vitest';
import {
  RESULT_SEPARATOR,
  summarizeOutput,
  summaryWithFirstFailure,
} from '../../src/runner/summary.js';
import path from 'node:path';
import {
  runInProject,
  runNodeTest,
  runPytest,
  VITEST_BIN,
  type RealRun,
} from './report-real-runs.js';

const FIVE_MB = 5 * 1024 * 1024;

let huge: RealRun;
let manyFailures: RealRun;

beforeAll(() => {
  // The first failure is a short assertion; a later failing test prints 5 MB of captured output.
  huge = runPytest({
    'tests/test_big.py': [
      'def test_first():',
      '    total = sum([1, 2])',
      '    assert total == 4',
      '',
      'def test_noisy():',
      `    for index in range(${FIVE_MB / 64 + 1000}):`,
      '        print(f"progress line {index:08d} " + "." * 40)',
      '    assert False, "noisy failed too"',
      '',
    ].join('\n'),
  });
  manyFailures = runPytest({
    'tests/test_many.py':
      'import pytest\n\n@pytest.mark.parametrize("n", range(150))\ndef test_negative(n):\n    assert n < 0\n',
  });
});

describe('summarizeOutput on real runs', () => {
  it('keeps the first error of a 5 MB output, with the final result line, within the limit', () => {
    expect(huge.output.length).toBeGreaterThan(FIVE_MB);
    const summary = summarizeOutput(huge.output);
    expect(summary.length).toBeLessThanOrEqual(1500);
    expect(summary).toMatch(/^_+ test_first _+$/m);
    expect(summary).toContain('>       assert total == 4');
    expect(summary).toMatch(/^E\s+assert 3 == 4$/m);
    expect(summary).toContain('tests/test_big.py:3: AssertionError');
    expect(summary).toMatch(/=+ 2 failed in [\d.]+s =+$/);
    expect(summary).not.toContain('progress line');
  });

  it('never returns just the tail: the error is there even though the last lines are only results', () => {
    const lastThreeLines = huge.output.trimEnd().split('\n').slice(-3).join('\n');
    const summary = summarizeOutput(huge.output);
    expect(summary).not.toBe(lastThreeLines);
    expect(summary.indexOf('assert 3 == 4')).toBeLessThan(summary.indexOf(RESULT_SEPARATOR));
  });

  it('honours any limit, shortening the per-test lines before the counting line', () => {
    for (const limit of [400, 800, 1500, 4000]) {
      const summary = summarizeOutput(manyFailures.output, limit);
      expect(summary.length).toBeLessThanOrEqual(limit);
      expect(summary).toMatch(/^E\s+assert 0 < 0$/m);
      expect(summary).toMatch(/=+ 150 failed in [\d.]+s =+$/);
    }
    const summary = summarizeOutput(manyFailures.output);
    expect(summary).toContain('FAILED tests/test_many.py::test_negative[0] - assert 0 < 0');
    expect(summary).toMatch(/^…$/m);
  });

  it('shows a Python traceback from its first line to the exception, caret lines included', () => {
    const run = runInProject(
      { 'check.py': 'import json\n\ndef load():\n    return json.loads("{")\n\nload()\n' },
      () => ['python3', 'check.py'],
    );
    const summary = summarizeOutput(run.output);
    expect(summary).toMatch(/^Traceback \(most recent call last\):/);
    expect(summary).toMatch(
      /File ".*check\.py", line 4, in load\n\s+return json\.loads\("\{"\)\n\s+\^+\n/,
    );
    expect(summary).toMatch(
      /json\.decoder\.JSONDecodeError: Expecting property name enclosed in double quotes.*$/,
    );
  });

  it('shows a compile-time SyntaxError with its location, source line and caret (Python and Node)', () => {
    const python = runInProject({ 'app.py': 'def f():\n    x = (1,\n' }, () => [
      'python3',
      'app.py',
    ]);
    expect(summarizeOutput(python.output)).toMatch(
      /^ {2}File ".*app\.py", line 2\n {4}x = \(1,\n\s+\^\nSyntaxError: '\(' was never closed$/,
    );

    const node = runNodeTest({
      'test/a.test.mjs':
        "import { test } from 'node:test';\ntest('a', () => {\n  const x = (1, ;\n});\n",
    });
    const [errorPart = '', resultPart = ''] = summarizeOutput(node.output).split(RESULT_SEPARATOR);
    expect(errorPart).toMatch(
      /^file:\/\/.*test\/a\.test\.mjs:3\n {2}const x = \(1, ;\n\s+\^\n\nSyntaxError: Unexpected token ';'/,
    );
    expect(resultPart).toContain('ℹ fail 1');
  });

  it("mocha's spec reporter: the failing tests named from its tree, the error printed after its counters", () => {
    const mocha = path.resolve('node_modules/.bin/mocha');
    const run = runInProject(
      {
        'test/sum.spec.js':
          "const assert = require('node:assert');\ndescribe('sum', () => {\n" +
          "  it('adds', () => assert.strictEqual(1 + 1, 2));\n" +
          "  it('breaks', () => assert.strictEqual(1 + 1, 3));\n" +
          "  it('doubles', () => assert.strictEqual(2 * 2, 5));\n});\n",
      },
      () => [mocha, '--reporter', 'spec'],
    );
    expect(run.output).toMatch(/^ {4}1\) breaks\n {4}2\) doubles\n\n\n {2}1 passing/m);
    const [errorPart = '', resultPart = ''] = summaryWithFirstFailure(run.output, []).split(
      RESULT_SEPARATOR,
    );
    expect(errorPart).toMatch(
      /^Failing tests \(2\): breaks; doubles\n\s*AssertionError \[ERR_ASSERTION\]: Expected values/,
    );
    expect(resultPart).toMatch(/1 passing \(\d+ms\)\n {2}2 failing/);
  });
  it('finds the error printed after the counters when a wrapper forwards stderr after stdout', () => {
    // vitest prints its failures on stderr and its counters on stdout; a wrapper that forwards each
    // through its own pipe (run-s, concurrently) can deliver them in either order.
    const run = runInProject(
      {
        'vitest.config.js': 'export default {};\n',
        'sum.test.js':
          "import { test, expect } from 'vitest';\n" +
          "test('adds', () => expect(1 + 1).toBe(2));\n" +
          "test('doubles', () => expect(2 + 2).toBe(5));\n",
      },
      (dir) => ['sh', '-c', `"$0" run --root "${dir}" 2>stderr.log; cat stderr.log`, VITEST_BIN],
    );
    expect(run.output.indexOf('Tests  1 failed')).toBeLessThan(run.output.indexOf('FAIL '));
    const [errorPart = '', resultPart = ''] = summaryWithFirstFailure(run.output, []).split(
      RESULT_SEPARATOR,
    );
    expect(errorPart).toMatch(
      /FAIL {2}sum\.test\.js > doubles\nAssertionError: expected 4 to be 5/,
    );
    expect(resultPart).toMatch(/Tests {2}1 failed \| 1 passed \(2\)/);
  });
});

describe('summarizeOutput on unrecognised output', () => {
  it('falls back to as many last lines as fit, not three', () => {
    const output = Array.from({ length: 40 }, (_, index) => `step ${index} done`).join('\n');
    const summary = summarizeOutput(output, 200);
    expect(summary.length).toBeLessThanOrEqual(200);
    expect(summary.split('\n').length).toBeGreaterThan(3);
    expect(summary.endsWith('step 39 done')).toBe(true);
  });

  it('keeps the last drawing of carriage-return progress lines and clips giant lines', () => {
    const output = `Error: boom ${'x'.repeat(10_000)}\nloading 10%\rloading 100%\n`;
    const summary = summarizeOutput(output);
    expect(summary.length).toBeLessThanOrEqual(1500);
    expect(summary).toMatch(/^Error: boom x+…\nloading 100%$/);
  });

  it('is empty for empty output', () => {
    expect(summarizeOutput('')).toBe('');
  });
});
