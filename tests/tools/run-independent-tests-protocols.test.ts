/**
 * Runners read by protocol (TAP), by their own summary lines, and through wrappers (nyc, tox with
 * coverage, chains, npm lifecycle steps): real runners installed pinned, run through the MCP client,
 * checked against what the raw run printed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import {
  AVA_VERSION,
  linkPackages,
  MOCHA_VERSION,
  NODE_TAP_VERSION,
  NPM_RUN_ALL_VERSION,
  NYC_VERSION,
  TAPE_VERSION,
  UVU_VERSION,
} from '../helpers/runners.js';
import { stripAnsi } from '../../src/runner/report/text.js';

// The repository's own devDependencies, for a project whose steps lint, test and type-check.
const ESLINT_VERSION = '10.15.0';
const VITEST_VERSION = '4.1.12';
const TYPESCRIPT_VERSION = '5.9.3';

let repos: TempRepo[] = [];
afterEach(() => {
  repos.forEach((repo) => repo.remove());
  repos = [];
});

function project(files: Record<string, string>): TempRepo {
  const repo = makeRepo({
    '.gitignore': 'node_modules/\n.nyc_output/\ncoverage/\n.tap/\n',
    ...files,
  });
  repos.push(repo);
  return repo;
}

async function run(repo: TempRepo) {
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    // Past the client's 60 s default: a lint, a test and a type-check step on a machine under load.
    const result = await client.callTool(
      {
        name: 'run_independent_tests',
        arguments: { worktree: repo.dir, task_id: 'TASK-1', timeout_s: 240 },
      },
      undefined,
      { timeout: 250_000 },
    );
    return dataOf(result as Awaited<ReturnType<typeof callTool>>);
  } finally {
    await close();
  }
}

type RunData = Record<string, any>; // a tool's structuredContent, as dataOf returns it

const ids = (data: RunData) =>
  (data.tests as { id: string; status: string }[]).map((test) => `${test.status} ${test.id}`);

/** The raw run's output, as the user would read it in a terminal. */
const log = (data: RunData) => stripAnsi(fs.readFileSync(data.log_path as string, 'utf8'));

const npmProject = (test: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name: 'demo', version: '1.0.0', scripts: { test }, ...extra });

describe('TAP read from the log, whatever prints it', () => {
  const TAPE_TEST = (sum: number) =>
    "const test = require('tape');\n" +
    "test('adds', (t) => { t.equal(1 + 1, 2); t.end(); });\n" +
    `test('sums', (t) => { t.equal(1 + 1, ${sum}, 'one and one'); t.end(); });\n`;

  it('tape behind nyc (npm test = nyc tape …): ids `test > assertion`, counts as tape prints them', async () => {
    const repo = project({
      'package.json': npmProject('nyc --reporter=text tape test/*.js'),
      'test/sum.js': TAPE_TEST(2),
    });
    linkPackages(repo, [
      ['tape', TAPE_VERSION],
      ['nyc', NYC_VERSION],
    ]);
    const green = await run(repo);
    expect(log(green)).toMatch(/^# tests 2\n# pass {2}2\n\n# ok$/m);
    expect(green).toMatchObject({
      status: 'passed',
      counts: { total: 2, passed: 2, failed: 0 },
      tests_source: "TAP in the run's output (read with tap-parser)",
    });
    expect(ids(green)).toEqual([
      'passed adds > should be strictly equal',
      'passed sums > one and one',
    ]);
    repo.write('test/sum.js', TAPE_TEST(3));
    const red = await run(repo);
    expect(log(red)).toMatch(/^# tests 2\n# pass {2}1\n# fail {2}1$/m);
    expect(red).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      exit_code: 1,
      counts: { total: 2, passed: 1, failed: 1 },
    });
    expect(red.tests[1]).toMatchObject({
      id: 'sums > one and one',
      status: 'failed',
      message: expect.stringContaining('expected: 3, actual: 2'),
    });
    expect(red.summary).toMatch(/not ok 2 one and one[\s\S]*expected: 3/);
  }, 300_000);

  it('node-tap: one result per assertion, as node-tap counts them, ids `file > test > assertion`', async () => {
    const repo = project({
      'package.json': npmProject('tap --disable-coverage'),
      'test/sum.js':
        "const t = require('tap');\nt.test('adds', async (t) => { t.equal(1 + 1, 2, 'one and one'); t.equal(2 + 2, 4, 'two and two'); });\n" +
        "t.test('breaks', async (t) => { t.equal(1 + 1, 3, 'one and one'); });\n",
    });
    linkPackages(repo, [['tap', NODE_TAP_VERSION]]);
    const data = await run(repo);
    expect(log(data)).toMatch(/^# \{ total: 3, pass: 2, fail: 1 \}$/m);
    expect(ids(data)).toEqual([
      'passed test/sum.js > adds > one and one',
      'passed test/sum.js > adds > two and two',
      'failed test/sum.js > breaks > one and one',
    ]);
    expect(data).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      counts: { total: 3, passed: 2, failed: 1 },
    });
    expect(data.tests[2].message).toMatch(/one and one[\s\S]*-3\n\+2/);
  }, 300_000);

  it("mocha's TAP reporter chosen by the script is kept, and read from the log", async () => {
    const repo = project({
      'package.json': npmProject('mocha --reporter tap'),
      'test/sum.spec.js':
        "const assert = require('node:assert');\ndescribe('sum', () => {\n" +
        "  it('adds', () => assert.strictEqual(1 + 1, 2));\n  it('breaks', () => assert.strictEqual(1 + 1, 3));\n});\n",
    });
    linkPackages(repo, [['mocha', MOCHA_VERSION]]);
    const data = await run(repo);
    expect(data.command).toEqual(['npm', 'test']);
    expect(log(data)).toMatch(/^# tests 2\n# pass 1\n# fail 1$/m);
    expect(ids(data)).toEqual(['passed sum adds', 'failed sum breaks']);
    expect(data).toMatchObject({ status: 'failed', counts: { total: 2, passed: 1, failed: 1 } });
  }, 300_000);

  it('node --test --test-reporter tap: ids `suite > test`, suites not counted', async () => {
    const repo = project({
      'package.json': npmProject('node --test --test-reporter tap', { type: 'module' }),
      'test/sum.test.js':
        "import { describe, it, test } from 'node:test';\nimport assert from 'node:assert/strict';\n" +
        "describe('sum', () => { it('adds', () => assert.equal(1 + 1, 2)); it('breaks', () => assert.equal(1 + 1, 3)); });\n" +
        "test('top', () => {});\n",
    });
    const data = await run(repo);
    expect(log(data)).toMatch(/^# tests 3\n# suites 1\n# pass 2\n# fail 1$/m);
    expect(ids(data)).toEqual(['passed sum > adds', 'failed sum > breaks', 'passed top']);
    expect(data).toMatchObject({ status: 'failed', counts: { total: 3, passed: 2, failed: 1 } });
    expect(data.tests[1].message).toMatch(/2 !== 3/);
  }, 120_000);
});

describe("runners without a per-test format: counts and failures from the runner's own lines", () => {
  const UVU_TEST = (sum: number) =>
    "const { test } = require('uvu');\nconst assert = require('uvu/assert');\n" +
    "test('adds', () => { assert.is(1 + 1, 2); });\n" +
    `test('sums', () => { assert.is(1 + 1, ${sum}); });\n` +
    `test('doubles', () => { assert.is(2 * 2, ${sum * 2}); });\ntest.run();\n`;

  it('uvu: a passing suite passes (never no_tests); a failing one is a code failure naming each failing test', async () => {
    const repo = project({ 'package.json': npmProject('uvu test'), 'test/sum.js': UVU_TEST(2) });
    linkPackages(repo, [['uvu', UVU_VERSION]]);
    const green = await run(repo);
    expect(log(green)).toMatch(/Total: {5}3\n\s*Passed: {4}3\n\s*Skipped: {3}0/);
    expect(green).toMatchObject({
      status: 'passed',
      failure_class: 'none',
      tests_source: 'none',
      counts: { total: 3, passed: 3, failed: 0 },
    });
    repo.write('test/sum.js', UVU_TEST(3));
    const red = await run(repo);
    expect(log(red)).toMatch(/Total: {5}3\n\s*Passed: {4}1\n/);
    expect(red).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      exit_code: 1,
      counts: { total: 3, passed: 1, failed: 2 },
    });
    expect(red.summary).toMatch(/^Failing tests \(2\): sums; doubles\n\s*FAIL {2}"sums"/);
    expect(red.summary).toMatch(/Expected values to be strictly equal/);
  }, 300_000);

  const AVA_TEST =
    "const test = require('ava');\ntest('adds', (t) => { t.is(1 + 1, 2); });\n" +
    "test('sums', (t) => { t.is(1 + 1, 3); });\ntest('doubles', (t) => { t.is(2 * 2, 5); });\n";

  it('ava behind npm test gets --tap appended, or inserted in a chain: per-test ids; redirected, counts from its summary', async () => {
    const repo = project({ 'package.json': npmProject('ava'), 'test/sum.js': AVA_TEST });
    linkPackages(repo, [['ava', AVA_VERSION]]);
    const tap = await run(repo);
    expect(tap.command).toEqual(['npm', 'test', '--', '--tap']);
    expect(ids(tap)).toEqual(['passed adds', 'failed sums', 'failed doubles']);
    expect(tap).toMatchObject({ status: 'failed', counts: { total: 3, passed: 1, failed: 2 } });

    repo.write('package.json', npmProject('ava && echo done'));
    const chained = await run(repo);
    expect(chained.command).toEqual(['npm', 'test']);
    expect(ids(chained)).toEqual(ids(tap));
    expect(chained).toMatchObject({
      status: 'failed',
      exit_code: tap.exit_code,
      tests_source: "TAP in the run's output (read with tap-parser)",
    });
    expect(chained.env.notes.join('\n')).toContain('runs as `ava --tap && echo done`');

    // A redirection: arguments at the command's end would follow it, so nothing is inserted.
    repo.write('package.json', npmProject('ava 2>&1 && echo done'));
    const plain = await run(repo);
    expect(plain.command).toEqual(['npm', 'test']);
    expect(log(plain)).toMatch(/^\s*2 tests failed$/m);
    expect(plain).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      tests_source: 'none',
      counts: { total: 3, passed: 1, failed: 2 },
    });
    expect(plain.summary).toMatch(/^Failing tests \(2\): sums; doubles\n\s*sums\n/);
    expect(plain.summary).toMatch(/- 2\n\s*\+ 3/);
  }, 300_000);
});

/** Debian's python3-coverage (or pip's) importable by the interpreter tox.ini's commands would use. */
function coveragePython(): string | undefined {
  return ['python3', '/usr/bin/python3'].find(
    (python) => spawnSync(python, ['-c', 'import coverage']).status === 0,
  );
}

describe('wrappers: coverage, tox, chains and npm lifecycle steps', () => {
  it.skipIf(!coveragePython())(
    'unittest under `coverage run --source=… -m unittest discover` in tox.ini runs as unittest, counts as the raw run (skipped without python coverage)',
    async () => {
      const repo = project({
        'setup.cfg': '[metadata]\nname = calc\n',
        'tox.ini':
          '[tox]\nenvlist = py\n\n[testenv]\ndeps = coverage\n' +
          'commands =\n    coverage run --source=calc -m unittest discover\n',
        'calc/__init__.py': 'def add(a, b):\n    return a + b\n',
        'tests/__init__.py': '',
        'tests/test_calc.py':
          'import unittest\nfrom calc import add\n\nclass AddTest(unittest.TestCase):\n' +
          '    def test_adds(self):\n        self.assertEqual(add(1, 1), 2)\n' +
          '    def test_breaks(self):\n        self.assertEqual(add(1, 1), 3)\n',
      });
      // The raw run's coverage data goes to a scratch file: coverage.py deletes and rewrites its data
      // file, so `--data-file=/dev/null` made the machine's /dev/null a regular file (as root), and
      // later reads of /dev/null anywhere (rustc's stdin in a sandboxed cargo run) got junk.
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'coachgate-coverage-'));
      const raw = spawnSync(
        coveragePython()!,
        ['-m', 'coverage', 'run', `--data-file=${scratch}/data`, '-m', 'unittest', 'discover'],
        { cwd: repo.dir, encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
      );
      fs.rmSync(scratch, { recursive: true, force: true });
      expect(raw.stderr).toMatch(/^Ran 2 tests in .*\n\nFAILED \(failures=1\)$/m);
      const data = await run(repo);
      expect(data.detected_by).toBe('tox.ini runs coverage run -m unittest → unittest');
      expect(ids(data)).toEqual([
        'passed tests.test_calc.AddTest.test_adds',
        'failed tests.test_calc.AddTest.test_breaks',
      ]);
      expect(data).toMatchObject({
        status: 'failed',
        failure_class: 'code',
        exit_code: raw.status,
        counts: { total: 2, passed: 1, failed: 1 },
      });
    },
    120_000,
  );

  it('vitest behind toolchain.test (`npx vitest run`): reporter arguments appended to the command, per-test ids', async () => {
    const repo = project({
      '.guardkit/config.yaml': 'toolchain:\n  test: "npx vitest run"\n',
      'package.json': JSON.stringify({ type: 'module' }),
      'sum.test.js':
        "import { test, expect } from 'vitest';\ntest('adds', () => expect(1 + 1).toBe(2));\ntest('breaks', () => expect(1 + 1).toBe(3));\n",
      'vitest.config.js': 'export default {};\n',
    });
    execFileSync('ln', ['-s', path.resolve('node_modules'), path.join(repo.dir, 'node_modules')]);
    const data = await run(repo);
    expect(data.command.at(-1)).toMatch(/^npx vitest run --reporter=default --reporter=junit/);
    expect(ids(data)).toEqual(['passed sum.test.js > adds', 'failed sum.test.js > breaks']);
    expect(data.tests_source).toMatch(/vitest JUnit report/);
  }, 180_000);

  it('a chain `node --test && tsc --noEmit`: the tests pass, the type-check after them is blamed by its command', async () => {
    const repo = project({
      'package.json': npmProject('node --test && tsc --noEmit -p .', { type: 'module' }),
      // Without the linked node_modules' @types, tsc takes 2 s here instead of 8.
      'tsconfig.json': JSON.stringify({
        compilerOptions: { strict: true, skipLibCheck: true, types: [] },
        include: ['src'],
      }),
      'src/greet.ts': 'export const greeting: number = "hello";\n',
      'test/greet.test.js': "import test from 'node:test';\ntest('runs', () => {});\n",
    });
    execFileSync('ln', ['-s', path.resolve('node_modules'), path.join(repo.dir, 'node_modules')]);
    const data = await run(repo);
    expect(ids(data)).toEqual(['passed runs']);
    expect(data).toMatchObject({ status: 'failed', failure_class: 'lint', exit_code: 2 });
    expect(data.advice).toContain('the `tsc --noEmit -p .` command');
    expect(data.advice).toMatch(/src\/greet\.ts\(1,14\): error TS2322/);
  }, 120_000);

  it('a posttest `npm audit` that cannot reach its registry is environment, named as the posttest step (the passing pretest linter is not blamed)', async () => {
    const repo = project({
      'package.json': JSON.stringify({
        name: 'demo',
        version: '1.0.0',
        dependencies: { 'left-pad': '1.3.0' },
        scripts: {
          pretest: 'node -e "console.log(\'Found 0 errors.\')"',
          test: 'node --test',
          posttest: 'npm audit --registry=http://registry.invalid/',
        },
      }),
      // A lockfile naming a dependency, so npm audit has something to ask the registry about.
      'package-lock.json': JSON.stringify({
        name: 'demo',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'demo', version: '1.0.0', dependencies: { 'left-pad': '1.3.0' } },
          'node_modules/left-pad': { version: '1.3.0', license: 'WTFPL' },
        },
      }),
      'test/greet.test.mjs': "import test from 'node:test';\ntest('greets', () => {});\n",
    });
    const data = await run(repo);
    // ENOTFOUND on the host; EAI_AGAIN in the sandbox, whose network namespace has no resolver.
    expect(log(data)).toMatch(/(?:ENOTFOUND|EAI_AGAIN) registry\.invalid/);
    expect(ids(data)).toEqual(['passed greets']);
    expect(data).toMatchObject({ status: 'failed', failure_class: 'environment', exit_code: 1 });
    expect(data.advice).toMatch(
      /^The `posttest` step \(`npm audit --registry=http:\/\/registry\.invalid\/`\) needs the network/,
    );
    expect(data.advice).not.toMatch(/pretest|lint/);
  }, 120_000);
});

describe('chains: npm-run-all and a runner in the middle of `lint && runner && typecheck`', () => {
  const steppedManifest = (test: string) =>
    JSON.stringify({
      name: 'demo',
      version: '1.0.0',
      type: 'module',
      scripts: { test, lint: 'eslint src', unit: 'vitest run', typecheck: 'tsc --noEmit -p .' },
    });

  /** A two-test project whose test script runs eslint, vitest and tsc steps. */
  function steppedProject(test: string) {
    const repo = project({
      'package.json': steppedManifest(test),
      'eslint.config.js':
        "export default [{ files: ['src/**/*.js'], rules: { 'no-unused-vars': 'error' } }];\n",
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          strict: true,
          allowJs: true,
          checkJs: true,
          noEmit: true,
          module: 'nodenext',
          skipLibCheck: true,
        },
        include: ['src'],
      }),
      'vitest.config.js': 'export default {};\n',
      'src/sum.js':
        '/** @param {number} a @param {number} b */\nexport const add = (a, b) => a + b;\n',
      'src/sum.test.js': SUM_TEST(4),
    });
    linkPackages(repo, [
      ['npm-run-all2', NPM_RUN_ALL_VERSION],
      ['eslint', ESLINT_VERSION],
      ['vitest', VITEST_VERSION],
      ['typescript', TYPESCRIPT_VERSION],
    ]);
    return repo;
  }
  const SUM_TEST = (doubled: number) =>
    "import { test, expect } from 'vitest';\nimport { add } from './sum.js';\n" +
    "test('adds', () => expect(add(1, 1)).toBe(2));\n" +
    `test('doubles', () => expect(add(2, 2)).toBe(${doubled}));\n`;
  const LINT_ERROR = 'const unused = 1;\n';
  const TYPE_ERROR = 'export const n = /** @type {number} */ ("x");\n';

  /** `doubles` failing: run_independent_tests gives ids, and counts and exit as `npm test` raw. */
  async function failingTestLikeRawRun(repo: TempRepo) {
    repo.write('src/sum.test.js', SUM_TEST(5));
    const raw = spawnSync('npm', ['test'], { cwd: repo.dir, encoding: 'utf8' });
    expect(stripAnsi(raw.stdout)).toMatch(/Tests {2}1 failed \| 1 passed \(2\)/);
    const data = await run(repo);
    expect(data.command).toEqual(['npm', 'test']);
    expect(ids(data)).toEqual([
      'passed src/sum.test.js > adds',
      'failed src/sum.test.js > doubles',
    ]);
    expect(data).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      exit_code: raw.status,
      counts: { total: 2, passed: 1, failed: 1 },
    });
    return data;
  }

  /** Each step failing in turn: lint before the tests, the tests, the type-check after them. */
  async function eachStepFailing(repo: TempRepo, lintStep: RegExp, typecheckStep: RegExp) {
    repo.write(
      'src/sum.js',
      `${fs.readFileSync(path.join(repo.dir, 'src/sum.js'), 'utf8')}${LINT_ERROR}`,
    );
    const lint = await run(repo);
    expect(log(lint)).toMatch(/✖ 1 problem \(1 error/);
    expect(lint).toMatchObject({ status: 'error', failure_class: 'lint', exit_code: 1 });
    expect(lint.counts.total).toBe(0);
    expect(lint.advice).toMatch(lintStep);
    expect(lint.advice).toContain("'unused' is assigned a value but never used");
    repo.git('checkout', '--', 'src/sum.js');

    repo.write('src/sum.test.js', SUM_TEST(5));
    const unit = await run(repo);
    expect(log(unit)).toMatch(/Tests {2}1 failed \| 1 passed \(2\)/);
    expect(unit).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      counts: { total: 2, passed: 1, failed: 1 },
    });
    expect(unit.summary).toMatch(
      /FAIL {2}src\/sum\.test\.js > doubles\nAssertionError: expected 4 to be 5/,
    );
    expect(unit.advice).toMatch(/src\/sum\.test\.js:4/);
    repo.git('checkout', '--', 'src/sum.test.js');

    repo.write('src/bad.js', TYPE_ERROR);
    const typecheck = await run(repo);
    expect(log(typecheck)).toMatch(/src\/bad\.js\(1,\d+\): error TS2352/);
    expect(typecheck).toMatchObject({
      status: 'failed',
      failure_class: 'lint',
      counts: { total: 2, passed: 2, failed: 0 },
    });
    expect(typecheck.advice).toMatch(typecheckStep);
    expect(typecheck.advice).toMatch(/src\/bad\.js\(1,\d+\): error TS2352/);
    expect(typecheck.advice).not.toMatch(/eslint|`lint`/);
    return { unit, typecheck };
  }

  it('run-s lint unit typecheck: counts as vitest prints them, each failing script named by npm', async () => {
    const repo = steppedProject('run-s lint unit typecheck');
    const green = await run(repo);
    expect(green.command).toEqual(['npm', 'test']);
    expect(log(green)).toMatch(/Tests {2}2 passed \(2\)/);
    expect(green).toMatchObject({
      status: 'passed',
      tests_source: 'none',
      counts: { total: 2, passed: 2, failed: 0 },
    });
    await eachStepFailing(
      repo,
      /^Fix what the `lint` step \(`eslint src`\) reports/,
      /^Fix what the `typecheck` step \(`tsc --noEmit -p \.`\) reports/,
    );
  }, 300_000);

  it('npm-run-all and run-p: the same counts, the failing type-check named as its script', async () => {
    const repo = steppedProject('npm-run-all lint unit typecheck');
    repo.write('src/bad.js', TYPE_ERROR);
    const serial = await run(repo);
    expect(serial).toMatchObject({ status: 'failed', counts: { total: 2, passed: 2 } });
    expect(serial.advice).toMatch(/^Fix what the `typecheck` step/);
    repo.write('package.json', steppedManifest('run-p lint unit'));
    repo.write('src/sum.test.js', SUM_TEST(5));
    const parallel = await run(repo);
    expect(parallel).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      counts: { total: 2, passed: 1, failed: 1 },
    });
    expect(parallel.summary).toMatch(/FAIL {2}src\/sum\.test\.js > doubles/);
  }, 300_000);

  it('npm run lint && npm run unit: the runner one script away gets its flags, ids and counts as the raw run', async () => {
    const repo = steppedProject('npm run lint && npm run unit && npm run typecheck');
    const data = await failingTestLikeRawRun(repo);
    expect(data.env.notes).toContainEqual(
      expect.stringMatching(/the script it runs runs as `vitest run --reporter=default /),
    );
    // npm announces each script as written.
    expect(log(data)).toContain('> vitest run\n');
  }, 300_000);

  it('eslint src && vitest run && tsc: vitest ids from the middle of the chain, counts as the raw run, each failing command named', async () => {
    const script = 'eslint src && vitest run && tsc --noEmit -p .';
    const repo = steppedProject(script);
    const data = await failingTestLikeRawRun(repo);
    expect(data.tests_source).toBe(
      "vitest JUnit report via arguments inserted after its command in the script's chain",
    );
    const rewritten = data.env.notes.find((note: string) =>
      note.includes('the test script runs as'),
    );
    expect(rewritten).toMatch(
      /^inserted after the vitest command of the chain: --reporter=default --reporter=junit --outputFile\.junit=\S+ --reporter=\S+\/coachgate-vitest-harness-reporter\.mjs --reporter=\S+\/coachgate-vitest-loaded\.mjs; the test script runs as `eslint src && vitest run --reporter=default --reporter=junit --outputFile\.junit=\S+ --reporter=\S+ --reporter=\S+ && tsc --noEmit -p \.` through npm_config_script_shell/,
    );
    // npm announces the script as written: the project's own line, not the rewritten one.
    expect(log(data)).toContain(`> ${script}\n`);
    repo.git('checkout', '--', 'src/sum.test.js');
    const { unit, typecheck } = await eachStepFailing(
      repo,
      /^Fix what the `eslint src` command reports/,
      /^Fix what the `tsc --noEmit -p \.` command reports/,
    );
    expect(ids(unit)).toEqual([
      'passed src/sum.test.js > adds',
      'failed src/sum.test.js > doubles',
    ]);
    // The type-check after the tests fails the run, the tests' ids kept.
    expect(ids(typecheck)).toEqual([
      'passed src/sum.test.js > adds',
      'passed src/sum.test.js > doubles',
    ]);
  }, 300_000);
});
