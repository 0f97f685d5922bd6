import { beforeAll, describe, expect, it } from 'vitest';
import { countsFromSummaryLines } from '../../src/runner/report/summary-lines.js';
import { RESULT_SEPARATOR } from '../../src/runner/summary.js';
import {
  interpret,
  junitReport,
  runVitest,
  type Interpretation,
  type RealRun,
} from './report-real-runs.js';

const mathTest = (product: number): string =>
  [
    "import { describe, expect, it } from 'vitest';",
    "describe('math', () => {",
    "  it('adds', () => { expect(1 + 1).toBe(2); });",
    `  it('multiplies', () => { expect(2 * 2).toBe(${product}); });`,
    "  it.skip('skipped one', () => {});",
    '});',
    "it('top level', () => {});",
    '',
  ].join('\n');

const runs = {} as Record<
  'passing' | 'failing' | 'empty',
  { run: RealRun; result: Interpretation }
>;

beforeAll(() => {
  const scenarios = {
    passing: { 'src/math.test.ts': mathTest(4) },
    failing: { 'src/math.test.ts': mathTest(5) },
    empty: { 'src/math.ts': 'export const two = 2;\n' },
  };
  for (const [name, files] of Object.entries(scenarios) as [
    keyof typeof runs,
    Record<string, string>,
  ][]) {
    const run = runVitest(files);
    runs[name] = { run, result: interpret(run, junitReport, ['src']) };
  }
});

describe('real vitest runs (junit report + default reporter), interpreted', () => {
  it('passing: ids are `file > suite > name`, as vitest prints them; status passed', () => {
    const { run, result } = runs.passing;
    expect(run.exit_code).toBe(0);
    expect(result.tests).toEqual([
      { id: 'src/math.test.ts > math > adds', status: 'passed' },
      { id: 'src/math.test.ts > math > multiplies', status: 'passed' },
      { id: 'src/math.test.ts > math > skipped one', status: 'skipped' },
      { id: 'src/math.test.ts > top level', status: 'passed' },
    ]);
    expect(countsFromSummaryLines(run.output)).toEqual(result.counts);
    expect(result.status).toBe('passed');
  });

  it('failing: the failure message, counts matching the Tests line, a code failure at the test line', () => {
    const { run, result } = runs.failing;
    expect(run.exit_code).toBe(1);
    expect(result.tests[1]).toEqual({
      id: 'src/math.test.ts > math > multiplies',
      status: 'failed',
      message: expect.stringContaining('AssertionError: expected 4 to be 5'),
    });
    expect(result.counts).toEqual({ total: 4, passed: 2, failed: 1, errors: 0, skipped: 1 });
    expect(countsFromSummaryLines(run.output)).toEqual(result.counts);
    expect(result.status).toBe('failed');
    expect(result.classification.failure_class).toBe('code');
    expect(result.classification.advice).toContain('src/math.test.ts:4');
  });

  it('failing: the summary is the FAIL block with the assertion and its location, then the Tests line', () => {
    const { summary } = runs.failing.result;
    expect(summary.length).toBeLessThanOrEqual(1500);
    expect(summary).not.toContain('\u001b');
    const [errorPart = '', resultPart = ''] = summary.split(RESULT_SEPARATOR);
    expect(errorPart).toMatch(/FAIL {1,2}src\/math\.test\.ts > math > multiplies/);
    expect(errorPart).toContain('AssertionError: expected 4 to be 5');
    expect(errorPart).toMatch(/❯ src\/math\.test\.ts:4:\d+/);
    expect(resultPart).toMatch(/Tests {2}1 failed \| 2 passed \| 1 skipped \(4\)/);
  });

  it('no test files: vitest exits 1, which reads as no_tests rather than a code failure', () => {
    const { run, result } = runs.empty;
    expect(run.exit_code).toBe(1);
    expect(run.output).toContain('No test files found');
    expect(result.status).toBe('no_tests');
    expect(result.classification.failure_class).toBe('no_tests');
    expect(result.classification.reason).toContain('No test files found');
  });
});

describe('real vitest run where several tests share one error (vitest groups them under one block)', () => {
  it('the summary names the grouped tests and keeps the shared assertion and its location', () => {
    const run = runVitest({
      'vitest.config.mjs': 'export default {};\n',
      'shared.test.mjs': [
        "import { expect, test } from 'vitest';",
        'const check = () => expect(2 + 2).toBe(5);',
        "test('first', check);",
        "test('second', check);",
        '',
      ].join('\n'),
    });
    const result = interpret(run, junitReport);
    expect(result.tests.map((test) => `${test.status} ${test.id}`)).toEqual([
      'failed shared.test.mjs > first',
      'failed shared.test.mjs > second',
    ]);
    const [errorPart = ''] = result.summary.split(RESULT_SEPARATOR);
    expect(errorPart).toMatch(/FAIL {1,2}shared\.test\.mjs > first/);
    expect(errorPart).toMatch(/AssertionError: expected 4 to be 5/);
    expect(errorPart).toMatch(/shared\.test\.mjs:2:\d+/);
  });
});
