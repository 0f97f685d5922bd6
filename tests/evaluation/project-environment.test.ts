import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BASE_CALC,
  BROKEN_CALC,
  GOOD_CALC,
  hasPytest,
  pythonTaskPerTest,
} from '../helpers/python-task.js';
import { type TempRepo } from '../helpers/git-repo.js';

/**
 * The project's own environment is environment: a virtualenv inside the worktree that holds its own
 * pytest (as `python -m venv .venv && .venv/bin/pip install pytest` leaves it) registers pytest's
 * plugins from files under the worktree; they are neither product code nor tests. Through the MCP
 * client with the virtualenv's own pytest.
 */
const hasVenv = (() => {
  try {
    execFileSync('python3', ['-c', 'import venv, pytest, pluggy, iniconfig, packaging'], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Copies the installed distributions' files, as their RECORD lists them, into the project's
 * virtualenv: what pip would install, without the network (the machine's own wheels are not kept).
 * Debian's packages keep no RECORD: their top-level packages are copied whole instead.
 */
const INSTALL = `
import importlib.metadata as metadata, os, re, shutil, sys
target = sys.argv[1]
def copy(source, relative):
    destination = os.path.join(target, relative)
    if os.path.isdir(source):
        shutil.copytree(source, destination, dirs_exist_ok=True)
    elif os.path.isfile(source):
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copy2(source, destination)
def with_requirements(names, seen):
    for name in names:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement for another Python version
        if dist.metadata['Name'].lower() in seen:
            continue
        seen.add(dist.metadata['Name'].lower())
        yield dist
        needed = [r for r in dist.requires or () if 'extra ==' not in r]
        yield from with_requirements([re.match(r'[A-Za-z0-9_.-]+', r).group() for r in needed], seen)
for dist in with_requirements(sys.argv[2:], set()):
    if dist.files is None:
        for top in (dist.read_text('top_level.txt') or '').split():
            copy(str(dist.locate_file(top)), top)
            copy(str(dist.locate_file(top + '.py')), top + '.py')
        copy(str(dist._path), os.path.basename(str(dist._path)))
        continue
    for file in dist.files:
        if not str(file).startswith('..'):  # console scripts live outside site-packages
            copy(str(dist.locate_file(file)), str(file))
`;

/** `.venv` made with no access to the machine's packages, holding pytest and its dependencies. */
export function venvWithPytest(repo: TempRepo): void {
  execFileSync('python3', ['-m', 'venv', '--without-pip', '.venv'], { cwd: repo.dir });
  const python = path.join(repo.dir, '.venv/bin/python');
  const site = execFileSync(
    python,
    ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
    {
      encoding: 'utf8',
    },
  ).trim();
  execFileSync('python3', ['-c', INSTALL, site, 'pytest', 'pygments']);
}

describe.skipIf(!hasVenv)(
  `a project whose .venv holds its own pytest${hasVenv ? '' : ' — skipped: python3 with venv and pytest needed'}`,
  () => {
    const tasks = pythonTaskPerTest();

    it('refuses the broken fix with the base test named, and approves the honest one', async () => {
      const project = await tasks.start(
        { 'calc.py': BROKEN_CALC },
        { '.gitignore': '.venv/\n' },
        {},
        venvWithPytest,
      );
      const refused = await project.approve();
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(/test_add/);
      project.repo.write('calc.py', GOOD_CALC);
      const approved = await project.approve();
      expect(approved.result.isError, approved.text).toBeFalsy();
    }, 240_000);

    it("refuses a plugin of the product's hooks that the standard library registers, naming calc.py", async () => {
      // No file of its own, a type of the standard library's, registered from a timer's thread: the
      // hooks pluggy will call are the product's.
      const calc = [
        BROKEN_CALC,
        'import gc, threading, types',
        '',
        '',
        'def pytest_runtest_logreport(report):',
        '    report.outcome = "passed"',
        '',
        '',
        'manager = next(o for o in gc.get_objects() if type(o).__name__ == "PytestPluginManager")',
        'plugin = types.ModuleType("flip")',
        'plugin.pytest_runtest_logreport = pytest_runtest_logreport',
        'timer = threading.Timer(0, manager.register, (plugin, "flip"))',
        'timer.start()',
        'timer.join()',
        '',
      ].join('\n');
      const project = await tasks.start(
        { 'calc.py': calc },
        { '.gitignore': '.venv/\n' },
        {},
        venvWithPytest,
      );
      const refused = await project.approve();
      expect(refused.run.status).not.toBe('passed');
      expect(refused.result.isError).toBe(true);
      expect(refused.run.tests).toContainEqual(
        expect.objectContaining({
          id: 'coachgate: test harness changed',
          message: expect.stringMatching(/^registered with pytest while .* ran .*: calc\.py\./),
        }),
      );
    }, 240_000);
  },
);

/**
 * Start-up points by Python's own protocol: `site` imports `sitecustomize` and `usercustomize`
 * from wherever they sit on the import path, before any watcher of coachgate's starts. The trusted
 * runs put the base's import roots on that path, so a file of that name the Player adds to a source
 * root runs at their start, whatever it then does; the reporter names the tree's files that ran
 * before it.
 */
describe.skipIf(!hasPytest)('start-up hooks on the import path (pytest installed)', () => {
  const tasks = pythonTaskPerTest();
  // Drops the base test of add() before pytest reads its arguments: the trusted run would be green.
  const HOOK =
    'import os\n\nos.environ["PYTEST_ADDOPTS"] = "--deselect tests/test_calc.py::test_add"\n';

  it.each(['sitecustomize.py', 'usercustomize.py'])(
    'refuses %s added to the source root src/, naming it; approves the fix without it',
    async (hook) => {
      const project = await tasks.start(
        { 'src/calc.py': BROKEN_CALC, [`src/${hook}`]: HOOK },
        {
          'pyproject.toml':
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n',
          'src/calc.py': BASE_CALC,
        },
        // The report names the fix alone, so it stays true once the hook is gone.
        { files_modified: ['src/calc.py', 'tests/test_divide.py'] },
      );
      const refused = await project.approve();
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toContain(
        `before the test runner and coachgate's watchers: src/${hook}`,
      );
      rmSync(path.join(project.repo.dir, 'src', hook));
      project.repo.write('src/calc.py', GOOD_CALC);
      const approved = await project.approve();
      expect(approved.result.isError, approved.text).toBeFalsy();
    },
    240_000,
  );
});
