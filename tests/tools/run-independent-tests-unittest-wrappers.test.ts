/**
 * unittest behind a command coachgate cannot see into (an npm script, `make test`, a
 * `toolchain.test` chain, coverage inside a Makefile): real python3 projects run through the MCP
 * client, ids checked against the raw command's own run, counts and exit equal to it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { bwrapUsable } from '../helpers/bubblewrap.js';

let repos: TempRepo[] = [];
afterEach(() => {
  repos.forEach((repo) => repo.remove());
  repos = [];
});

const CALC = 'def add(a, b):\n    return a + b\n';
/** One passing and one failing test, in `directory` (a package, so ids carry its name). */
function calcTests(directory: string): Record<string, string> {
  return {
    'calc/__init__.py': CALC,
    [`${directory}/__init__.py`]: '',
    [`${directory}/test_calc.py`]:
      'import unittest\nfrom calc import add\n\nclass AddTest(unittest.TestCase):\n' +
      '    def test_adds(self):\n        self.assertEqual(add(1, 1), 2)\n' +
      '    def test_breaks(self):\n        self.assertEqual(add(1, 1), 3)\n',
  };
}

function project(files: Record<string, string>): TempRepo {
  const repo = makeRepo({ '.gitignore': '.coverage\n.venv/\n', ...files });
  repos.push(repo);
  return repo;
}

const toolchain = (test: string) => `toolchain:\n  test: ${JSON.stringify(test)}\n`;

type RunData = Record<string, any>; // a tool's structuredContent, as dataOf returns it

async function run(repo: TempRepo): Promise<RunData> {
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    const args = { worktree: repo.dir, task_id: 'TASK-1', timeout_s: 120 };
    return dataOf(await callTool(client, 'run_independent_tests', args));
  } finally {
    await close();
  }
}

/** The command as the user runs it, with the project's virtualenv (if any) first on PATH. */
function rawRun(repo: TempRepo, argv: string[]) {
  const venv = path.join(repo.dir, '.venv', 'bin');
  const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PATH: `${venv}:${process.env.PATH}` };
  const raw = spawnSync(argv[0]!, argv.slice(1), { cwd: repo.dir, encoding: 'utf8', env });
  return { status: raw.status, output: raw.stdout + raw.stderr };
}

const ids = (data: RunData) =>
  (data.tests as { id: string; status: string }[]).map((test) => `${test.status} ${test.id}`);

/** What the raw run's unittest printed: `Ran 2 tests`, `FAILED (failures=1)`. */
function expectSameRun(data: RunData, raw: { status: number | null; output: string }) {
  expect(raw.output).toMatch(/^Ran 2 tests in .*\n\nFAILED \(failures=1\)$/m);
  expect(data).toMatchObject({
    status: 'failed',
    failure_class: 'code',
    exit_code: raw.status,
    counts: { total: 2, passed: 1, failed: 1, errors: 0, skipped: 0 },
  });
  expect(data.tests_source).toMatch(/unittest recorder via python\/coverage shims/);
  if (bwrapUsable) expect(data.sandbox).toMatchObject({ backend: 'bubblewrap' });
}

describe('unittest behind a wrapper returns per-test ids', () => {
  it('npm script `python3 -m unittest discover …`: ids as the direct run names them', async () => {
    const repo = project({
      'package.json': JSON.stringify({
        scripts: { test: 'python3 -m unittest discover -s checks -t .' },
      }),
      ...calcTests('checks'),
    });
    const raw = rawRun(repo, ['npm', 'test']);
    const data = await run(repo);
    expect(data.command).toEqual(['npm', 'test']);
    expect(ids(data)).toEqual([
      'passed checks.test_calc.AddTest.test_adds',
      'failed checks.test_calc.AddTest.test_breaks',
    ]);
    expect(data.tests[1].message).toMatch(/^AssertionError: 2 != 3/);
    expect(data.summary).toMatch(/AssertionError: 2 != 3/);
    expectSameRun(data, raw);
    expect(raw.status).toBe(1);
  }, 120_000);

  it('`toolchain.test: make test`, a recipe running python3 -m unittest: ids, exit 2', async () => {
    const repo = project({
      '.guardkit/config.yaml': toolchain('make test'),
      Makefile: 'test:\n\tpython3 -m unittest discover -s tests -t .\n',
      ...calcTests('tests'),
    });
    const raw = rawRun(repo, ['make', 'test']);
    const data = await run(repo);
    expect(ids(data)).toEqual([
      'passed tests.test_calc.AddTest.test_adds',
      'failed tests.test_calc.AddTest.test_breaks',
    ]);
    expectSameRun(data, raw);
    expect(raw.status).toBe(2);
  }, 120_000);

  it('`toolchain.test` running unittest twice: both recorded, output as written', async () => {
    const repo = project({
      '.guardkit/config.yaml': toolchain(
        'python -m unittest tests.test_calc.AddTest.test_adds && echo between && ' +
          'python3 -W error -m unittest -v tests.test_calc.AddTest.test_breaks',
      ),
      ...calcTests('tests'),
    });
    const data = await run(repo);
    expect(ids(data)).toEqual([
      'passed tests.test_calc.AddTest.test_adds',
      'failed tests.test_calc.AddTest.test_breaks',
    ]);
    expect(data).toMatchObject({ status: 'failed', exit_code: 1, counts: { total: 2 } });
    // The user's own verbosity: the first run prints a dot, the second (-v) names its test.
    const log = fs.readFileSync(data.log_path, 'utf8');
    expect(log).toMatch(/^\.\n-+\nRan 1 test in .*\n\nOK\nbetween\n/m);
    expect(log).toMatch(/^test_breaks \(tests\.test_calc\.AddTest\.test_breaks\) \.\.\. FAIL$/m);
  }, 120_000);

  it('a criterion cited by a unittest id from `make test` is verified', async () => {
    const repo = project({
      '.guardkit/config.yaml': toolchain('make test'),
      '.guardkit/tasks/backlog/TASK-1.md':
        '---\nid: TASK-1\ntitle: Add\nstatus: in_progress\n---\n## Acceptance Criteria\n' +
        '- [ ] AC-001: add(1, 1) is 2\n- [ ] AC-002: add(1, 1) is 3\n',
      Makefile: 'test:\n\tpython3 -m unittest discover -s tests -t .\n',
      ...calcTests('tests'),
    });
    repo.git('checkout', '-q', '-b', 'autobuild/TASK-1');
    const { client, close } = await connect({ roots: [repo.dir] });
    try {
      const call = (name: string, args: Record<string, unknown>) =>
        callTool(client, name, { worktree: repo.dir, task_id: 'TASK-1', ...args });
      const run = dataOf(await call('run_independent_tests', {}));
      const report = dataOf(
        await call('validate_requirements', {
          evidence: [
            { criterion: 'AC-001', test: 'tests.test_calc.AddTest.test_adds' },
            { criterion: 'AC-002', test: 'tests.test_calc.AddTest.test_breaks' },
          ],
        }),
      );
      expect(report.latest_run_id).toBe(run.run_id);
      expect(report.criteria.map((c: RunData) => `${c.id} ${c.status}`)).toEqual([
        'AC-001 verified',
        'AC-002 claimed_unverified',
      ]);
    } finally {
      await close();
    }
  }, 120_000);
});

/** A virtualenv whose python has coverage (Debian's python3-coverage, seen through system site). */
function coverageVirtualenv(repo: TempRepo): boolean {
  const venv = path.join(repo.dir, '.venv');
  const made = spawnSync('/usr/bin/python3', [
    '-m',
    'venv',
    '--without-pip',
    '--system-site-packages',
    venv,
  ]);
  if (made.status !== 0) return false;
  // The console script pip would install for coverage.
  repo.write(
    '.venv/bin/coverage',
    `#!${venv}/bin/python\nimport sys\nfrom coverage.cmdline import main\nsys.exit(main())\n`,
  );
  fs.chmodSync(path.join(venv, 'bin', 'coverage'), 0o755);
  return spawnSync(path.join(venv, 'bin', 'python'), ['-c', 'import coverage']).status === 0;
}

const hasSystemCoverage =
  spawnSync('/usr/bin/python3', ['-c', 'import coverage, venv']).status === 0;

describe('coverage inside a wrapper', () => {
  it.skipIf(!hasSystemCoverage)(
    '`make test`: `coverage run --source=calc -m unittest`, then `coverage report`: ids, ' +
      'coverage report unchanged (skipped without /usr/bin/python3 coverage)',
    async () => {
      const repo = project({
        '.guardkit/config.yaml': toolchain('make test'),
        Makefile:
          'test:\n\tcoverage run --branch --source=calc -m unittest discover -s tests -t .' +
          ' || (python3 -m coverage report; exit 1)\n',
        ...calcTests('tests'),
      });
      expect(coverageVirtualenv(repo)).toBe(true);
      const raw = rawRun(repo, ['make', 'test']);
      const data = await run(repo);
      expect(ids(data)).toEqual([
        'passed tests.test_calc.AddTest.test_adds',
        'failed tests.test_calc.AddTest.test_breaks',
      ]);
      expectSameRun(data, raw);
      const log = fs.readFileSync(data.log_path, 'utf8');
      const table = (text: string) => /^Name .*\n-+\n(?:.*\n)*?TOTAL .*$/m.exec(text)?.[0];
      expect(table(log)).toBe(table(raw.output));
      expect(table(log)).toMatch(/^calc\/__init__\.py /m);
      // Nothing of coachgate's is measured or shown (its report directory is coachgate-report-…).
      expect(log).not.toMatch(/coachgate-report-|coachgate_unittest/);
    },
    120_000,
  );

  it.skipIf(!hasSystemCoverage)(
    'npm script `python3 -m coverage run -m unittest discover`: ids ' +
      '(skipped without /usr/bin/python3 coverage)',
    async () => {
      const repo = project({
        'package.json': JSON.stringify({
          scripts: { test: 'python3 -m coverage run -m unittest discover -s checks -t .' },
        }),
        ...calcTests('checks'),
      });
      expect(coverageVirtualenv(repo)).toBe(true);
      const raw = rawRun(repo, ['npm', 'test']);
      const data = await run(repo);
      expect(ids(data)).toEqual([
        'passed checks.test_calc.AddTest.test_adds',
        'failed checks.test_calc.AddTest.test_breaks',
      ]);
      expectSameRun(data, raw);
    },
    120_000,
  );
});
