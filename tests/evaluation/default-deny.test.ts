import { execFileSync } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import {
  BASE_CALC,
  BROKEN_CALC,
  DIVIDE_TEST,
  GOOD_CALC,
  TASK,
  hasPytest,
  pythonTask,
  type PythonTask,
} from '../helpers/python-task.js';

/**
 * Default-deny through the MCP client with real pytest and vitest: the trusted runs take from the
 * Player only what the base defines as product code. Each tactic class is refused; with the tactic
 * taken away (the honest fix, no tactic files) the same project is approved.
 */
let project: PythonTask | undefined;
afterEach(async () => {
  await project?.close();
  project?.repo.remove();
  project = undefined;
});

const approve = (args: Record<string, unknown> = {}) => project!.approve(args);
const verdictLog = (repo: TempRepo) =>
  readFileSync(path.join(repo.dir, '.guardkit/autobuild', TASK, 'verdicts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

/** The report names only the code and the new test, so taking the tactic's files away keeps it true. */
const HONEST_REPORT = {
  files_modified: ['calc.py', 'tests/test_divide.py'],
  tests_written: ['tests/test_divide.py'],
};

const TRUSTED_ADD_FAILED =
  /base test tests\/test_calc\.py::test_add passed at the base but failed in the trusted run/;

describe.skipIf(!hasPytest)('default-deny with pytest (pytest installed)', () => {
  it.each([
    [
      'runner config under a name the old list lacked (pytest.toml, which pytest prefers)',
      {
        'pytest.toml':
          '[pytest]\ntestpaths = ["tests"]\npython_files = ["test_divide.py"]\npythonpath = ["."]\n',
      },
    ],
    [
      'an expected-value data file outside tests/ that the base test reads',
      { 'expected/add.json': '{"2+3": -1}\n' },
    ],
  ])(
    'refuses %s, and approves the project without it',
    async (_tactic, files) => {
      project = await pythonTask(
        { 'calc.py': BROKEN_CALC, ...files },
        {
          'expected/add.json': '{"2+3": 5}\n',
          'tests/test_calc.py':
            'import json\nfrom pathlib import Path\nfrom calc import add\n\n\ndef test_add():\n    expected = json.loads((Path(__file__).parent.parent / "expected/add.json").read_text())\n    assert add(2, 3) == expected["2+3"]\n',
        },
        HONEST_REPORT,
      );
      const refused = await approve();
      expect(refused.run.status).toBe('passed'); // the tactic fooled the Player's own run
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(TRUSTED_ADD_FAILED);
      expect(refused.text).toMatch(
        new RegExp(
          `took these changes from the base.*${Object.keys(files)[0]!.replace('.', '\\.')}`,
        ),
      );
      // The tactic taken away: the honest code alone is approved.
      project.repo.git('checkout', '--', '.');
      project.repo.git('clean', '-fq', '--', ...Object.keys(files));
      project.repo.write('calc.py', GOOD_CALC);
      const honest = await approve();
      expect(honest.result.isError, honest.text).toBeFalsy();
      expect(dataOf(honest.result).evaluation).toMatchObject({
        product_roots: ['python: calc.py (flat layout)'],
        taken_from_player: ['calc.py'],
      });
    },
    240_000,
  );

  it("refuses an untracked conftest hook that flips the Player's new test, naming it", async () => {
    const flip = [
      'import pytest',
      '',
      '@pytest.hookimpl(hookwrapper=True)',
      'def pytest_runtest_makereport(item, call):',
      '    outcome = yield',
      '    if "test_divide" in item.nodeid:',
      '        outcome.get_result().outcome = "passed"',
      '',
    ].join('\n');
    // No fix at all: divide(1, 0) raises ZeroDivisionError, and the hook hides it.
    project = await pythonTask(
      { 'calc.py': BASE_CALC, 'tests/conftest.py': flip },
      {},
      HONEST_REPORT,
    );
    const refused = await approve();
    expect(refused.run.status).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /new test tests\/test_divide\.py::test_divide_by_zero passed in the worktree but failed with the base's test infrastructure.*tests\/conftest\.py/,
    );
    rmFile('tests/conftest.py');
    project.repo.write('calc.py', GOOD_CALC);
    const honest = await approve();
    expect(honest.result.isError, honest.text).toBeFalsy();
    expect(dataOf(honest.result).evaluation.diverging_new_tests).toEqual([]);
  }, 240_000);

  it('refuses product code that detects the test runner, with the line', async () => {
    const detecting = GOOD_CALC.replace(
      'def add(a, b):\n    return a + b',
      'import sys\n\n\ndef add(a, b):\n    if "pytest" in sys.modules:\n        return a + b\n    return a - b',
    );
    project = await pythonTask({ 'calc.py': detecting });
    const refused = await approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /test integrity: runner_detection in calc\.py:5 — product code reads sys\.modules for the runner/,
    );
    const integrity = dataOf(await project.call('check_test_integrity', {}));
    expect(integrity.findings).toContainEqual(
      expect.objectContaining({ kind: 'runner_detection', file: 'calc.py', line: 5 }),
    );
    project.repo.write('calc.py', GOOD_CALC);
    const honest = await approve();
    expect(honest.result.isError, honest.text).toBeFalsy();
  }, 240_000);

  it('refuses a snippet in a helper inside a test file as evidence', async () => {
    const helper = `${DIVIDE_TEST}\n\ndef _checked(a, b):\n    if b == 0:\n        raise ValueError("division by zero")\n`;
    project = await pythonTask({ 'calc.py': GOOD_CALC, 'tests/test_divide.py': helper });
    const snippet = 'raise ValueError("division by zero")';
    const refused = await approve({
      evidence: [{ criterion: 'AC-001', file: 'tests/test_divide.py', snippet }],
    });
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/tests\/test_divide\.py is not inside a test/);
    const honest = await approve({ evidence: [{ criterion: 'AC-001', file: 'calc.py', snippet }] });
    expect(honest.result.isError, honest.text).toBeFalsy();
  }, 240_000);

  it('takes a new data file the product reads once the Coach acknowledges it, and signs that', async () => {
    const reading = GOOD_CALC.replace(
      'def add(a, b):\n    return a + b',
      'import json\nfrom pathlib import Path\n\n\ndef add(a, b):\n    offset = json.loads((Path(__file__).parent / "data/offset.json").read_text())\n    return a + b + offset["offset"]',
    );
    project = await pythonTask({ 'calc.py': reading, 'data/offset.json': '{"offset": 0}\n' });
    const refused = await approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(TRUSTED_ADD_FAILED);
    expect(refused.text).toMatch(/data\/offset\.json \(added\).*acknowledged_left_out/);
    const acknowledged_left_out = [{ file: 'data/', reason: 'add reads its offset from it' }];
    const approved = await approve({ acknowledged_left_out });
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(dataOf(approved.result).evaluation).toMatchObject({
      taken_by_acknowledgement: ['data/offset.json'],
    });
    expect(verdictLog(project.repo).at(-1)).toMatchObject({
      kind: 'verdict',
      decision: 'approve',
      acknowledged_left_out,
    });
  }, 240_000);
});

function rmFile(file: string) {
  execFileSync('rm', ['-f', path.join(project!.repo.dir, file)]);
}

/**
 * An editable install of a src-layout project: the virtualenv's .pth names the worktree's src/. The
 * fail-to-pass run must import the snapshot's base code, so the honest fix's new test fails there.
 */
const hasVenv = (() => {
  try {
    execFileSync('python3', ['-c', 'import venv, setuptools, pytest'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!hasVenv)(
  `an editable src-layout virtualenv (python3 with venv, setuptools, pytest)${hasVenv ? '' : ' — skipped: not installed'}`,
  () => {
    it('approves the honest fix: the base code, not the worktree, answers the fail-to-pass run', async () => {
      const src = (calc: string) => ({
        'src/shop/__init__.py': '',
        'src/shop/calc.py': calc,
      });
      project = await pythonTask(
        {
          ...src(GOOD_CALC),
          'tests/test_divide.py': DIVIDE_TEST.replace('from calc', 'from shop.calc'),
        },
        {
          'pyproject.toml': [
            '[build-system]',
            'requires = ["setuptools>=64"]',
            'build-backend = "setuptools.build_meta"',
            '',
            '[project]',
            'name = "shop"',
            'version = "0.1"',
            '',
            '[tool.pytest.ini_options]',
            'testpaths = ["tests"]',
            '',
          ].join('\n'),
          '.gitignore': '.venv/\n*.egg-info/\n',
          ...src(BASE_CALC),
          'tests/test_calc.py':
            'from shop.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
        },
      );
      const dir = project.repo.dir;
      execFileSync('python3', ['-m', 'venv', '--system-site-packages', '--without-pip', '.venv'], {
        cwd: dir,
      });
      try {
        execFileSync(
          '.venv/bin/python',
          [
            '-m',
            'pip',
            'install',
            '-q',
            '--no-index',
            '--no-build-isolation',
            '--no-deps',
            '-e',
            '.',
          ],
          { cwd: dir, stdio: 'ignore' },
        );
      } catch {
        // Offline without the wheel package pip cannot build the editable wheel: write the .pth exactly
        // as setuptools' editable install writes it for a src layout.
        const site = execFileSync(
          '.venv/bin/python',
          ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
          { cwd: dir, encoding: 'utf8' },
        ).trim();
        writeFileSync(path.join(site, '__editable__.shop-0.1.pth'), `${path.join(dir, 'src')}\n`);
      }
      const pth = execFileSync('sh', ['-c', 'cat .venv/lib/python3*/site-packages/*.pth'], {
        cwd: dir,
        encoding: 'utf8',
      });
      expect(pth).toContain(path.join(dir, 'src')); // the install points back into the worktree
      const result = await approve();
      expect(result.run.status).toBe('passed');
      expect(result.result.isError, result.text).toBeFalsy();
      expect(dataOf(result.result).evaluation.passing_on_base_code).not.toContain(
        'tests/test_divide.py::test_divide_by_zero',
      );
    }, 240_000);
  },
);

describe('default-deny with vitest: tests beside the code and a new dependency', () => {
  let repo: TempRepo | undefined;
  afterEach(() => repo?.remove());

  it('approves src/shout.test.js beside src/lib.js and a dependency added to package.json', async () => {
    const task = 'TASK-011';
    repo = makeRepo({
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }, null, 2),
      '.gitignore': 'node_modules/\n',
      'src/lib.js': 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n',
      'src/lib.test.js':
        "import { expect, test } from 'vitest';\nimport { greet } from './lib.js';\n\ntest('greets', () => expect(greet('Ada')).toBe('Hello, Ada!'));\n",
      [`.guardkit/tasks/backlog/${task}.md`]: `---\nid: ${task}\ntitle: T\n---\n## Acceptance Criteria\n- [ ] AC-001: shout(text) returns YAML of the upper-cased text\n`,
    });
    symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules'));
    repo.git('checkout', '-q', '-b', `autobuild/${task}`);
    repo.write(
      'package.json',
      JSON.stringify(
        { type: 'module', scripts: { test: 'vitest run' }, dependencies: { yaml: '2.9.1' } },
        null,
        2,
      ),
    );
    repo.write(
      'src/lib.js',
      "import { stringify } from 'yaml';\n\nexport function greet(name) {\n  return `Hello, ${name}!`;\n}\n\nexport function shout(text) {\n  return stringify(text.toUpperCase());\n}\n",
    );
    repo.write(
      'src/shout.test.js',
      "import { expect, test } from 'vitest';\nimport { shout } from './lib.js';\n\ntest('shouts', () => expect(shout('hi')).toBe('HI\\n'));\n",
    );
    const { client, close } = await connect({ roots: [repo.dir] });
    try {
      const call = (name: string, args: Record<string, unknown>) =>
        callTool(client, name, { worktree: repo!.dir, task_id: task, ...args });
      await call('record_player_report', {
        turn: 1,
        report: {
          files_modified: ['src/lib.js'],
          tests_passed: true,
          requirements_addressed: ['AC-001'],
        },
      });
      expect(dataOf(await call('run_independent_tests', {})).status).toBe('passed');
      const result = await call('record_verdict', {
        turn: 1,
        decision: 'approve',
        rationale: 'done',
        evidence: [{ criterion: 'AC-001', test: 'shouts' }],
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      const evaluation = dataOf(result).evaluation;
      expect(evaluation.taken_from_player).toEqual(['src/lib.js']);
      expect(evaluation.left_out).toEqual(
        expect.arrayContaining([
          { file: 'package.json', change: 'modified' },
          { file: 'src/shout.test.js', change: 'added' },
        ]),
      );
      expect(evaluation.diverging_new_tests).toEqual([]);
    } finally {
      await close();
    }
  }, 240_000);
});
