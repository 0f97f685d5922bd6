import { beforeAll, describe, expect, it } from 'vitest';
import { countsFromSummaryLines } from '../../src/runner/report/summary-lines.js';
import { nodeBinary, NODE_RELEASES } from '../helpers/runners.js';
import {
  interpret,
  junitReport,
  runNodeTest,
  type Interpretation,
  type RealRun,
} from './report-real-runs.js';

// Node 24's junit reporter puts a `file` attribute on every testcase; Node 22 and 24 name the
// per-file pseudo-test by a relative path, Node 20 by an absolute one.
const PASSING = {
  'test/math.test.mjs': [
    "import { describe, test } from 'node:test';",
    "import assert from 'node:assert';",
    "describe('math', () => {",
    "  test('adds', () => { assert.strictEqual(1 + 1, 2); });",
    "  describe('nested', () => { test('multiplies', () => { assert.strictEqual(2 * 3, 6); }); });",
    '});',
    "test('top level', () => {});",
    '',
  ].join('\n'),
};
const FAILING = {
  'test/math.test.mjs': [
    "import { test } from 'node:test';",
    "import assert from 'node:assert';",
    "test('adds', () => { assert.strictEqual(1 + 1, 2); });",
    "test('compares', () => { assert.strictEqual(2 * 2, 5); });",
    '',
  ].join('\n'),
};
// A test file whose tests were all removed: the file still "runs" and node reports it as a test.
const EMPTIED = {
  'test/math.test.mjs': "import { test } from 'node:test';\n// all tests removed\n",
};
const BROKEN = {
  'test/math.test.mjs': "import { test } from 'node:test';\nthrow new Error('boom at load');\n",
};

type Scenario = 'passing' | 'failing' | 'emptied' | 'broken';
const NODES = {
  current: process.execPath,
  22: nodeBinary(22),
  24: nodeBinary(24),
} as const;

// Node 22 and 24 are CI's (.ci/node-versions.sh install): `npm test` never downloads a Node release.
for (const release of ['current', '22', '24'] as const) {
  const node = NODES[release];
  const missing = node
    ? ''
    : ` (skipped: Node ${NODE_RELEASES[release as '22' | '24']} is not installed; .ci/node-versions.sh install)`;
  describe.skipIf(!node)(
    `node --test on Node ${release}: reports read the same way${missing}`,
    () => {
      const runs = {} as Record<Scenario, { run: RealRun; result: Interpretation }>;
      beforeAll(() => {
        const scenarios = { passing: PASSING, failing: FAILING, emptied: EMPTIED, broken: BROKEN };
        for (const [name, files] of Object.entries(scenarios) as [
          Scenario,
          Record<string, string>,
        ][]) {
          const run = runNodeTest(files, node!);
          runs[name] = { run, result: interpret(run, junitReport) };
        }
      }, 300_000);

      it('a passing suite: every test by suite path, passed, counts equal to the spec result lines', () => {
        const { run, result } = runs.passing;
        expect(run.exit_code).toBe(0);
        expect(result.tests).toEqual([
          { id: 'math > adds', status: 'passed' },
          { id: 'math > nested > multiplies', status: 'passed' },
          { id: 'top level', status: 'passed' },
        ]);
        expect(result.counts).toEqual(countsFromSummaryLines(run.output));
        expect(result.status).toBe('passed');
      });

      it('a failing suite: the failed test and its assertion, never a pass', () => {
        const { result } = runs.failing;
        expect(result.tests).toEqual([
          { id: 'adds', status: 'passed' },
          { id: 'compares', status: 'failed', message: expect.stringContaining('4 !== 5') },
        ]);
        expect(result.status).toBe('failed');
      });

      it('a file whose tests were all removed is no_tests: the file itself never counts as a passed test', () => {
        const { run, result } = runs.emptied;
        expect(run.exit_code).toBe(0);
        expect(result.tests).toEqual([]);
        expect(result.status).toBe('no_tests');
      });

      it('a file that throws while loading keeps its entry and fails, its error in the summary', () => {
        const { result } = runs.broken;
        // Named by the file: a relative path on Node 22 and 24, an absolute one on Node 20.
        expect(result.tests).toEqual([
          {
            id: expect.stringMatching(/test\/math\.test\.mjs$/),
            status: 'failed',
            message: expect.any(String),
          },
        ]);
        expect(result.status).toBe('failed');
        expect(result.summary).toContain('boom at load');
      });
    },
  );
}
