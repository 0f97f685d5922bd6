/**
 * Per-test ids from runners whose users keep a human format: mocha's spec reporter (read from its
 * tree), uvu (which names failing tests only), and ava behind `xo && ava && tsd`. Real runners,
 * pinned, run through the MCP client; a criterion cited by a test's name is then checked by
 * validate_requirements on that run.
 */
import fs from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import {
  AVA_VERSION,
  linkPackages,
  MOCHA_VERSION,
  TAPE_VERSION,
  TSD_VERSION,
  UVU_VERSION,
  XO_VERSION,
} from '../helpers/runners.js';
import { stripAnsi } from '../../src/runner/report/text.js';

const TASK = 'TASK-1';
const TASK_FILE = `---
id: ${TASK}
title: Sums
status: in_progress
---
## Acceptance Criteria
- [ ] AC-001: sums add numbers
`;

let repos: TempRepo[] = [];
afterEach(() => {
  repos.forEach((repo) => repo.remove());
  repos = [];
});

function project(
  test: string,
  files: Record<string, string>,
  manifest: Record<string, unknown> = {},
): TempRepo {
  const repo = makeRepo({
    '.gitignore': 'node_modules/\n',
    'package.json': JSON.stringify({
      name: 'demo',
      version: '1.0.0',
      scripts: { test },
      ...manifest,
    }),
    [`.guardkit/tasks/backlog/${TASK}.md`]: TASK_FILE,
    ...files,
  });
  repos.push(repo);
  return repo;
}

type Data = Record<string, any>; // a tool's structuredContent, as dataOf returns it

/** run_independent_tests, then validate_requirements citing each of `cited` as a passed test. */
async function runAndCite(repo: TempRepo, cited: string[]): Promise<{ run: Data; checks: Data[] }> {
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    const call = (name: string, args: Record<string, unknown>) =>
      callTool(client, name, { worktree: repo.dir, task_id: TASK, ...args });
    // Past the client's 60 s default: xo, ava and tsd on a machine under load.
    const ran = await client.callTool(
      {
        name: 'run_independent_tests',
        arguments: { worktree: repo.dir, task_id: TASK, timeout_s: 240 },
      },
      undefined,
      { timeout: 250_000 },
    );
    const run = dataOf(ran as CallToolResult);
    const checks = [];
    for (const test of cited) {
      const result = dataOf(
        await call('validate_requirements', { evidence: [{ criterion: 'AC-001', test }] }),
      );
      checks.push(result.criteria[0].evidence[0] as Data);
    }
    return { run, checks };
  } finally {
    await close();
  }
}

const ids = (data: Data) =>
  (data.tests as { id: string; status: string }[]).map((test) => `${test.status} ${test.id}`);
const log = (data: Data) => stripAnsi(fs.readFileSync(data.log_path as string, 'utf8'));
const outcome = (check: Data) => (check.valid ? `verified ${check.matched_test}` : check.problem);

describe("mocha's spec reporter, kept because the script chose it", () => {
  const MOCHA_TEST = [
    "const assert = require('node:assert');",
    "describe('sum', () => {",
    // The test's own output lands inside the tree.
    "  it('adds', () => { console.log('adding'); assert.strictEqual(1 + 1, 2); });",
    "  it('breaks', () => assert.strictEqual(1 + 1, 3));",
    "  it.skip('later', () => {});",
    "  describe('nested deep', () => {",
    "    it('waits', (done) => { setTimeout(done, 120); }).slow(10);",
    "    it('fails inside', () => { throw new Error('boom'); });",
    '  });',
    '});',
    "it('top level', () => {});",
    '',
  ].join('\n');
  const EXPECTED = [
    'passed top level',
    'passed sum > adds',
    'failed sum > breaks',
    'skipped sum > later',
    'passed sum nested deep > waits',
    'failed sum nested deep > fails inside',
  ];

  it('ids for passing, failing and pending tests, as the xunit path gives them; colours on or off', async () => {
    const repo = project('mocha --reporter spec test/test.js', { 'test/test.js': MOCHA_TEST });
    linkPackages(repo, [['mocha', MOCHA_VERSION]]);
    const { run, checks } = await runAndCite(repo, [
      'waits',
      'sum > nested deep > waits',
      'sum nested deep waits',
      'breaks',
      'multiplies',
    ]);
    expect(run.command).toEqual(['npm', 'test']);
    expect(log(run)).toMatch(/^ {6}✔ waits \(\d+ms\)$/m);
    expect(log(run)).toMatch(/^ {2}3 passing \(\d+ms\)\n {2}1 pending\n {2}2 failing$/m);
    expect(ids(run)).toEqual(EXPECTED);
    expect(run).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      counts: { total: 6, passed: 3, failed: 2, skipped: 1 },
      tests_source: "mocha's spec output in the run's log (its tree of suites)",
    });
    expect(run.tests[2].message).toMatch(/Expected values to be strictly equal/);
    expect(run.tests[5].message).toMatch(/Error: boom/);
    expect(checks.map(outcome)).toEqual([
      'verified sum nested deep > waits',
      'verified sum nested deep > waits',
      'verified sum nested deep > waits',
      'test breaks did not pass in the latest run',
      'test multiplies did not pass in the latest run',
    ]);

    // Colours forced on: the same tree.
    repo.write(
      'package.json',
      JSON.stringify({ scripts: { test: 'mocha -R spec --colors test/test.js' } }),
    );
    const { run: coloured } = await runAndCite(repo, []);
    expect(fs.readFileSync(coloured.log_path as string, 'utf8')).toContain('\u001b[');
    expect(ids(coloured)).toEqual(EXPECTED);

    // No reporter of the script's own: xunit is asked for, and gives the same ids.
    repo.write('package.json', JSON.stringify({ scripts: { test: 'mocha test/test.js' } }));
    const { run: xunit } = await runAndCite(repo, []);
    expect(xunit.tests_source).toMatch(/^mocha xunit report/);
    expect(ids(xunit)).toEqual(EXPECTED);
  }, 300_000);
});

describe('uvu: failing tests named, passing tests checked in the files it ran', () => {
  const SUM_TEST = (sum: number) =>
    [
      "const { test, suite } = require('uvu');",
      "const assert = require('uvu/assert');",
      "test('adds', () => { assert.is(1 + 1, 2); });",
      `test('sums', () => { assert.is(1 + 1, ${sum}); });`,
      "test.skip('later', () => {});",
      "// test('commented out', () => {});",
      'test.run();',
      "const math = suite('math');",
      "math('doubles', () => { assert.is(2 * 2, 4); });",
      'math.run();',
      '',
    ].join('\n');
  const OTHER_TEST =
    "const { test } = require('uvu');\nconst assert = require('uvu/assert');\n" +
    "test('other passes', () => { assert.ok(true); });\ntest.run();\n";
  const FILES = (sum: number) => ({
    'test/sum.js': SUM_TEST(sum),
    'test/nested/other.js': OTHER_TEST,
    // Never run: outside the directory uvu was given.
    'fixtures/fake.js': "test('made up', () => {});\n",
  });

  it('a passing name is verified; a made-up, skipped, commented-out or failing one is refused', async () => {
    const repo = project('uvu test', FILES(2));
    linkPackages(repo, [['uvu', UVU_VERSION]]);
    const { run, checks } = await runAndCite(repo, [
      'adds',
      'math > doubles',
      'sum.js > adds',
      'other passes',
      'multiplies',
      'made up',
      'later',
      'commented out',
    ]);
    expect(log(run)).toMatch(/^nested\/other\.js\n/m);
    expect(run).toMatchObject({
      status: 'passed',
      tests: [],
      tests_source: 'none',
      failures_only: { files: ['nested/other.js', 'sum.js'], failing: [] },
      counts: { total: 4, passed: 4, skipped: 1 },
    });
    expect(run.env.notes.join('\n')).toContain('uvu names failing tests only');
    const searched = '(searched: test/nested/other.js, test/sum.js)';
    expect(checks.map(outcome)).toEqual([
      'verified test/sum.js > adds',
      'verified test/sum.js > math > doubles',
      'verified test/sum.js > adds',
      'verified test/nested/other.js > other passes',
      `test multiplies cannot be checked: this runner names failing tests only, and no test file the latest run ran declares a test titled "multiplies" ${searched}`,
      expect.stringContaining('declares a test titled "made up"'),
      expect.stringContaining('declares a test titled "later"'),
      expect.stringContaining('declares a test titled "commented out"'),
    ]);

    repo.write('test/sum.js', SUM_TEST(3));
    const red = await runAndCite(repo, ['sums', 'adds']);
    expect(red.run).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      failures_only: { files: ['nested/other.js', 'sum.js'], failing: ['sums'] },
    });
    expect(red.checks.map(outcome)).toEqual([
      'test sums failed in the latest run',
      'verified test/sum.js > adds',
    ]);
  }, 300_000);
});

describe('ava behind `xo && ava && tsd`', () => {
  const AVA_TEST = [
    "import test from 'ava';",
    "import sum from '../index.js';",
    '',
    "test('adds', t => {",
    '\tt.is(sum(1, 1), 2);',
    '});',
    '',
    "test('sums', t => {",
    '\tt.is(sum(2, 2), 5);',
    '});',
    '',
  ].join('\n');
  const FILES = {
    'index.js': 'export default function sum(a, b) {\n\treturn a + b;\n}\n',
    'index.d.ts': 'export default function sum(a: number, b: number): number;\n',
    'index.test-d.ts':
      "import {expectType} from 'tsd';\nimport sum from './index.js';\n\n" +
      'expectType<number>(sum(1, 2));\n',
    // The runners are linked from the shared install, outside the project.
    'xo.config.js':
      "const config = [{rules: {'n/no-extraneous-import': 'off', " +
      "'import-x/no-extraneous-dependencies': 'off'}}];\n\nexport default config;\n",
    'test/sum.js': AVA_TEST,
  };

  it('ava gets --tap inside the chain: ids for passing and failing tests, names cited', async () => {
    const repo = project('xo && ava && tsd', FILES, { type: 'module', types: './index.d.ts' });
    linkPackages(repo, [
      ['ava', AVA_VERSION],
      ['xo', XO_VERSION],
      ['tsd', TSD_VERSION],
    ]);
    // One red run: xo passes, ava fails one test, tsd does not run.
    const { run, checks } = await runAndCite(repo, ['adds', 'sums']);
    expect(run.command).toEqual(['npm', 'test']);
    expect(run.env.notes.join('\n')).toContain('runs as `xo && ava --tap && tsd`');
    expect(ids(run)).toEqual(['passed adds', 'failed sums']);
    expect(run).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      counts: { total: 2, passed: 1, failed: 1 },
      tests_source: "TAP in the run's output (read with tap-parser)",
    });
    expect(checks.map(outcome)).toEqual([
      'verified adds',
      'test sums did not pass in the latest run',
    ]);
  }, 600_000);
});

describe('tape prints TAP itself', () => {
  it('ids `test > assertion` come back for passing and failing assertions; one is cited', async () => {
    const repo = project('tape test/*.js', {
      'test/sum.js':
        "const test = require('tape');\n" +
        "test('adds', (t) => { t.equal(1 + 1, 2, 'one and one'); t.end(); });\n" +
        "test('sums', (t) => { t.equal(2 + 2, 5, 'two and two'); t.end(); });\n",
    });
    linkPackages(repo, [['tape', TAPE_VERSION]]);
    const { run, checks } = await runAndCite(repo, [
      'one and one',
      'adds > one and one',
      'two and two',
    ]);
    expect(run.command).toEqual(['npm', 'test']);
    expect(ids(run)).toEqual(['passed adds > one and one', 'failed sums > two and two']);
    expect(run).toMatchObject({ status: 'failed', failure_class: 'code' });
    expect(checks.map(outcome)).toEqual([
      'verified adds > one and one',
      'verified adds > one and one',
      'test two and two did not pass in the latest run',
    ]);
  }, 300_000);
});
