import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { repinBase } from '../../src/actions/task-scope.js';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { processesWith } from '../helpers/processes.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import {
  corepackHomeWith,
  installedPackage,
  JEST_VERSION,
  MOCHA_VERSION,
  PACKAGE_MANAGERS,
  packageManagerBinDirectory,
} from '../helpers/runners.js';
import { loginShellProgram } from '../../src/runner/platform.js';
import { stripAnsi } from '../../src/runner/report/text.js';
import { EXIT_STATUS_SOURCE } from '../../src/runner/exit-status.js';

let repos: TempRepo[] = [];
afterEach(() => {
  repos.forEach((repo) => repo.remove());
  repos = [];
});

function project(files: Record<string, string>): TempRepo {
  const repo = makeRepo({ '.gitignore': '.venv/\nnode_modules/\n', ...files });
  repos.push(repo);
  return repo;
}

async function run(repo: TempRepo, args: Record<string, unknown> = {}) {
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    return await callTool(client, 'run_independent_tests', {
      worktree: repo.dir,
      task_id: 'TASK-1',
      ...args,
    });
  } finally {
    await close();
  }
}

/** tox on PATH, and pytest importable by the Python tox runs under (its environments see that site-packages). */
function toxWithPytest(): boolean {
  const tox = spawnSync('sh', ['-c', 'command -v tox'], { encoding: 'utf8' }).stdout.trim();
  if (!tox) return false;
  const shebang = /^#!\s*(\S+)/.exec(readFileSync(tox, 'utf8').split('\n')[0] ?? '')?.[1];
  return !!shebang && spawnSync(shebang, ['-c', 'import pytest']).status === 0;
}

type RunData = Record<string, any>; // a tool's structuredContent, as dataOf returns it

const ids = (data: RunData) =>
  (data.tests as { id: string; status: string }[]).map((test) => `${test.status} ${test.id}`);

/** A jest suite with one passing and one failing test, run behind npm and yarn. */
const JEST_SUM_TEST =
  "describe('sum', () => {\n  test('adds', () => expect(1 + 1).toBe(2));\n  test('breaks', () => expect(1 + 1).toBe(3));\n});\n";

/** What a run of JEST_SUM_TEST behind `wrapper` reports: jest's JSON report, appended to the script. */
function expectJestSumRun(data: RunData, wrapper: string[]): void {
  expect(data.command).toEqual([
    ...wrapper,
    '--json',
    expect.stringMatching(/^--outputFile=.*wrapped-jest\.json$/),
  ]);
  expect(ids(data)).toEqual([
    'passed sum.test.js > sum > adds',
    'failed sum.test.js > sum > breaks',
  ]);
  expect(data).toMatchObject({
    status: 'failed',
    failure_class: 'code',
    counts: { total: 2, passed: 1, failed: 1 },
  });
  expect(data.tests_source).toMatch(/jest JSON report/);
}

const PASSING =
  'from app.greet import greet\n\ndef test_greets():\n    assert greet("Ada") == "Hello, Ada!"\n';

describe('run_independent_tests with pytest', () => {
  it('passes a green suite, stores the run and its log, and reports per-test ids', async () => {
    const repo = project({
      'pyproject.toml': '[project]\nname = "demo"\n',
      'app/__init__.py': '',
      'app/greet.py': 'def greet(n):\n    return f"Hello, {n}!"\n',
      'tests/test_greet.py': PASSING,
    });
    const result = await run(repo);
    const data = dataOf(result);
    expect(data).toMatchObject({
      status: 'passed',
      failure_class: 'none',
      exit_code: 0,
      tree_clean: true,
      detected_by: 'pyproject.toml → pytest',
    });
    // python3 <report dir>/coachgate_pytest.py <report> …: pytest.main with coachgate's plugin.
    expect(data.command[0]).toBe('python3');
    expect(path.basename(data.command[1]!)).toBe('coachgate_pytest.py');
    expect(data.tests).toEqual([{ id: 'tests/test_greet.py::test_greets', status: 'passed' }]);
    expect(data.tests_source).toBe("coachgate's pytest plugin (in-process, JSON lines)");
    expect(data.env.notes).toContain(
      "per-test results: coachgate's pytest plugin (in-process, JSON lines)",
    );
    expect(data.counts).toMatchObject({ total: 1, passed: 1, failed: 0 });
    const stored = JSON.parse(
      readFileSync(
        path.join(repo.dir, '.guardkit/autobuild/TASK-1/runs', `${data.run_id}.json`),
        'utf8',
      ),
    );
    expect(stored.tree_hash).toBe(data.tree_hash);
    expect(readFileSync(data.log_path, 'utf8')).toMatch(/1 passed/);
    expect(textOf(result)).toMatch(/^PASSED: 1 passed, 0 failed/);
    // The command as the user would type it; the record keeps the reporter wrapper that ran.
    expect(textOf(result)).toMatch(/ s \(\S*python3? -m pytest\)\./);
    expect(stored.command[1]).toMatch(/coachgate_pytest\.py$/);
  });

  it('puts the first assertion error and the result line in the summary', async () => {
    const repo = project({
      'app/__init__.py': '',
      'app/greet.py': 'def greet(n):\n    return f"Hi, {n}"\n',
      'tests/test_greet.py': PASSING,
    });
    const data = dataOf(await run(repo));
    expect(data.status).toBe('failed');
    expect(data.failure_class).toBe('code');
    expect(data.summary).toMatch(/E\s+AssertionError|E\s+assert 'Hi, Ada' == 'Hello, Ada!'/);
    expect(data.summary).toMatch(/1 failed/);
    expect(data.summary.length).toBeLessThanOrEqual(1500);
    expect(data.tests[0]).toMatchObject({
      id: 'tests/test_greet.py::test_greets',
      status: 'failed',
    });
  });

  it('never reads zero collected tests as a pass', async () => {
    const repo = project({
      'pytest.ini': '[pytest]\n',
      'tests/test_nothing.py': '# no tests yet\n',
    });
    const data = dataOf(await run(repo));
    expect(data).toMatchObject({ status: 'no_tests', failure_class: 'no_tests', exit_code: 5 });
  });

  it('classifies a refused database connection as infrastructure with specific advice', async () => {
    const repo = project({
      'tests/test_db.py':
        'import socket\n\ndef test_db():\n    socket.create_connection(("127.0.0.1", 9), timeout=2)\n',
    });
    const data = dataOf(await run(repo));
    expect(data.failure_class).toBe('infrastructure');
    expect(data.summary).toMatch(/ConnectionRefusedError/);
    expect(data.advice).toMatch(/mock|SQLite|integration/i);
  });

  it('calls a missing first-party module a code failure, not infrastructure', async () => {
    const repo = project({
      'app/__init__.py': '',
      'tests/test_user.py':
        'from app.services.user import create\n\ndef test_create():\n    assert create()\n',
    });
    const data = dataOf(await run(repo));
    expect(data.failure_class).toBe('code');
    expect(data.summary).toMatch(/app\.services/);
  });

  it("uses the project's virtualenv interpreter (a module that exists only in .venv)", async () => {
    const repo = project({
      'tests/test_venv.py':
        'import venvonly\n\ndef test_venv():\n    assert venvonly.VALUE == 42\n',
    });
    execFileSync('python3', ['-m', 'venv', '--system-site-packages', '.venv'], { cwd: repo.dir });
    const site = execFileSync(
      path.join(repo.dir, '.venv/bin/python'),
      ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
      { encoding: 'utf8' },
    ).trim();
    execFileSync('sh', ['-c', `echo 'VALUE = 42' > ${site}/venvonly.py`]);
    const data = dataOf(await run(repo));
    expect(data.status).toBe('passed');
    expect(data.command[0]).toBe(path.join(repo.dir, '.venv/bin/python'));
    expect(data.env.interpreter).toBe(path.join(repo.dir, '.venv/bin/python'));
    expect(data.env.notes.join(' ')).toMatch(/virtualenv \.venv/);
  });

  it('kills a hanging run and its grandchildren (also one that left the process group) on timeout', async () => {
    const repo = project({
      // Told apart by their arguments: inside the sandbox's PID namespace their pids mean nothing here.
      'tests/test_hang.py': [
        'import subprocess, time',
        'def test_hang():',
        `    subprocess.Popen(["sleep", "300.${process.pid}"])`,
        `    subprocess.Popen(["sleep", "301.${process.pid}"], start_new_session=True)`,
        '    time.sleep(300)',
      ].join('\n'),
    });
    const data = dataOf(await run(repo, { timeout_s: 3 }));
    expect(data).toMatchObject({ status: 'timeout', timed_out: true, failure_class: 'timeout' });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(processesWith(`.${process.pid}`)).toEqual([]);
  });

  it('reports a run that writes into the tree as tree_clean: false', async () => {
    const repo = project({
      'tests/test_write.py':
        'import pathlib\n\ndef test_write():\n    pathlib.Path("generated.txt").write_text("x")\n    assert True\n',
    });
    const result = await run(repo);
    expect(dataOf(result).tree_clean).toBe(false);
    expect(textOf(result)).toMatch(/changed files in the worktree/);
  });

  it('keeps memory bounded while a suite prints 150 MB, with the full output in the log', async () => {
    const repo = project({
      'pytest.ini': '[pytest]\naddopts = -s\n',
      'tests/test_loud.py':
        'import sys\n\ndef test_loud():\n    line = "x" * 99 + "\\n"\n    for _ in range(1_500_000):\n        sys.stdout.write(line)\n    assert False, "the real error"\n',
    });
    let peak = 0;
    const baseline = process.memoryUsage().rss;
    const sampler = setInterval(
      () => (peak = Math.max(peak, process.memoryUsage().rss - baseline)),
      50,
    );
    const data = dataOf(await run(repo, { timeout_s: 120 }));
    clearInterval(sampler);
    expect(data.output_bytes).toBeGreaterThan(150_000_000);
    expect(statSync(data.log_path).size).toBe(data.output_bytes);
    expect(data.summary).toMatch(/the real error/);
    expect(peak).toBeLessThan(64 * 1024 * 1024);
  }, 120_000);

  it('splits failures into new and pre-existing against the base commit', async () => {
    const repo = project({
      'tests/test_math.py':
        'def test_old_bug():\n    assert 1 == 2\n\ndef test_add():\n    assert 1 + 1 == 2\n',
    });
    repo.git('checkout', '-q', '-b', 'feature');
    repo.write(
      'tests/test_math.py',
      'def test_old_bug():\n    assert 1 == 2\n\ndef test_add():\n    assert 1 + 1 == 3\n',
    );
    const first = dataOf(await run(repo, { compare_baseline: true }));
    expect(first.baseline).toMatchObject({
      status: 'failed',
      cached: false,
      new_failures: ['tests/test_math.py::test_add'],
      preexisting_failures: ['tests/test_math.py::test_old_bug'],
    });
    const second = dataOf(await run(repo, { compare_baseline: true }));
    expect(second.baseline.cached).toBe(true);
    expect(repo.git('worktree', 'list').split('\n')).toHaveLength(1);
  });
});

describe('run_independent_tests with node', () => {
  it("runs node's test runner directly with a JUnit report, passing and failing", async () => {
    const repo = project({
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
      'test/greet.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('greets', () => assert.equal('Hello', 'Hello'));\n",
    });
    const greenResult = await run(repo);
    const green = dataOf(greenResult);
    expect(green).toMatchObject({
      status: 'passed',
      detected_by: 'package.json scripts.test (node --test) → node --test',
    });
    expect(green.tests.map((t: { id: string }) => t.id).join()).toMatch(/greets/);
    // The summary names the command as typed; the record keeps the reporters that ran.
    expect(textOf(greenResult)).toMatch(/ s \(node --test\)\. /);
    expect(green.command.join(' ')).toMatch(/--test-reporter=junit/);
    repo.write(
      'test/greet.test.js',
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('greets', () => assert.equal('Hi', 'Hello'));\n",
    );
    const red = dataOf(await run(repo));
    expect(red).toMatchObject({ status: 'failed', failure_class: 'code' });
    expect(red.summary).toMatch(/Expected values to be strictly equal|'Hi'/);
  });

  it('runs vitest from node_modules/.bin', async () => {
    const repo = project({
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }),
      'sum.test.js':
        "import { test, expect } from 'vitest';\ntest('adds', () => expect(1 + 1).toBe(2));\ntest('breaks', () => expect(1 + 1).toBe(3));\n",
      'vitest.config.js': 'export default {};\n',
    });
    execFileSync('ln', ['-s', path.resolve('node_modules'), path.join(repo.dir, 'node_modules')]);
    const result = await run(repo, { timeout_s: 120 });
    const data = dataOf(result);
    expect(data.command[0]).toBe('vitest');
    expect(textOf(result)).toMatch(/ s \(vitest run\)\. /);
    expect(data).toMatchObject({ status: 'failed', failure_class: 'code' });
    expect(data.counts).toMatchObject({ passed: 1, failed: 1 });
    expect(data.env.path_prefix).toEqual([path.join(repo.dir, 'node_modules/.bin')]);
  }, 120_000);
});

describe('run_independent_tests obtains per-test ids through wrappers', () => {
  const linkModules = (repo: TempRepo, prefix: string) =>
    execFileSync('ln', [
      '-s',
      path.join(prefix, 'node_modules'),
      path.join(repo.dir, 'node_modules'),
    ]);

  it('jest behind npm test: --json --outputFile appended, ids and counts as jest reports them', async () => {
    const repo = project({
      'package.json': JSON.stringify({ scripts: { test: 'jest' } }),
      'sum.test.js': JEST_SUM_TEST,
    });
    linkModules(repo, installedPackage('jest', JEST_VERSION));
    const data = dataOf(await run(repo, { timeout_s: 120 }));
    expectJestSumRun(data, ['npm', 'test', '--']);
    expect(data.tests[1].message).toMatch(/Expected: 3/);
    expect(data.summary).toMatch(
      /● sum › breaks[\s\S]*Expected: 3\n\s*Received: 2[\s\S]*at Object\.toBe \(sum\.test\.js:3:38\)/,
    );
  }, 180_000);

  it('mocha behind npm test: the xunit reporter writes the ids; a passing suite passes', async () => {
    const repo = project({
      'package.json': JSON.stringify({ scripts: { test: 'mocha' } }),
      'test/sum.spec.js':
        "const assert = require('node:assert');\ndescribe('sum', () => {\n  it('adds', () => assert.strictEqual(1 + 1, 2));\n  it('subtracts', () => assert.strictEqual(2 - 1, 1));\n});\n",
    });
    linkModules(repo, installedPackage('mocha', MOCHA_VERSION));
    const green = dataOf(await run(repo, { timeout_s: 120 }));
    expect(green).toMatchObject({ status: 'passed', counts: { total: 2, passed: 2, failed: 0 } });
    expect(ids(green)).toEqual(['passed sum > adds', 'passed sum > subtracts']);
    expect(green.tests_source).toMatch(/mocha xunit report/);
    repo.write(
      'test/sum.spec.js',
      "const assert = require('node:assert');\ndescribe('sum', () => {\n  it('adds', () => assert.strictEqual(1 + 1, 3));\n  it('subtracts', () => assert.strictEqual(2 - 1, 1));\n});\n",
    );
    const red = dataOf(await run(repo, { timeout_s: 120 }));
    expect(red).toMatchObject({ status: 'failed', counts: { total: 2, passed: 1, failed: 1 } });
    expect(red.tests[0]).toMatchObject({
      id: 'sum > adds',
      status: 'failed',
      message: expect.stringContaining('2 !== 3'),
    });
    expect(red.summary).toMatch(
      /^✖ sum > adds\nExpected values to be strictly equal:[\s\S]*2 !== 3/,
    );
    expect(red.summary).toMatch(/test\/sum\.spec\.js:3/);
  }, 180_000);

  it('vitest at the end of a lint-then-test script: reporter arguments appended, ids as a direct run', async () => {
    const repo = project({
      'package.json': JSON.stringify({
        type: 'module',
        scripts: { lint: 'node -e "process.exit(0)"', test: 'npm run lint && vitest run' },
      }),
      'sum.test.js':
        "import { test, expect } from 'vitest';\ntest('adds', () => expect(1 + 1).toBe(2));\ntest('breaks', () => expect(1 + 1).toBe(3));\n",
      'vitest.config.js': 'export default {};\n',
    });
    execFileSync('ln', ['-s', path.resolve('node_modules'), path.join(repo.dir, 'node_modules')]);
    const data = dataOf(await run(repo, { timeout_s: 120 }));
    expect(data.command.slice(0, 3)).toEqual(['npm', 'test', '--']);
    expect(ids(data)).toEqual(['passed sum.test.js > adds', 'failed sum.test.js > breaks']);
    expect(data.counts).toMatchObject({ total: 2, passed: 1, failed: 1 });
    expect(data.tests_source).toMatch(/vitest JUnit report/);
  }, 180_000);

  it('jest in the middle of `jest && npm run check:type:ts`: ids and counts as the raw run; a failing type-check after it named', async () => {
    const repo = project({
      'package.json': JSON.stringify({
        name: 'sum',
        version: '1.0.0',
        scripts: { test: 'jest && npm run check:type:ts', 'check:type:ts': 'tsc --noEmit -p .' },
      }),
      'tsconfig.json': JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, types: [] },
        include: ['src'],
      }),
      'src/greet.ts': 'export const greet = (name: string): string => `Hello, ${name}`;\n',
      'sum.test.js': JEST_SUM_TEST,
    });
    linkModules(repo, installedPackage('jest', JEST_VERSION));
    const raw = spawnSync('npm', ['test'], { cwd: repo.dir, encoding: 'utf8' });
    expect(raw.stderr).toMatch(/^Tests: +1 failed, 1 passed, 2 total$/m);
    const data = dataOf(await run(repo, { timeout_s: 120 }));
    expect(data.command).toEqual(['npm', 'test']);
    expect(ids(data)).toEqual([
      'passed sum.test.js > sum > adds',
      'failed sum.test.js > sum > breaks',
    ]);
    expect(data).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      exit_code: raw.status,
      counts: { total: 2, passed: 1, failed: 1 },
      tests_source:
        "jest JSON report via --json --outputFile inserted after its command in the script's chain",
    });
    expect(data.env.notes.join('\n')).toMatch(
      /the test script runs as `jest --json --outputFile=\S+wrapped-jest\.json && npm run check:type:ts`/,
    );

    // The tests pass and the type-check after them fails: the run fails, naming npm's script.
    repo.write('sum.test.js', JEST_SUM_TEST.replace('toBe(3)', 'toBe(2)'));
    repo.write('src/greet.ts', 'export const greet: string = 1;\n');
    const typecheck = dataOf(await run(repo, { timeout_s: 120 }));
    expect(ids(typecheck)).toEqual([
      'passed sum.test.js > sum > adds',
      'passed sum.test.js > sum > breaks',
    ]);
    expect(typecheck).toMatchObject({
      status: 'failed',
      failure_class: 'lint',
      exit_code: 2,
      counts: { total: 2, passed: 2, failed: 0 },
    });
    expect(typecheck.advice).toMatch(
      /^Fix what the `check:type:ts` step \(`tsc --noEmit -p \.`\) reports \(first: src\/greet\.ts\(1,14\): error TS2322/,
    );
  }, 180_000);

  it("toolchain.test with vitest inside its chain: the one line rewritten, vitest's arguments after its own", async () => {
    const repo = project({
      '.guardkit/config.yaml':
        'toolchain:\n  test: "echo \'lint && ok\' && vitest run --passWithNoTests && echo done"\n',
      'package.json': JSON.stringify({ type: 'module' }),
      'sum.test.js':
        "import { test, expect } from 'vitest';\ntest('adds', () => expect(1 + 1).toBe(2));\n",
      'vitest.config.js': 'export default {};\n',
    });
    execFileSync('ln', ['-s', path.resolve('node_modules'), path.join(repo.dir, 'node_modules')]);
    const data = dataOf(await run(repo, { timeout_s: 120 }));
    expect(data.command).toEqual([
      'sh',
      '-c',
      expect.stringMatching(
        /^echo 'lint && ok' && vitest run --passWithNoTests --reporter=default --reporter=junit --outputFile\.junit=\S+wrapped-vitest\.xml --reporter=\S+\/coachgate-vitest-harness-reporter\.mjs --reporter=\S+\/coachgate-vitest-loaded\.mjs && echo done$/,
      ),
    ]);
    expect(data).toMatchObject({
      status: 'passed',
      tests: [{ id: 'sum.test.js > adds', status: 'passed' }],
    });
    expect(readFileSync(data.log_path, 'utf8')).toMatch(/^lint && ok$[\s\S]*^done$/m);
  }, 180_000);

  it('node --test behind npm test with shell syntax: ids through NODE_OPTIONS, noted in env.notes', async () => {
    const repo = project({
      'package.json': JSON.stringify({
        type: 'module',
        scripts: { test: 'echo checking && node --test' },
      }),
      'test/greet.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('greets', () => assert.equal('Hello', 'Hello'));\n",
    });
    const data = dataOf(await run(repo));
    expect(data).toMatchObject({
      status: 'passed',
      command: ['npm', 'test'],
      tests: [{ id: 'greets', status: 'passed' }],
    });
    expect(data.tests_source).toMatch(/NODE_OPTIONS/);
    expect(data.env.notes.join('\n')).toMatch(
      /coachgate adds PYTEST_ADDOPTS, NODE_OPTIONS, TOX_TESTENV_PASSENV:/,
    );
  });

  it('a script choosing its own node reporter is left alone: its TAP output gives the ids', async () => {
    const repo = project({
      'package.json': JSON.stringify({
        type: 'module',
        scripts: { test: 'node --test --test-reporter=tap' },
      }),
      'test/greet.test.js': "import test from 'node:test';\ntest('greets', () => {});\n",
    });
    const data = dataOf(await run(repo));
    expect(data).toMatchObject({
      status: 'passed',
      command: ['npm', 'test'],
      tests_source: "TAP in the run's output (read with tap-parser)",
      tests: [{ id: 'greets', status: 'passed' }],
      counts: { total: 1, passed: 1 },
    });
  });

  it('toolchain.test wrapping pytest: ids through PYTEST_ADDOPTS, equal to a direct run', async () => {
    const repo = project({
      '.guardkit/config.yaml': 'toolchain:\n  test: "echo start && python3 -m pytest -q tests"\n',
      'tests/test_math.py':
        'def test_adds():\n    assert 1 + 1 == 2\n\ndef test_breaks():\n    assert 1 + 1 == 3\n',
    });
    const data = dataOf(await run(repo));
    expect(ids(data)).toEqual([
      'passed tests/test_math.py::test_adds',
      'failed tests/test_math.py::test_breaks',
    ]);
    expect(data).toMatchObject({
      status: 'failed',
      command: ['sh', '-c', 'echo start && python3 -m pytest -q tests'],
      counts: { total: 2, passed: 1, failed: 1 },
    });
    expect(data.tests_source).toMatch(/PYTEST_ADDOPTS/);
  });

  const MATH_TESTS =
    'def test_adds():\n    assert 1 + 1 == 2\n\ndef test_breaks():\n    assert 1 + 1 == 3\n';
  const MATH_IDS = [
    'passed tests/test_math.py::test_adds',
    'failed tests/test_math.py::test_breaks',
  ];

  it('toolchain.test "make test" wrapping pytest: ids through PYTEST_ADDOPTS, as the raw run counts them', async () => {
    const repo = project({
      '.guardkit/config.yaml': 'toolchain:\n  test: make test\n',
      Makefile: 'test:\n\tpython3 -m pytest -q tests\n',
      'tests/test_math.py': MATH_TESTS,
    });
    const raw = spawnSync('make', ['test'], { cwd: repo.dir, encoding: 'utf8' });
    expect(raw.stdout).toMatch(/^1 failed, 1 passed in/m);
    const data = dataOf(await run(repo));
    expect(ids(data)).toEqual(MATH_IDS);
    expect(data).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      command: ['sh', '-c', 'make test'],
      detected_by: 'toolchain.test in .guardkit/config.yaml (base commit)',
      counts: { total: 2, passed: 1, failed: 1 },
    });
    expect(data.tests_source).toBe('pytest JUnit report via PYTEST_ADDOPTS=--junitxml');
    expect(data.env.notes.join('\n')).toMatch(/coachgate adds PYTEST_ADDOPTS/);
    expect(data.summary).toMatch(/assert \(1 \+ 1\) == 3[\s\S]*tests\/test_math\.py:5/);
  });

  it('toolchain.test "make test" wrapping node --test: ids through NODE_OPTIONS', async () => {
    const repo = project({
      '.guardkit/config.yaml': 'toolchain:\n  test: make test\n',
      Makefile: '.PHONY: test\ntest:\n\tnode --test\n',
      'package.json': JSON.stringify({ type: 'module' }),
      'test/math.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\n" +
        "test('adds', () => assert.equal(1 + 1, 2));\ntest('breaks', () => assert.equal(1 + 1, 3));\n",
    });
    const raw = spawnSync('make', ['test'], { cwd: repo.dir, encoding: 'utf8' });
    expect(raw.stdout).toMatch(/^(?:ℹ|#) pass 1$/m);
    expect(raw.stdout).toMatch(/^(?:ℹ|#) fail 1$/m);
    const data = dataOf(await run(repo));
    expect(ids(data)).toEqual(['passed adds', 'failed breaks']);
    expect(data).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      counts: { total: 2, passed: 1, failed: 1 },
    });
    expect(data.tests_source).toBe('node --test JUnit report via NODE_OPTIONS=--test-reporter');
    expect(data.summary).toMatch(/breaks[\s\S]*2 !== 3[\s\S]*test\/math\.test\.js:4/);
  });

  it.skipIf(!toxWithPytest())(
    'toolchain.test "tox" wrapping pytest: report variables passed through tox, ids as the raw run counts them (skipped when tox or pytest in its Python is missing)',
    async () => {
      const repo = project({
        '.gitignore': '.tox/\n',
        '.guardkit/config.yaml': 'toolchain:\n  test: tox\n',
        // No dependencies to install: the environment sees the interpreter's own pytest, so tox runs offline.
        'tox.ini':
          '[tox]\nenvlist = py\nskipsdist = true\n\n[testenv]\nsitepackages = true\n' +
          'commands = python -m pytest -q tests\n',
        'tests/test_math.py': MATH_TESTS,
      });
      const raw = spawnSync('tox', [], { cwd: repo.dir, encoding: 'utf8' });
      expect(raw.stdout).toMatch(/^1 failed, 1 passed in/m);
      const data = dataOf(await run(repo, { timeout_s: 120 }));
      expect(ids(data)).toEqual(MATH_IDS);
      expect(data).toMatchObject({
        status: 'failed',
        failure_class: 'code',
        exit_code: raw.status,
        counts: { total: 2, passed: 1, failed: 1 },
        tree_clean: true,
      });
      expect(data.tests_source).toBe('pytest JUnit report via PYTEST_ADDOPTS=--junitxml');
      expect(data.env.notes.join('\n')).toMatch(/TOX_TESTENV_PASSENV: .*passed through tox 3/);
    },
    180_000,
  );

  it('a command with no per-test report says tests_source "none"', async () => {
    const repo = project({
      '.guardkit/config.yaml': 'toolchain:\n  test: "echo \'1 passed in 0.01s\'"\n',
    });
    const data = dataOf(await run(repo));
    expect(data).toMatchObject({ tests_source: 'none', tests: [] });
  });
});

describe('run_independent_tests runs the runner the project uses', () => {
  it('a unittest project with load_tests() runs with unittest: the doctests it adds are counted, ids as unittest names them', async () => {
    const repo = project({
      Makefile: 'test:\n\tpython3 -m unittest discover -s tests -t .\n',
      'app/__init__.py': '',
      'app/greet.py':
        'def greet(name):\n    """\n    >>> greet("Ada")\n    \'Hello, Ada!\'\n    """\n    return f"Hello, {name}!"\n',
      'tests/__init__.py': '',
      'tests/test_greet.py': [
        'import doctest, unittest',
        'import app.greet',
        'from app.greet import greet',
        '',
        'def load_tests(loader, tests, ignore):',
        '    tests.addTests(doctest.DocTestSuite(app.greet))',
        '    return tests',
        '',
        'class GreetTest(unittest.TestCase):',
        '    def test_greets(self):',
        '        self.assertEqual(greet("Ada"), "Hello, Ada!")',
        '    def test_shouts(self):',
        '        self.assertEqual(greet("ADA"), "HELLO, ADA!")',
        '',
      ].join('\n'),
    });
    const raw = spawnSync('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], {
      cwd: repo.dir,
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(raw.stderr).toMatch(/^Ran 3 tests/m);
    const data = dataOf(await run(repo));
    expect(data.detected_by).toBe('Makefile runs python -m unittest → unittest');
    expect(data.tests).toEqual([
      { id: 'tests.test_greet.GreetTest.test_greets', status: 'passed' },
      {
        id: 'tests.test_greet.GreetTest.test_shouts',
        status: 'failed',
        message: expect.stringMatching(/^AssertionError: 'Hello, ADA!' != 'HELLO, ADA!'/),
      },
      { id: 'app.greet.greet', status: 'passed' },
    ]);
    expect(data).toMatchObject({
      status: 'failed',
      failure_class: 'code',
      counts: { total: 3, passed: 2, failed: 1 },
    });
    expect(data.summary).toMatch(/AssertionError: 'Hello, ADA!' != 'HELLO, ADA!'/);
    expect(data.summary).toMatch(/tests\/test_greet\.py", line 13/);
  });

  it("unittest's harness is checked after each test: code that bends assertEqual fails the run, named", async () => {
    const repo = project({
      Makefile: 'test:\n\tpython3 -m unittest discover -s tests -t .\n',
      'app/__init__.py': '',
      // Through computed names, so no static rule sees it; a pass for every comparison after it.
      'app/total.py': [
        'import unittest',
        "setattr(getattr(unittest, 'Test' + 'Case'), 'assert' + 'Equal', lambda *args: None)",
        '',
        'def total(values):',
        '    return sum(values) + 1',
        '',
      ].join('\n'),
      'tests/__init__.py': '',
      'tests/test_total.py': [
        'import unittest',
        '',
        'class TotalTest(unittest.TestCase):',
        '    def test_empty(self):',
        '        self.assertEqual(len([]), 0)',
        '    def test_total(self):',
        '        from app.total import total',
        '        self.assertEqual(total([1, 2]), 3)',
        '',
      ].join('\n'),
    });
    expectHarnessCase(
      dataOf(await run(repo)),
      ['tests.test_total.TotalTest.test_empty', 'tests.test_total.TotalTest.test_total'],
      /^replaced while tests\.test_total\.TotalTest\.test_total ran .*: unittest\.TestCase\.assertEqual\./,
    );
  });

  it("pytest's plugins are checked after each test: code that swaps in an outcome rewriter fails the run, named", async () => {
    const repo = project({
      'pytest.ini': '[pytest]\n',
      'app/__init__.py': '',
      // Found through gc, so no static rule sees it; in place of one of pytest's own plugins, so
      // pytest holds as many plugins as before, and every report after it reads "passed".
      'app/total.py': [
        'import gc',
        '',
        'class Passing:',
        '    def pytest_runtest_logreport(self, report):',
        "        report.outcome = 'passed'",
        '',
        'for found in gc.get_objects():',
        "    if type(found).__name__ == 'PytestPluginManager':",
        "        found.unregister(name='junitxml')",
        "        found.register(Passing(), name='junitxml')",
        '        break',
        '',
        'def total(values):',
        '    return sum(values) + 1',
        '',
      ].join('\n'),
      'tests/test_total.py': [
        'def test_empty():',
        '    assert len([]) == 0',
        '',
        'def test_total():',
        '    from app.total import total',
        '    assert total([1, 2]) == 3',
        '',
      ].join('\n'),
    });
    expectHarnessCase(
      dataOf(await run(repo)),
      ['tests/test_total.py::test_empty', 'tests/test_total.py::test_total'],
      /^registered with pytest while tests\/test_total\.py::test_total ran .*: app\/total\.py\./,
    );
  });

  /** A failed run: the tests that passed (whatever they assert), then the harness case, named. */
  function expectHarnessCase(data: Record<string, unknown>, passed: string[], message: RegExp) {
    expect(data.tests).toEqual([
      ...passed.map((id) => ({ id, status: 'passed' })),
      {
        id: 'coachgate: test harness changed',
        status: 'error',
        message: expect.stringMatching(message),
      },
    ]);
    expect(data.status).toBe('failed');
  }

  /**
   * Runs `body` with no pnpm on the server's PATH (npm puts this repository's node_modules/.bin, where
   * pnpm is a devDependency, on the tests' PATH) and `variables` set (undefined: removed).
   */
  async function withoutPnpm<T>(
    variables: Record<string, string | undefined>,
    body: () => Promise<T>,
  ): Promise<T> {
    const names = ['PATH', ...Object.keys(variables)];
    const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
    const unset = (name: string, value: string | undefined) =>
      value === undefined ? delete process.env[name] : (process.env[name] = value);
    process.env.PATH = saved
      .PATH!.split(path.delimiter)
      .filter((directory) => !directory.endsWith('node_modules/.bin'))
      .join(path.delimiter);
    for (const [name, value] of Object.entries(variables)) unset(name, value);
    try {
      return await body();
    } finally {
      for (const [name, value] of Object.entries(saved)) unset(name, value);
    }
  }

  const PNPM_PROJECT = {
    'package.json': JSON.stringify({
      type: 'module',
      packageManager: `pnpm@${PACKAGE_MANAGERS.pnpm.version}`,
      scripts: { lint: 'node -e "process.exit(0)"', test: 'pnpm lint && node --test' },
    }),
    'pnpm-lock.yaml': "lockfileVersion: '9.0'\n\nimporters:\n\n  .: {}\n",
    'test/greet.test.js':
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('greets', () => assert.equal('Hi', 'Hi'));\n",
  };

  it('a pnpm project without pnpm on PATH runs through corepack, which runs the declared release', async () => {
    const repo = project(PNPM_PROJECT);
    // corepack's cache in the temp directory, which the sandbox empties, as it empties the home.
    const home = mkdtempSync(path.join(os.tmpdir(), 'coachgate-corepack-'));
    try {
      corepackHomeWith('pnpm', home);
      const data = await withoutPnpm({ COREPACK_HOME: home }, async () =>
        dataOf(await run(repo, { timeout_s: 120 })),
      );
      expect(data.detected_by).toBe(
        `package.json scripts.test (pnpm lint && node --test) → pnpm test (packageManager pnpm@${PACKAGE_MANAGERS.pnpm.version})`,
      );
      // The nested `pnpm lint` runs too: corepack's shims are on the run's PATH.
      expect(data).toMatchObject({
        command: ['corepack', 'pnpm', 'test'],
        status: 'passed',
        exit_code: 0,
        tests: [{ id: 'greets', status: 'passed' }],
      });
      expect(data.env.notes).toContain(
        `pnpm is not on PATH: runs through corepack (pnpm@${PACKAGE_MANAGERS.pnpm.version}, from corepack's cache)`,
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 180_000);

  it("a pnpm project corepack cannot serve runs the pnpm of the project's devDependencies", async () => {
    const repo = project(PNPM_PROJECT);
    execFileSync('ln', ['-s', path.resolve('node_modules'), path.join(repo.dir, 'node_modules')]);
    const home = mkdtempSync(path.join(os.tmpdir(), 'coachgate-corepack-'));
    try {
      // An empty cache and a registry that refuses connections: corepack's download fails.
      const data = await withoutPnpm(
        { COREPACK_HOME: home, COREPACK_NPM_REGISTRY: 'http://127.0.0.1:9/' },
        async () => dataOf(await run(repo, { timeout_s: 120 })),
      );
      expect(data).toMatchObject({
        command: ['pnpm', 'test'],
        status: 'passed',
        tests: [{ id: 'greets', status: 'passed' }],
      });
      expect(data.env.notes.join('\n')).toMatch(
        /pnpm is not on PATH and corepack could not provide pnpm@[\d.]+ \(corepack install failed: .+\): runs the pnpm of the project's devDependencies \(node_modules\/\.bin\/pnpm\)/,
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('run_independent_tests with the package manager the project names', () => {
  /**
   * Runs `body` with the pinned package manager (and `binDirectories`) first on PATH (the in-process
   * server reads PATH per run) and an unreachable registry, so nothing is installed at test time: the
   * projects link cached installs.
   */
  async function withPackageManager<T>(
    name: keyof typeof PACKAGE_MANAGERS,
    body: () => Promise<T>,
    binDirectories: string[] = [],
  ): Promise<T> {
    const saved = { PATH: process.env.PATH, npm_config_registry: process.env.npm_config_registry };
    const bins = [packageManagerBinDirectory(name), ...binDirectories];
    process.env.PATH = [...bins, saved.PATH].join(path.delimiter);
    process.env.npm_config_registry = 'http://127.0.0.1:9/';
    try {
      return await body();
    } finally {
      for (const [variable, value] of Object.entries(saved))
        if (value === undefined) delete process.env[variable];
        else process.env[variable] = value;
    }
  }

  /** A pnpm project whose test script is `script`, one passing and one failing vitest test. */
  function pnpmVitestProject(script: string): TempRepo {
    const repo = project({
      'package.json': JSON.stringify({
        type: 'module',
        packageManager: `pnpm@${PACKAGE_MANAGERS.pnpm.version}`,
        scripts: { lint: 'node -e "process.exit(0)"', test: script },
      }),
      'pnpm-lock.yaml': "lockfileVersion: '9.0'\n\nimporters:\n\n  .: {}\n",
      'sum.test.js':
        "import { test, expect } from 'vitest';\ntest('adds', () => expect(1 + 1).toBe(2));\ntest('breaks', () => expect(1 + 1).toBe(3));\n",
      'vitest.config.js': 'export default {};\n',
    });
    execFileSync('ln', ['-s', path.resolve('node_modules'), path.join(repo.dir, 'node_modules')]);
    return repo;
  }

  it('pnpm test running `pnpm lint && vitest run`: vitest ids and counts as the raw run shows them', async () => {
    const repo = pnpmVitestProject('pnpm lint && vitest run');
    await withPackageManager('pnpm', async () => {
      const raw = spawnSync('pnpm', ['test'], {
        cwd: repo.dir,
        encoding: 'utf8',
        env: process.env,
      });
      const rawText = stripAnsi(raw.stdout);
      expect(rawText).toMatch(/Tests {2}1 failed \| 1 passed \(2\)/);
      expect(rawText).toMatch(/✓ adds[\s\S]*× breaks/);
      const data = dataOf(await run(repo, { timeout_s: 120 }));
      expect(data.detected_by).toBe(
        `package.json scripts.test (pnpm lint && vitest run) → pnpm test (packageManager pnpm@${PACKAGE_MANAGERS.pnpm.version})`,
      );
      expect(data.command).toEqual([
        'pnpm',
        'test',
        '--reporter=default',
        '--reporter=junit',
        expect.stringMatching(/^--outputFile\.junit=.*wrapped-vitest\.xml$/),
        expect.stringMatching(/^--reporter=.*\/coachgate-vitest-harness-reporter\.mjs$/),
        expect.stringMatching(/^--reporter=.*\/coachgate-vitest-loaded\.mjs$/),
      ]);
      expect(ids(data)).toEqual(['passed sum.test.js > adds', 'failed sum.test.js > breaks']);
      expect(data).toMatchObject({
        status: 'failed',
        failure_class: 'code',
        exit_code: raw.status,
        counts: { total: 2, passed: 1, failed: 1 },
      });
      expect(data.tests_source).toMatch(/vitest JUnit report via arguments appended/);
      expect(data.summary).toMatch(/breaks[\s\S]*expected 2 to be 3[\s\S]*sum\.test\.js:3:36/);
    });
  }, 180_000);

  it('pnpm test running `pnpm lint && vitest run && echo checked`: vitest ids from the middle of the chain', async () => {
    const script = 'pnpm lint && vitest run && echo checked';
    const repo = pnpmVitestProject(script);
    await withPackageManager('pnpm', async () => {
      const raw = spawnSync('pnpm', ['test'], {
        cwd: repo.dir,
        encoding: 'utf8',
        env: process.env,
      });
      expect(stripAnsi(raw.stdout)).toMatch(/Tests {2}1 failed \| 1 passed \(2\)/);
      const data = dataOf(await run(repo, { timeout_s: 120 }));
      expect(data.command).toEqual(['pnpm', 'test']);
      expect(ids(data)).toEqual(['passed sum.test.js > adds', 'failed sum.test.js > breaks']);
      expect(data).toMatchObject({
        status: 'failed',
        failure_class: 'code',
        exit_code: raw.status,
        counts: { total: 2, passed: 1, failed: 1 },
      });
      expect(data.tests_source).toMatch(/vitest JUnit report via arguments inserted/);
      // pnpm announces the script as written.
      expect(stripAnsi(readFileSync(data.log_path, 'utf8'))).toContain(`> ${script}\n`);
    });
  }, 180_000);

  it.each<{
    manager: keyof typeof PACKAGE_MANAGERS;
    release: string;
    files: Record<string, string>;
  }>([
    {
      manager: 'yarn',
      release: 'yarn 1',
      files: { 'yarn.lock': '# yarn lockfile v1\n\n\n' },
    },
    {
      manager: 'yarnBerry',
      release: 'yarn 4, "berry"',
      files: {
        '.yarnrc.yml':
          'nodeLinker: node-modules\nenableTelemetry: false\nnpmRegistryServer: "http://127.0.0.1:9/"\n',
        // Committed, as in any berry project: under CI=true yarn refuses to create a lockfile.
        'yarn.lock': [
          '# This file is generated by running "yarn install" inside your project.',
          '# Manual changes might be lost - proceed with caution!',
          '',
          '__metadata:',
          '  version: 10',
          '  cacheKey: 10c0',
          '',
          '"sum@workspace:.":',
          '  version: 0.0.0-use.local',
          '  resolution: "sum@workspace:."',
          '  languageName: unknown',
          '  linkType: soft',
          '',
        ].join('\n'),
      },
    },
  ])(
    'yarn test running jest ($release): jest ids and counts as the raw run shows them',
    async ({ manager, files }) => {
      const { version } = PACKAGE_MANAGERS[manager];
      const repo = project({
        'package.json': JSON.stringify({
          name: 'sum',
          packageManager: `yarn@${version}`,
          scripts: { test: 'jest' },
        }),
        ...files,
        'sum.test.js': JEST_SUM_TEST,
      });
      const jestBin = path.join(installedPackage('jest', JEST_VERSION), 'node_modules', '.bin');
      await withPackageManager(manager, async () => {
        // yarn 2+ runs scripts only in an installed project; with no dependencies nothing is fetched.
        if (manager === 'yarnBerry')
          execFileSync('yarn', ['install'], { cwd: repo.dir, stdio: 'ignore' });
        const raw = spawnSync('yarn', ['test'], {
          cwd: repo.dir,
          encoding: 'utf8',
          env: process.env,
        });
        expect(raw.stderr).toMatch(/^Tests: +1 failed, 1 passed, 2 total$/m);
        expect(raw.stderr).toMatch(/✓ adds[\s\S]*✕ breaks/);
        const data = dataOf(await run(repo, { timeout_s: 120 }));
        expect(data.detected_by).toBe(
          `package.json scripts.test (jest) → yarn test (packageManager yarn@${version})`,
        );
        expectJestSumRun(data, ['yarn', 'test']);
        expect(data.exit_code).toBe(raw.status);
        expect(data.summary).toMatch(/● sum › breaks[\s\S]*Expected: 3\n\s*Received: 2/);
      }, [jestBin]);
    },
    180_000,
  );
});

describe('run_independent_tests reads the report files a runner writes itself', () => {
  const M2 = path.join(os.homedir(), '.m2', 'repository');
  const mavenOffline =
    spawnSync('mvn', ['-v']).status === 0 &&
    [
      'org/apache/maven/plugins/maven-surefire-plugin/3.2.5',
      'org/apache/maven/plugins/maven-compiler-plugin/3.13.0',
      'org/apache/maven/plugins/maven-resources-plugin/3.3.1',
      'org/junit/jupiter/junit-jupiter-engine/5.11.4',
    ].every((artifact) => existsSync(path.join(M2, artifact)));
  const plugin = (name: string, version: string) =>
    `<plugin><artifactId>${name}</artifactId><version>${version}</version></plugin>`;
  const POM = [
    '<project xmlns="http://maven.apache.org/POM/4.0.0">',
    '<modelVersion>4.0.0</modelVersion>',
    '<groupId>demo</groupId><artifactId>demo</artifactId><version>1.0</version>',
    '<properties><maven.compiler.release>17</maven.compiler.release>',
    '<project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>',
    '<dependencies><dependency><groupId>org.junit.jupiter</groupId>',
    '<artifactId>junit-jupiter-engine</artifactId><version>5.11.4</version><scope>test</scope>',
    '</dependency></dependencies>',
    '<build><plugins>',
    plugin('maven-resources-plugin', '3.3.1'),
    plugin('maven-compiler-plugin', '3.13.0'),
    plugin('maven-surefire-plugin', '3.2.5'),
    '</plugins></build></project>',
    '',
  ].join('\n');

  it.skipIf(!mavenOffline)(
    'a real Maven project (offline from ~/.m2): ids from target/surefire-reports, as the raw run counts them (skipped without mvn or the cached plugins)',
    async () => {
      const repo = project({
        '.gitignore': 'target/\n',
        // The project's own Maven settings: offline, everything comes from ~/.m2.
        '.mvn/maven.config': '-o\n',
        'pom.xml': POM,
        'src/main/java/demo/Sum.java':
          'package demo;\npublic class Sum {\n  public static int add(int a, int b) { return a + b; }\n}\n',
        'src/test/java/demo/SumTest.java': [
          'package demo;',
          'import static org.junit.jupiter.api.Assertions.assertEquals;',
          'import org.junit.jupiter.api.Test;',
          'class SumTest {',
          '  @Test void adds() { assertEquals(2, Sum.add(1, 1)); }',
          '  @Test void breaks() { assertEquals(3, Sum.add(1, 1)); }',
          '}',
          '',
        ].join('\n'),
      });
      const raw = spawnSync('mvn', ['-q', 'test'], { cwd: repo.dir, encoding: 'utf8' });
      expect(stripAnsi(raw.stdout)).toMatch(/Tests run: 2, Failures: 1, Errors: 0, Skipped: 0/);
      const data = dataOf(await run(repo, { timeout_s: 240 }));
      expect(data).toMatchObject({
        detected_by: 'pom.xml → mvn -q test',
        command: ['mvn', '-q', 'test'],
        status: 'failed',
        failure_class: 'code',
        exit_code: raw.status,
        counts: { total: 2, passed: 1, failed: 1 },
        tests_source:
          'Maven Surefire reports written by the run (target/surefire-reports/TEST-*.xml)',
        tree_clean: true,
      });
      expect(data.tests).toEqual([
        {
          id: 'demo.SumTest#breaks',
          status: 'failed',
          message: expect.stringMatching(
            /^org\.opentest4j\.AssertionFailedError: expected: <3> but was: <2>/,
          ),
        },
        { id: 'demo.SumTest#adds', status: 'passed' },
      ]);
    },
    300_000,
  );

  it("a surefire report left by an earlier build is not this run's: the command is its one test", async () => {
    const repo = project({
      '.gitignore': 'target/\n',
      '.guardkit/config.yaml': 'toolchain:\n  test: "echo \'Tests run: 1, Failures: 0\'"\n',
      'target/surefire-reports/TEST-demo.OldTest.xml':
        '<testsuite name="demo.OldTest" tests="1"><testcase name="old" classname="demo.OldTest"/></testsuite>\n',
    });
    const old = new Date(Date.now() - 60_000);
    utimesSync(path.join(repo.dir, 'target/surefire-reports/TEST-demo.OldTest.xml'), old, old);
    const data = dataOf(await run(repo));
    // No report of this run and no per-test output: the command speaks by its exit status alone.
    expect(data).toMatchObject({
      tests_source: EXIT_STATUS_SOURCE,
      tests: [{ id: "echo 'Tests run: 1, Failures: 0'", status: 'passed' }],
    });
  });

  /** What `dotnet test --logger trx` writes for an xUnit project (dotnet is not installed here). */
  const TRX = `<?xml version="1.0" encoding="utf-8"?>
<TestRun id="7c1f0d8e-1b2a-4a57-9d3e-2f7c3f9a1b11" name="ci@vm 2026-11-23 13:00:00" xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">
  <Results>
    <UnitTestResult executionId="a1" testId="t1" testName="Demo.Tests.SumTests.Adds" computerName="vm" duration="00:00:00.0010000" outcome="Passed" testType="13cdc9d9-ddb5-4fa4-a97d-d965ccfc6d4b" testListId="8c84fa94-04c1-424b-9868-57a2d4851a1d" />
    <UnitTestResult executionId="a2" testId="t2" testName="Demo.Tests.SumTests.Breaks" computerName="vm" duration="00:00:00.0040000" outcome="Failed" testType="13cdc9d9-ddb5-4fa4-a97d-d965ccfc6d4b" testListId="8c84fa94-04c1-424b-9868-57a2d4851a1d">
      <Output>
        <ErrorInfo>
          <Message>Assert.Equal() Failure: Values differ
Expected: 3
Actual:   2</Message>
          <StackTrace>   at Demo.Tests.SumTests.Breaks() in /src/Demo.Tests/SumTests.cs:line 12</StackTrace>
        </ErrorInfo>
      </Output>
    </UnitTestResult>
    <UnitTestResult executionId="a3" testId="t3" testName="Demo.Tests.SumTests.Later" computerName="vm" duration="00:00:00" outcome="NotExecuted" testType="13cdc9d9-ddb5-4fa4-a97d-d965ccfc6d4b" testListId="8c84fa94-04c1-424b-9868-57a2d4851a1d" />
  </Results>
  <TestDefinitions>
    <UnitTest name="Demo.Tests.SumTests.Adds" storage="/src/demo.tests.dll" id="t1"><Execution id="a1" /><TestMethod codeBase="/src/Demo.Tests.dll" adapterTypeName="executor://xunit/VsTestRunner2/netcoreapp" className="Demo.Tests.SumTests" name="Adds" /></UnitTest>
    <UnitTest name="Demo.Tests.SumTests.Breaks" storage="/src/demo.tests.dll" id="t2"><Execution id="a2" /><TestMethod codeBase="/src/Demo.Tests.dll" adapterTypeName="executor://xunit/VsTestRunner2/netcoreapp" className="Demo.Tests.SumTests" name="Breaks" /></UnitTest>
    <UnitTest name="Demo.Tests.SumTests.Later" storage="/src/demo.tests.dll" id="t3"><Execution id="a3" /><TestMethod codeBase="/src/Demo.Tests.dll" adapterTypeName="executor://xunit/VsTestRunner2/netcoreapp" className="Demo.Tests.SumTests" name="Later" /></UnitTest>
  </TestDefinitions>
  <ResultSummary outcome="Failed"><Counters total="3" executed="2" passed="1" failed="1" error="0" /></ResultSummary>
</TestRun>
`;

  it('a dotnet TRX file written by the run under toolchain.test (dotnet is not installed: a command writes it)', async () => {
    const repo = project({
      '.gitignore': 'TestResults/\n',
      '.guardkit/config.yaml': 'toolchain:\n  test: sh fake-dotnet-test.sh\n',
      'fixtures/run.trx': TRX,
      'fake-dotnet-test.sh':
        'mkdir -p TestResults\ncp fixtures/run.trx TestResults/ci_vm_2026-11-23_13_00_00.trx\n' +
        'echo "Failed!  - Failed:     1, Passed:     1, Skipped:     1, Total:     3"\nexit 1\n',
    });
    const data = dataOf(await run(repo));
    expect(data.tests).toEqual([
      { id: 'Demo.Tests.SumTests.Adds', status: 'passed' },
      {
        id: 'Demo.Tests.SumTests.Breaks',
        status: 'failed',
        message: expect.stringMatching(
          /^Assert\.Equal\(\) Failure: Values differ\nExpected: 3\nActual: {3}2\n[\s\S]*SumTests\.cs:line 12/,
        ),
      },
      { id: 'Demo.Tests.SumTests.Later', status: 'skipped' },
    ]);
    expect(data).toMatchObject({
      status: 'failed',
      counts: { total: 3, passed: 1, failed: 1, skipped: 1 },
      tests_source: 'dotnet TRX report written by the run (*.trx)',
    });
  });
});

describe('run_independent_tests summaries lead with the first failing test', () => {
  const onPath = (program: string) => spawnSync(program, ['version']).error === undefined;

  it('pytest: the first failing test, its diff and tests/…py:line, in the summary and the advice', async () => {
    const repo = project({
      'app/__init__.py': '',
      'app/greet.py': 'def greet(name):\n    return f"Hi, {name}"\n',
      'tests/test_greet.py':
        'from app.greet import greet\n\ndef test_greets():\n    assert greet("Ada") == "Hello, Ada!"\n\n' +
        'def test_greets_bob():\n    assert greet("Bob") == "Hello, Bob!"\n',
    });
    const data = dataOf(await run(repo));
    expect(data.tests.map((test: { status: string }) => test.status)).toEqual(['failed', 'failed']);
    const [errorPart = ''] = data.summary.split('----- final result -----');
    expect(errorPart).toMatch(/^_+ test_greets _+$/m);
    expect(errorPart).not.toMatch(/test_greets_bob _/);
    expect(errorPart).toMatch(/E\s+AssertionError: assert 'Hi, Ada' == 'Hello, Ada!'/);
    expect(errorPart).toMatch(/E\s+- Hello, Ada!\nE\s+\+ Hi, Ada/);
    expect(errorPart).toMatch(/^tests\/test_greet\.py:4: AssertionError$/m);
    expect(data.advice).toMatch(
      /^The first failure is the test's assertion at tests\/test_greet\.py:4: fix the code under test/,
    );
  });

  it('pytest: a failure raised in the product names the product frame as the code to fix', async () => {
    const repo = project({
      'app/__init__.py': '',
      'app/greet.py': 'def greet(name):\n    return "Hello, " + name.title() + "!"\n',
      'tests/test_greet.py':
        'from app.greet import greet\n\ndef test_greets():\n    assert greet(None) == "Hello, !"\n',
    });
    const data = dataOf(await run(repo));
    expect(data.advice).toMatch(
      /^The first failure is the test's assertion at tests\/test_greet\.py:4; the code under test it reached is at app\/greet\.py:2\./,
    );
  });

  it.skipIf(!onPath('cargo'))(
    'cargo: the first failing test, left/right and src/…rs:line (skipped without cargo)',
    async () => {
      const repo = project({
        '.gitignore': 'target/\nCargo.lock\n',
        'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
        'src/lib.rs': [
          'pub fn add(a: u64, b: u64) -> u64 { a + b }',
          '',
          '#[cfg(test)]',
          'mod tests {',
          '    use super::*;',
          '    #[test]',
          '    fn it_adds() { assert_eq!(add(2, 2), 4); }',
          '    #[test]',
          '    fn it_doubles() { assert_eq!(add(2, 2), 5, "doubling is broken"); }',
          '}',
          '',
        ].join('\n'),
      });
      const data = dataOf(await run(repo, { timeout_s: 240 }));
      expect(data).toMatchObject({ status: 'failed', failure_class: 'code' });
      expect(data.tests).toContainEqual(
        expect.objectContaining({ id: 'tests::it_doubles', status: 'failed' }),
      );
      expect(data.summary).toMatch(
        /---- tests::it_doubles stdout ----\n[\s\S]*panicked at src\/lib\.rs:9:\d+:\nassertion `left == right` failed: doubling is broken\n\s*left: 4\n\s*right: 5/,
      );
      expect(data.advice).toMatch(/^Fix the code at src\/lib\.rs:9 /);
    },
    300_000,
  );

  it.skipIf(!onPath('go'))(
    'go: the first failing test, its message and the file by its project path (skipped without go)',
    async () => {
      const repo = project({
        'go.mod': 'module example.com/calc\n\ngo 1.19\n',
        'mathx/add.go': 'package mathx\n\nfunc Add(a, b int) int { return a + b }\n',
        'mathx/add_test.go': [
          'package mathx',
          '',
          'import "testing"',
          '',
          'func TestAdds(t *testing.T) {',
          '\tif got := Add(1, 1); got != 2 {',
          '\t\tt.Errorf("Add(1, 1) = %d, want 2", got)',
          '\t}',
          '}',
          '',
          'func TestDoubles(t *testing.T) {',
          '\tif got := Add(2, 2); got != 5 {',
          '\t\tt.Errorf("Add(2, 2) = %d, want 5", got)',
          '\t}',
          '}',
          '',
        ].join('\n'),
      });
      const raw = spawnSync('go', ['test', './...'], { cwd: repo.dir, encoding: 'utf8' });
      expect(raw.stdout).toMatch(/^\s+add_test\.go:13: Add\(2, 2\) = 4, want 5$/m);
      const data = dataOf(await run(repo, { timeout_s: 240 }));
      expect(data).toMatchObject({
        status: 'failed',
        failure_class: 'code',
        counts: { total: 2, passed: 1, failed: 1 },
        tests: [
          { id: 'example.com/calc/mathx/TestAdds', status: 'passed' },
          {
            id: 'example.com/calc/mathx/TestDoubles',
            status: 'failed',
            message: 'add_test.go:13: Add(2, 2) = 4, want 5',
          },
        ],
      });
      expect(data.summary).toMatch(
        /^=== RUN {3}TestDoubles\n\s+mathx\/add_test\.go:13: Add\(2, 2\) = 4, want 5\n--- FAIL: TestDoubles/m,
      );
      expect(data.summary).not.toContain('"Action"');
      expect(data.advice).toMatch(
        /^The first failure is the test's assertion at mathx\/add_test\.go:13/,
      );
    },
    300_000,
  );

  it.skipIf(!onPath('go'))(
    'go: a JSON stream larger than the output excerpt still lists every test (skipped without go)',
    async () => {
      const repo = project({
        'go.mod': 'module example.com/calc\n\ngo 1.19\n',
        'calc_test.go': [
          'package calc',
          '',
          'import (',
          '\t"fmt"',
          '\t"testing"',
          ')',
          '',
          'func TestMany(t *testing.T) {',
          '\tfor i := 0; i < 2000; i++ {',
          '\t\tt.Run(fmt.Sprintf("case_%04d", i), func(t *testing.T) { t.Log("a line of log") })',
          '\t}',
          '}',
          '',
        ].join('\n'),
      });
      const data = dataOf(await run(repo, { timeout_s: 240 }));
      // About 1.5 MB of JSON: the middle of it is outside the excerpt the server keeps.
      expect(data.output_bytes).toBeGreaterThan(1_000_000);
      expect(data).toMatchObject({
        status: 'passed',
        counts: { total: 2000, passed: 2000, failed: 0, errors: 0 },
      });
      expect(data.tests).toContainEqual({
        id: 'example.com/calc/TestMany/case_1000',
        status: 'passed',
      });
    },
    300_000,
  );
});

describe('run_independent_tests names a failing step inside the test command', () => {
  it('a type-check step failing inside npm test is failure_class "lint", with the step and the first error named', async () => {
    const repo = project({
      'package.json': JSON.stringify({
        type: 'module',
        scripts: { lint: 'tsc --noEmit -p .', test: 'npm run lint && node --test' },
      }),
      // Without the linked node_modules' @types, tsc takes 2 s here instead of 8.
      'tsconfig.json': JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, types: [] },
        include: ['src'],
      }),
      'src/greet.ts': 'export const greeting: number = "hello";\n',
      'test/greet.test.js': "import test from 'node:test';\ntest('runs', () => {});\n",
    });
    execFileSync('ln', ['-s', path.resolve('node_modules'), path.join(repo.dir, 'node_modules')]);
    const data = dataOf(await run(repo, { timeout_s: 120 }));
    expect(data).toMatchObject({ status: 'error', failure_class: 'lint', tests_source: 'none' });
    expect(data.advice).toContain('the `lint` step (`tsc --noEmit -p .`)');
    expect(data.advice).toMatch(/src\/greet\.ts\(1,14\): error TS2322/);
    expect(data.advice).not.toMatch(/not a code failure/i);
  }, 120_000);
});

describe('run_independent_tests never passes on a stale build', () => {
  const staleProject = (scripts: Record<string, string>) => {
    const repo = project({
      '.gitignore': 'dist/\n',
      'package.json': JSON.stringify({ type: 'module', main: 'dist/index.js', scripts }),
      'build.mjs':
        "import fs from 'node:fs';\nfs.mkdirSync('dist', { recursive: true });\nfs.copyFileSync('src/index.js', 'dist/index.js');\n",
      'src/index.js': 'export const greet = (name) => `Hi ${name}`;\n',
      'test/greet.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { greet } from '../dist/index.js';\ntest('greets', () => assert.equal(greet('Ada'), 'Hello, Ada!'));\n",
    });
    // The old build, then the Player's fix of the source, a minute newer.
    repo.write('dist/index.js', 'export const greet = (name) => `Hi ${name}`;\n');
    repo.write('src/index.js', 'export const greet = (name) => `Hello, ${name}!`;\n');
    const old = new Date(Date.now() - 60_000);
    const older = new Date(Date.now() - 120_000);
    utimesSync(path.join(repo.dir, 'dist/index.js'), old, old);
    utimesSync(path.join(repo.dir, 'build.mjs'), older, older);
    return repo;
  };

  it('rebuilds an ignored dist/ older than the sources with the build script, then tests the new code', async () => {
    const repo = staleProject({ build: 'node build.mjs', test: 'node --test' });
    const data = dataOf(await run(repo));
    expect(data).toMatchObject({ status: 'passed', tests: [{ id: 'greets', status: 'passed' }] });
    expect(data.env.notes.join('\n')).toMatch(
      /stale build: dist\/ .* is older than src\/index\.js; ran `npm run build` first \(exit 0\)/,
    );
  });

  it('refuses to test a stale build it cannot rebuild: status error, failure_class build', async () => {
    const repo = staleProject({ test: 'node --test' });
    const data = dataOf(await run(repo));
    expect(data).toMatchObject({ status: 'error', failure_class: 'build', tests: [] });
    expect(data.advice).toMatch(
      /^Stale build: dist\/ .* older than src\/index\.js, and there is no toolchain\.build or "build" script/,
    );
  });
});

describe('run_independent_tests leaves the environment as the user has it', () => {
  // Like commander.js's colour tests: the suite checks what its own colour detection sees.
  const COLOUR_SUITE = [
    "import test from 'node:test';",
    "import assert from 'node:assert/strict';",
    "test('FORCE_COLOR is unset', () => assert.equal(process.env.FORCE_COLOR, undefined));",
    "test('NO_COLOR is unset', () => assert.equal(process.env.NO_COLOR, undefined));",
    "test('prints in colour', () => { console.log('\\u001b[31mred text\\u001b[0m'); assert.equal(1, 2); });",
    '',
  ].join('\n');

  it('runs a suite that asserts on FORCE_COLOR/NO_COLOR as the raw run does, and strips colour from the summary', async () => {
    const saved = { FORCE_COLOR: process.env.FORCE_COLOR, NO_COLOR: process.env.NO_COLOR };
    delete process.env.FORCE_COLOR;
    delete process.env.NO_COLOR;
    try {
      const repo = project({
        'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
        'test/colour.test.js': COLOUR_SUITE,
      });
      const raw = spawnSync(process.execPath, ['--test'], {
        cwd: repo.dir,
        encoding: 'utf8',
        env: process.env,
      });
      expect(raw.stdout).toMatch(/^(?:ℹ|#) pass 2$/m);
      const data = dataOf(await run(repo));
      expect(data.tests).toEqual([
        { id: 'FORCE_COLOR is unset', status: 'passed' },
        { id: 'NO_COLOR is unset', status: 'passed' },
        { id: 'prints in colour', status: 'failed', message: expect.stringContaining('1 !== 2') },
      ]);
      expect(data.env.notes).toContain(
        "coachgate adds PYTHONDONTWRITEBYTECODE=1 and COACHGATE_RUN (marks the run's processes for clean-up); NO_COLOR and FORCE_COLOR are left untouched",
      );
      expect(data.summary).not.toContain('\u001b');
    } finally {
      for (const [name, value] of Object.entries(saved))
        if (value !== undefined) process.env[name] = value;
    }
  });
});

describe('run_independent_tests contract', () => {
  it('refuses a command override unless the base config allows it', async () => {
    const repo = project({ 'tests/test_x.py': 'def test_x():\n    assert True\n' });
    const refused = await run(repo, { command: ['true'] });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/allow_command_override/);
    repo.write('.guardkit/config.yaml', 'coachgate:\n  allow_command_override: true\n');
    repo.commit('allow overrides');
    // The task's base was pinned on first touch; a person moves it to the commit that allows overrides.
    await repinBase(repo.dir, 'TASK-1', 'HEAD');
    const allowed = dataOf(await run(repo, { command: ['sh', '-c', 'echo "1 passed in 0.01s"'] }));
    expect(allowed.detected_by).toMatch(/command input/);
  });

  it('answers a refused request at once while another run of the worktree is under way', async () => {
    const repo = project({
      'tests/test_slow.py': 'import time\n\ndef test_slow():\n    time.sleep(3)\n',
    });
    const { client, close } = await connect({ roots: [repo.dir] });
    try {
      const settled: string[] = [];
      const call = (name: string, args: Record<string, unknown>) =>
        callTool(client, 'run_independent_tests', {
          worktree: repo.dir,
          task_id: 'TASK-1',
          ...args,
        }).then((result) => {
          settled.push(name);
          return result;
        });
      const slow = call('slow run', {});
      const refused = await call('refused override', { command: ['true'] });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/allow_command_override/);
      expect(dataOf(await slow).status).toBe('passed');
      // Both are queued on the one worktree; the refusal does not wait for the run ahead of it.
      expect(settled).toEqual(['refused override', 'slow run']);
    } finally {
      await close();
    }
  });

  it('runs toolchain.test from the base commit through sh -c, and reports a missing runner as environment', async () => {
    const repo = project({
      '.guardkit/config.yaml': 'toolchain:\n  test: definitely-not-a-test-runner --all\n',
    });
    const data = dataOf(await run(repo));
    expect(data.command).toEqual(['sh', '-c', 'definitely-not-a-test-runner --all']);
    expect(data.exit_code).toBe(127);
    expect(data.failure_class).toBe('environment');
  });

  it('runs under a login shell when the base config asks for it', async () => {
    const repo = project({
      '.guardkit/config.yaml': 'autobuild:\n  coach:\n    test_execution: login-shell\n',
      'tests/test_x.py': 'def test_x():\n    assert True\n',
    });
    const data = dataOf(await run(repo));
    expect(data.command.slice(0, 2)).toEqual([loginShellProgram(), '-lc']);
    expect(data.command[2]).toMatch(/^python3 \S+\/coachgate_pytest\.py /);
    expect(data).toMatchObject({
      status: 'passed',
      env: { shell: `${path.basename(loginShellProgram())} -lc` },
    });
  });

  it('sends progress notifications while a run lasts and stops the run when the client cancels', async () => {
    const repo = project({
      'tests/test_slow.py': `import subprocess, time\n\ndef test_slow():\n    subprocess.Popen(["sleep", "60.${process.pid}"])\n    time.sleep(60)\n`,
    });
    const { client, close } = await connect({ roots: [repo.dir] });
    const progress: string[] = [];
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'run_independent_tests', arguments: { worktree: repo.dir, task_id: 'TASK-1' } },
      undefined,
      {
        signal: controller.signal,
        timeout: 120_000,
        onprogress: (update) => progress.push(update.message ?? ''),
      },
    );
    // Progress comes every 2.5 s once the run starts: cancel after two, however long a busy machine
    // takes to get there (the test's timeout bounds the wait).
    while (progress.length < 2) await new Promise((resolve) => setTimeout(resolve, 250));
    controller.abort();
    await expect(call).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await close();
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]).toMatch(/tests running for \d+ s/);
    expect(processesWith(`60.${process.pid}`)).toEqual([]);
  }, 120_000);

  it('serialises runs on one worktree', async () => {
    const repo = project({
      'tests/test_x.py': 'import time\n\ndef test_x():\n    time.sleep(1)\n',
    });
    const { client, close } = await connect({ roots: [repo.dir] });
    const [a, b] = await Promise.all(
      [0, 1].map(() =>
        callTool(client, 'run_independent_tests', { worktree: repo.dir, task_id: 'TASK-1' }),
      ),
    );
    await close();
    const runs = [dataOf(a!), dataOf(b!)].sort((x, y) => (x.run_id < y.run_id ? -1 : 1));
    expect(Date.parse(runs[1].started_at)).toBeGreaterThanOrEqual(
      Date.parse(runs[0].started_at) + runs[0].duration_ms,
    );
    expect(existsSync(path.join(repo.dir, '.guardkit/autobuild/TASK-1/runs'))).toBe(true);
  });
});
