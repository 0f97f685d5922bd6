import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf } from '../helpers/mcp.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { runGate } from '../helpers/gate-cli.js';
import {
  BROKEN_CALC,
  DIVIDE_EVIDENCE,
  DIVIDE_TEST,
  GOOD_CALC,
  PY_TASK,
  TASK,
  hasPytest,
  pythonTask,
  type PythonTask,
} from '../helpers/python-task.js';

/**
 * Hostile tactics a Player can reach in one edit, each refused for the right reason by the trusted runs,
 * and honest refactors that must still be approved. Real git repos, real pytest and node --test.
 */
let project: PythonTask | undefined;
let repo: TempRepo;
afterEach(async () => {
  await project?.close();
  project?.repo.remove();
  project = undefined;
});

async function pythonProject(player: Record<string, string>, base: Record<string, string> = {}) {
  project = await pythonTask(player, base);
  repo = project.repo;
}

const call = (name: string, args: Record<string, unknown>) => project!.call(name, args);
const approve = (args: Record<string, unknown> = {}) => project!.approve(args);

async function expectRefused(pattern: RegExp, args: Record<string, unknown> = {}) {
  const { run, result, text } = await approve(args);
  expect(result.isError, text).toBe(true);
  expect(text).toMatch(pattern);
  return { run, text };
}

async function expectApproved(args: Record<string, unknown> = {}) {
  const { result, text } = await approve(args);
  expect(result.isError, text).toBeFalsy();
  return dataOf(result);
}

/**
 * A "python" that runs nothing and writes the report coachgate's pytest reporter would write if
 * every test passed: it is started as `python <reporter script> <report path> <pytest args>`.
 */
const FAKE_PYTHON = [
  '#!/bin/sh',
  `printf '%s\\n' '{"event": "start", "pytest": "9.0.3"}' \\`,
  ...['tests/test_calc.py::test_add', 'tests/test_divide.py::test_divide_by_zero'].map(
    (nodeid) =>
      `  '${JSON.stringify({ event: 'test', nodeid, when: 'call', outcome: 'passed' })}' \\`,
  ),
  '  > "$2"',
  'echo "2 passed in 0.01s"',
  '',
].join('\n');

const TRUSTED_ADD_FAILED =
  /base test tests\/test_calc\.py::test_add passed at the base but failed in the trusted run.*restore the behaviour/;

describe.skipIf(!hasPytest)(
  'trusted evaluation refuses hostile pytest tactics (pytest installed)',
  () => {
    it('a conftest collection hook that drops the failing base test', async () => {
      await pythonProject({
        'calc.py': BROKEN_CALC,
        'tests/conftest.py':
          'def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if i.name != "test_add"]\n',
      });
      const { run } = await expectRefused(TRUSTED_ADD_FAILED);
      expect(run.status).toBe('passed'); // the Player's own run looked green
    });

    it('a makereport hookwrapper that forces outcomes to passed', async () => {
      await pythonProject({
        'calc.py': BROKEN_CALC,
        'conftest.py': [
          'import pytest',
          '',
          '@pytest.hookimpl(hookwrapper=True)',
          'def pytest_runtest_makereport(item, call):',
          '    outcome = yield',
          '    report = outcome.get_result()',
          '    report.outcome = "passed"',
          '',
        ].join('\n'),
      });
      const { run } = await expectRefused(TRUSTED_ADD_FAILED);
      expect(run.status).toBe('passed');
    });

    it('the same conftest hidden from git through .git/info/exclude', async () => {
      await pythonProject({
        'calc.py': BROKEN_CALC,
        'tests/conftest.py':
          'def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if i.name != "test_add"]\n',
      });
      repo.write('.git/info/exclude', 'tests/conftest.py\n');
      const { text } = await expectRefused(TRUSTED_ADD_FAILED);
      expect(text).toMatch(
        /hidden_from_git in tests\/conftest\.py — git ignores this file but the test runner loads it/,
      );
    });

    it('a base test body turned into assert True', async () => {
      await pythonProject({
        'calc.py': BROKEN_CALC,
        'tests/test_calc.py': 'def test_add():\n    assert True\n',
      });
      await expectRefused(TRUSTED_ADD_FAILED);
    });

    it.each([
      ['an early return', 'def test_add():\n    return\n    assert add(2, 3) == 5\n'],
      [
        'try/except: pass',
        'def test_add():\n    try:\n        assert add(2, 3) == 5\n    except AssertionError:\n        pass\n',
      ],
      ['== weakened to in', 'def test_add():\n    assert add(2, 3) in (5, -1)\n'],
      [
        'monkeypatch.setattr on the function under test',
        'import calc\n\n\ndef test_add(monkeypatch):\n    monkeypatch.setattr(calc, "add", lambda a, b: 5)\n    assert calc.add(2, 3) == 5\n',
      ],
      [
        'parametrize over []',
        'import pytest\n\n\n@pytest.mark.parametrize("a", [])\ndef test_add(a):\n    assert add(2, 3) == 5\n',
      ],
    ])('a base test weakened with %s', async (_tactic, body) => {
      await pythonProject({
        'calc.py': BROKEN_CALC,
        'tests/test_calc.py': `from calc import add\n\n\n${body}`,
      });
      await expectRefused(TRUSTED_ADD_FAILED);
    });

    it('a weakening assertion helper under tests/ that base tests import', async () => {
      await pythonProject(
        { 'calc.py': BROKEN_CALC, 'tests/checks.py': 'def check_equal(a, b):\n    pass\n' },
        {
          'tests/checks.py': 'def check_equal(a, b):\n    assert a == b\n',
          'tests/test_calc.py':
            'from calc import add\nfrom checks import check_equal\n\n\ndef test_add():\n    check_equal(add(2, 3), 5)\n',
        },
      );
      await expectRefused(TRUSTED_ADD_FAILED);
    });

    it('a new pytest.ini that shadows pyproject.toml and narrows collection', async () => {
      await pythonProject({
        'calc.py': BROKEN_CALC,
        'pytest.ini':
          '[pytest]\ntestpaths = tests\npython_files = test_divide.py\npythonpath = .\n',
      });
      const { run } = await expectRefused(TRUSTED_ADD_FAILED);
      expect(run.status).toBe('passed');
    });

    it('a new test that also passes on the base code verifies nothing', async () => {
      await pythonProject({
        'calc.py': GOOD_CALC,
        'tests/test_divide.py':
          DIVIDE_TEST + '\n\ndef test_divides():\n    assert divide(6, 3) == 2\n',
      });
      await expectRefused(
        /criterion AC-001 is not verified.*test_divides also passes on the base code.*does not exercise the change/,
        {
          evidence: [{ criterion: 'AC-001', test: 'test_divides' }],
        },
      );
    });

    it("the Player's new test file in a directory the runner never collects", async () => {
      await pythonProject({
        'calc.py': GOOD_CALC,
        'extra/test_more.py': 'def test_more():\n    assert True\n',
      });
      await expectRefused(
        /test file extra\/test_more\.py was added but contributes no test to the candidate run/,
      );
    });

    it('a fake .venv/bin/python that writes a passing report is never run', async () => {
      await pythonProject({ 'calc.py': BROKEN_CALC, '.gitignore': '.venv/\n' });
      mkdirSync(path.join(repo.dir, '.venv/bin'), { recursive: true });
      repo.write('.venv/bin/python', FAKE_PYTHON);
      chmodSync(path.join(repo.dir, '.venv/bin/python'), 0o755);
      const { run } = await expectRefused(
        /planted environment: \.venv\/bin\/python — the interpreter resolves inside the worktree/,
      );
      expect(run.status).toBe('passed'); // the fake fooled the candidate run, which is why the trusted runs refuse it
    });

    it('a sitecustomize.py in the project virtualenv', async () => {
      await pythonProject({ 'calc.py': GOOD_CALC, '.gitignore': '.venv/\n' });
      const python = execFileSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).trim();
      const real = execFileSync(
        python,
        ['-c', 'import sys, os; print(os.path.realpath(sys.executable))'],
        { encoding: 'utf8' },
      ).trim();
      mkdirSync(path.join(repo.dir, '.venv/bin'), { recursive: true });
      symlinkSync(real, path.join(repo.dir, '.venv/bin/python'));
      repo.write('.venv/lib/python3/site-packages/sitecustomize.py', 'import os\n');
      await expectRefused(
        /planted environment: \.venv\/lib\/python3\/site-packages\/sitecustomize\.py — a site hook/,
      );
    });
  },
);

describe.skipIf(!hasPytest)(
  'trusted evaluation approves honest pytest work (pytest installed)',
  () => {
    it('a base test moved to another file and renamed', async () => {
      await pythonProject({
        'calc.py': GOOD_CALC,
        'tests/test_arith.py':
          'from calc import add\n\n\ndef test_addition():\n    assert add(2, 3) == 5\n',
      });
      rmSync(path.join(repo.dir, 'tests/test_calc.py'));
      const data = await expectApproved();
      expect(data.evaluation).toMatchObject({ regressions: [], planted: [] });
    });

    it('a base test split in two and converted from a class to functions', async () => {
      await pythonProject(
        {
          'calc.py': GOOD_CALC,
          'tests/test_calc.py':
            'from calc import add\n\n\ndef test_add_small():\n    assert add(2, 3) == 5\n\n\ndef test_add_negative():\n    assert add(-1, 1) == 0\n',
        },
        {
          'tests/test_calc.py':
            'from calc import add\n\n\nclass TestAdd:\n    def test_add(self):\n        assert add(2, 3) == 5\n        assert add(-1, 1) == 0\n',
        },
      );
      await expectApproved();
    });

    it('a unittest TestCase turned into a parametrized pytest function', async () => {
      await pythonProject(
        {
          'calc.py': GOOD_CALC,
          'tests/test_calc.py':
            'import pytest\nfrom calc import add\n\n\n@pytest.mark.parametrize("a, b, total", [(2, 3, 5), (-1, 1, 0)])\ndef test_add(a, b, total):\n    assert add(a, b) == total\n',
        },
        {
          'tests/test_calc.py':
            'import unittest\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n',
        },
      );
      await expectApproved();
    });

    it('a new test with a version-gated skip', async () => {
      await pythonProject({
        'calc.py': GOOD_CALC,
        'tests/test_divide.py':
          DIVIDE_TEST +
          '\n\nimport sys\n\n\n@pytest.mark.skipif(sys.version_info < (3, 8), reason="needs 3.8")\ndef test_divide_walrus():\n    assert (q := divide(6, 3)) == 2\n',
      });
      await expectApproved();
    });

    it('a test that already fails at the base is pre-existing, listed and not held against the task', async () => {
      await pythonProject(
        { 'calc.py': GOOD_CALC },
        { 'tests/test_legacy.py': 'def test_legacy():\n    assert 1 == 2\n' },
      );
      const data = await expectApproved();
      expect(data.evaluation.preexisting_failures).toEqual(['tests/test_legacy.py::test_legacy']);
      expect(data.evaluation.unshared_failures).toEqual([]);
      const review = readFileSync(path.join(repo.dir, data.review_path), 'utf8');
      expect(review).toMatch(/## Pre-existing failures[\s\S]*tests\/test_legacy\.py::test_legacy/);
      // coachgate gate agrees with the guard: the red run's only failure is pre-existing.
      const gate = runGate(repo.dir, TASK, 'text');
      expect(gate.status, gate.stdout + gate.stderr).toBe(0);
      expect(gate.stdout).toMatch(/tests: pass — failed: .*every failure is pre-existing/);
      expect(gate.stdout).toMatch(/pre-existing failure: tests\/test_legacy\.py::test_legacy/);
      const json = JSON.parse(runGate(repo.dir, TASK, 'json').stdout);
      expect(json).toMatchObject({
        passed: true,
        preexisting_failures: ['tests/test_legacy.py::test_legacy'],
      });
      // A new failure is not pre-existing: the gate fails as soon as the tree differs from the approval.
      repo.write('calc.py', BROKEN_CALC);
      expect(runGate(repo.dir, TASK, 'text').status).toBe(1);
    });

    it('a red run beside a pre-existing failure names each failure the base does not share', async () => {
      await pythonProject(
        {
          'calc.py': GOOD_CALC,
          'tests/test_new.py': 'def test_new():\n    assert 1 == 2\n',
          'tests/test_legacy.py':
            'def test_legacy():\n    assert 1 == 2\n\n\ndef test_kept():\n    assert 1 == 2\n',
        },
        {
          'tests/test_legacy.py':
            'def test_legacy():\n    assert 1 == 2\n\n\ndef test_kept():\n    pass\n',
        },
      );
      const { run, text } = await expectRefused(/tests must pass before approval/);
      expect(run.status).toBe('failed');
      expect(text).toMatch(
        /Not failures the base shares: tests\/test_legacy\.py::test_kept \(passed at the base\), tests\/test_new\.py::test_new \(did not run at the base\) \(a new test, or one the base's run never reached/,
      );
      // The failure the base has too is pre-existing, and not named among them.
      expect(text).not.toMatch(/test_legacy\.py::test_legacy \(/);
    });

    it('a spec-driven expected-value change is refused until acknowledged, then recorded', async () => {
      const task = PY_TASK.replace(
        '- [ ] AC-001',
        '- [ ] AC-002: add(a, b) returns the sum as a string\n- [ ] AC-001',
      );
      await pythonProject(
        {
          'calc.py': GOOD_CALC.replace('return a + b', 'return str(a + b)'),
          'tests/test_calc.py':
            'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == "5"\n',
        },
        { [`.guardkit/tasks/backlog/${TASK}.md`]: task },
      );
      const evidence = [
        ...DIVIDE_EVIDENCE,
        { criterion: 'AC-002', file: 'calc.py', snippet: 'return str(a + b)' },
      ];
      await expectRefused(TRUSTED_ADD_FAILED, { evidence });
      const acknowledged_changes = [
        {
          test: 'tests/test_calc.py::test_add',
          criterion: 'AC-002',
          reason: 'AC-002 makes add return a string',
        },
      ];
      const result = await call('record_verdict', {
        turn: 1,
        decision: 'approve',
        rationale: 'done',
        evidence,
        acknowledged_changes,
      });
      const data = dataOf(result);
      const turn = JSON.parse(readFileSync(path.join(repo.dir, data.path), 'utf8'));
      expect(turn.acknowledged_changes).toEqual(acknowledged_changes);
      expect(readFileSync(path.join(repo.dir, data.review_path), 'utf8')).toMatch(
        /## Changed base behaviour[\s\S]*tests\/test_calc\.py::test_add.*AC-002/,
      );
      const log = readFileSync(
        path.join(repo.dir, '.guardkit/autobuild', TASK, 'verdicts.jsonl'),
        'utf8',
      )
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(log.at(-1)).toMatchObject({ kind: 'verdict', acknowledged_changes });
      // coachgate gate prints the acknowledgement in every format.
      const box = runGate(repo.dir, TASK, 'box');
      expect(box.status, box.stdout + box.stderr).toBe(0);
      expect(box.stdout).toMatch(
        /Changed base behaviour \(acknowledged by the Coach\):[\s\S]*tests\/test_calc\.py::test_add — AC-002: AC-002 makes add return a\s/,
      );
      expect(runGate(repo.dir, TASK, 'text').stdout).toMatch(
        /changed base behaviour: tests\/test_calc\.py::test_add — AC-002: AC-002 makes add return a string/,
      );
      expect(JSON.parse(runGate(repo.dir, TASK, 'json').stdout)).toMatchObject({
        passed: true,
        acknowledged_changes,
      });
    });

    it('an acknowledgement naming a criterion the task does not have is a caller error', async () => {
      await pythonProject({ 'calc.py': GOOD_CALC });
      await expectRefused(/criterion "AC-999", which TASK-007 does not have/, {
        acknowledged_changes: [{ test: 'test_add', criterion: 'AC-999', reason: 'x' }],
      });
    });
  },
);
