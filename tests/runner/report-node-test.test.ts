import { beforeAll, describe, expect, it } from 'vitest';
import { countsFromSummaryLines } from '../../src/runner/report/summary-lines.js';
import { RESULT_SEPARATOR } from '../../src/runner/summary.js';
import {
  interpret,
  junitReport,
  runNodeTest,
  type Interpretation,
  type RealRun,
} from './report-real-runs.js';

const PASSING = {
  'test/math.test.mjs': [
    "import { describe, test } from 'node:test';",
    "import assert from 'node:assert';",
    "describe('math', () => {",
    "  test('adds', () => { assert.strictEqual(1 + 1, 2); });",
    "  describe('nested', () => { test('multiplies', () => { assert.strictEqual(2 * 3, 6); }); });",
    '});',
    '',
  ].join('\n'),
};

const FAILING = {
  'test/math.test.mjs': [
    "import { describe, test } from 'node:test';",
    "import assert from 'node:assert';",
    "describe('math', () => {",
    "  test('adds', () => { assert.strictEqual(1 + 1, 2); });",
    "  test('compares objects', () => { assert.deepStrictEqual({ a: 1, b: [1, 2] }, { a: 1, b: [1, 3] }); });",
    "  test('skipped one', { skip: 'later' }, () => {});",
    '});',
    "test('top level', () => { assert.strictEqual(2 * 2, 5); });",
    '',
  ].join('\n'),
};

const CONNECTION_REFUSED = {
  'test/api.test.mjs': [
    "import { test } from 'node:test';",
    "import net from 'node:net';",
    'async function closedPort() {',
    '  const server = net.createServer().listen(0, "127.0.0.1");',
    "  await new Promise((resolve) => server.once('listening', resolve));",
    '  const { port } = server.address();',
    '  await new Promise((resolve) => server.close(resolve));',
    '  return port;',
    '}',
    "test('loads users', async () => { await fetch(`http://127.0.0.1:${await closedPort()}/users`); });",
    '',
  ].join('\n'),
};

const MISSING_FIRST_PARTY = {
  'test/user.test.mjs':
    "import { createUser } from '../src/user-service.mjs';\nimport { test } from 'node:test';\ntest('creates', () => createUser());\n",
};

// Node's JUnit reporter escapes `"` twice (`&amp;quot;`), on Node 20, 22 and 24 alike.
const QUOTED_NAMES = {
  'test/quotes.test.mjs': [
    "import { describe, test } from 'node:test';",
    'describe(\'parses "a, b"\', () => {',
    "  test('keeps \"quotes\" & <tags> it\\'s', () => {});",
    '  test(\'fails on "x"\', () => { throw new Error(\'got "x"\'); });',
    "  test('waits', { skip: 'until \"y\"' }, () => {});",
    '});',
    '',
  ].join('\n'),
};

const runs = {} as Record<
  'passing' | 'failing' | 'empty' | 'refused' | 'missing' | 'quoted',
  { run: RealRun; result: Interpretation }
>;

beforeAll(() => {
  const scenarios = {
    passing: PASSING,
    failing: FAILING,
    empty: { 'README.md': 'no tests here\n' },
    refused: CONNECTION_REFUSED,
    missing: MISSING_FIRST_PARTY,
    quoted: QUOTED_NAMES,
  };
  for (const [name, files] of Object.entries(scenarios) as [
    keyof typeof runs,
    Record<string, string>,
  ][]) {
    const run = runNodeTest(files);
    runs[name] = { run, result: interpret(run, junitReport, ['src']) };
  }
});

describe('real node --test runs (junit report + spec on stdout), interpreted', () => {
  it('passing: ids are the suite path and name, status passed', () => {
    const { run, result } = runs.passing;
    expect(run.exit_code).toBe(0);
    expect(result.tests).toEqual([
      { id: 'math > adds', status: 'passed' },
      { id: 'math > nested > multiplies', status: 'passed' },
    ]);
    expect(countsFromSummaryLines(run.output)).toEqual(result.counts);
    expect(result.status).toBe('passed');
    expect(result.classification.failure_class).toBe('none');
  });

  it('failing: failures, skips and top-level tests parsed; counts agree with the spec result lines', () => {
    const { run, result } = runs.failing;
    expect(run.exit_code).toBe(1);
    expect(result.tests).toEqual([
      { id: 'math > adds', status: 'passed' },
      {
        id: 'math > compares objects',
        status: 'failed',
        message: expect.stringContaining('Expected values to be strictly deep-equal'),
      },
      { id: 'math > skipped one', status: 'skipped', message: 'later' },
      { id: 'top level', status: 'failed', message: expect.stringContaining('4 !== 5') },
    ]);
    expect(result.counts).toEqual({ total: 4, passed: 1, failed: 2, errors: 0, skipped: 1 });
    expect(countsFromSummaryLines(run.output)).toEqual(result.counts);
    expect(result.status).toBe('failed');
    expect(result.classification.failure_class).toBe('code');
    expect(result.classification.reason).toContain('AssertionError [ERR_ASSERTION]');
    expect(result.classification.advice).toMatch(/test\/math\.test\.mjs:5\b/);
  });

  it('names with quotes, ampersands and angle brackets come back as written in the test file', () => {
    const { run, result } = runs.quoted;
    expect(run.report).toContain('&amp;quot;');
    expect(result.tests).toEqual([
      { id: 'parses "a, b" > keeps "quotes" & <tags> it\'s', status: 'passed' },
      {
        id: 'parses "a, b" > fails on "x"',
        status: 'failed',
        message: expect.stringContaining('got "x"'),
      },
      { id: 'parses "a, b" > waits', status: 'skipped', message: 'until "y"' },
    ]);
  });

  it('failing: the summary holds the assertion diff and the location in the test file, then the counters', () => {
    const { summary } = runs.failing.result;
    expect(summary.length).toBeLessThanOrEqual(1500);
    const [errorPart = '', resultPart = ''] = summary.split(RESULT_SEPARATOR);
    expect(errorPart).toMatch(/✖ compares objects/);
    expect(errorPart).toContain(
      'AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:',
    );
    expect(errorPart).toContain('+ actual - expected');
    expect(errorPart).toMatch(/^\s*\+ {5}2$/m);
    expect(errorPart).toMatch(/^\s*- {5}3$/m);
    expect(errorPart).toMatch(/at .*test\/math\.test\.mjs:5:\d+\)/);
    expect(resultPart).toMatch(/ℹ tests 4/);
    expect(resultPart).toMatch(/ℹ fail 2/);
  });

  it('no test files: exit 0 with "tests 0" is no_tests, not a pass', () => {
    const { run, result } = runs.empty;
    expect(run.exit_code).toBe(0);
    expect(result.counts.total).toBe(0);
    expect(result.status).toBe('no_tests');
    expect(result.classification.failure_class).toBe('no_tests');
  });

  it('fetch to a closed port: ECONNREFUSED is infrastructure', () => {
    const { run, result } = runs.refused;
    expect(run.output).toContain('ECONNREFUSED');
    expect(result.status).toBe('failed');
    expect(result.classification.failure_class).toBe('infrastructure');
    expect(result.classification.reason).toContain('ECONNREFUSED');
  });

  it('a test importing a first-party file that does not exist: code, with the missing path named', () => {
    const { run, result } = runs.missing;
    expect(run.output).toContain('ERR_MODULE_NOT_FOUND');
    expect(result.status).toBe('failed');
    expect(result.classification.failure_class).toBe('code');
    expect(result.classification.advice).toContain('src/user-service.mjs');
    expect(result.summary).toMatch(/Cannot find module '.*src\/user-service\.mjs'/);
  });
});
