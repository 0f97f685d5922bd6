import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { shoutTaskFile } from '../helpers/node-task.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import {
  BROKEN_CALC,
  GOOD_CALC,
  TASK as TASK_ID,
  pythonTask,
  type PythonTask,
} from '../helpers/python-task.js';
import { machinePyenv } from '../helpers/pyenv.js';
import { taskStateDirectory } from '../../src/records/state-directory.js';

/**
 * Snapshot environments never point back into the worktree: a borrowed node_modules or virtualenv must
 * make the trusted and fail-to-pass runs import the snapshot's copy of the project, through the MCP
 * client with real runners.
 */
let repo: TempRepo | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  repo?.remove();
  repo = undefined;
  close = undefined;
});

const TASK = 'TASK-018';
const TASK_FILE = shoutTaskFile(TASK);

async function session(files: string[]) {
  const connection = await connect({ roots: [repo!.dir] });
  close = connection.close;
  const call = (client: Client, name: string, args: Record<string, unknown>) =>
    callTool(client, name, { worktree: repo!.dir, task_id: TASK, ...args });
  await call(connection.client, 'record_player_report', {
    turn: 1,
    report: {
      files_modified: files,
      tests_written: files.filter((file) => file.includes('test/')),
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
  return async (turn: number, test: string) => {
    dataOf(await call(connection.client, 'run_independent_tests', {}));
    const result = await call(connection.client, 'record_verdict', {
      turn,
      decision: 'approve',
      rationale: 'done',
      evidence: [{ criterion: 'AC-001', test }],
    });
    return { result, text: textOf(result) };
  };
}

describe('node_modules that links the package back into the tree', () => {
  const LIB = 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
  const SHOP = { name: 'shop', version: '1.0.0', type: 'module', main: 'src/lib.js' };
  const byName = (body: string) =>
    [
      "import test from 'node:test';",
      "import assert from 'node:assert/strict';",
      "import * as shop from 'shop';", // by package name: through node_modules/shop
      '',
      body,
      '',
    ].join('\n');
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const task = {
    '.gitignore': 'node_modules/\n',
    [`.guardkit/tasks/backlog/${TASK}.md`]: TASK_FILE,
  };

  // No "exports" in either: Node's self-reference by name needs it, so `shop` resolves only through
  // node_modules, as in a project that imports itself by name.
  const layouts = {
    'an npm-workspaces monorepo (node_modules/shop -> ../packages/shop, made by npm install)': {
      package: 'packages/shop',
      files: {
        'package.json': json({
          name: 'mono',
          private: true,
          type: 'module',
          workspaces: ['packages/*'],
          scripts: { test: 'node --test' },
        }),
        'packages/shop/package.json': json(SHOP),
      },
      install(dir: string) {
        execFileSync(
          'npm',
          ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'],
          {
            cwd: dir,
            stdio: 'ignore',
          },
        );
        expect(readlinkSync(path.join(dir, 'node_modules/shop'))).toBe('../packages/shop');
      },
    },
    'a package linked to itself (node_modules/shop -> ..)': {
      package: '.',
      files: { 'package.json': json({ ...SHOP, scripts: { test: 'node --test' } }) },
      install(dir: string) {
        mkdirSync(path.join(dir, 'node_modules'));
        symlinkSync('..', path.join(dir, 'node_modules/shop'));
      },
    },
  };

  it.each(Object.entries(layouts))(
    '%s: the honest fix is approved with the base copy answering the fail-to-pass run, and a test that passes on the base is still caught',
    async (_layout, layout) => {
      const at = (file: string) => path.posix.join(layout.package, file);
      repo = makeRepo({
        ...task,
        ...layout.files,
        [at('src/lib.js')]: LIB,
        [at('test/lib.test.js')]: byName(
          "test('greets by name', () => assert.equal(shop.greet('Ada'), 'Hello, Ada!'));",
        ),
      });
      layout.install(repo.dir);
      repo.commit('installed'); // npm's lockfile, when it wrote one
      repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
      repo.write(
        at('src/lib.js'),
        `${LIB}\nexport function shout(text) {\n  return \`\${text.toUpperCase()}!\`;\n}\n`,
      );
      repo.write(
        at('test/shout.test.js'),
        byName(
          [
            "test('shouts', () => assert.equal(shop.shout('hi'), 'HI!'));",
            "test('still greets', () => assert.equal(shop.greet('Bo'), 'Hello, Bo!'));",
          ].join('\n'),
        ),
      );
      const approve = await session([at('src/lib.js'), at('test/shout.test.js')]);

      // A test that passes on the base code does not exercise the change: still caught.
      const refused = await approve(1, 'still greets');
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(/still greets.*also passes on the base code/);

      const approved = await approve(1, 'shouts');
      expect(approved.result.isError, approved.text).toBeFalsy();
      const evaluation = dataOf(approved.result).evaluation;
      expect(evaluation.taken_from_player).toEqual([at('src/lib.js')]);
      // The base copy answered: it has no shout(), so the new test failed on the base code.
      expect(evaluation.passing_on_base_code).toContain('still greets');
      expect(evaluation.passing_on_base_code).not.toContain('shouts');
    },
    240_000,
  );
});

describe('a vitest resolve.alias into the project', () => {
  it('resolves inside the snapshot: the fail-to-pass run imports the base code through the alias', async () => {
    const lib = 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
    const viaAlias = (body: string) =>
      `import { expect, test } from 'vitest';\nimport * as lib from '@lib/lib.js';\n\n${body}\n`;
    repo = makeRepo({
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }, null, 2),
      'vitest.config.js': [
        "import { fileURLToPath } from 'node:url';",
        "import { defineConfig } from 'vitest/config';",
        '',
        "export default defineConfig({ resolve: { alias: { '@lib': fileURLToPath(new URL('./src', import.meta.url)) } } });",
        '',
      ].join('\n'),
      '.gitignore': 'node_modules/\n',
      'src/lib.js': lib,
      'test/lib.test.js': viaAlias(
        "test('greets by name', () => expect(lib.greet('Ada')).toBe('Hello, Ada!'));",
      ),
      [`.guardkit/tasks/backlog/${TASK}.md`]: TASK_FILE,
    });
    symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules'));
    repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
    repo.write(
      'src/lib.js',
      `${lib}\nexport function shout(text) {\n  return \`\${text.toUpperCase()}!\`;\n}\n`,
    );
    repo.write(
      'test/shout.test.js',
      viaAlias("test('shouts', () => expect(lib.shout('hi')).toBe('HI!'));"),
    );
    const approve = await session(['src/lib.js', 'test/shout.test.js']);
    const approved = await approve(1, 'shouts');
    expect(approved.result.isError, approved.text).toBeFalsy();
    const evaluation = dataOf(approved.result).evaluation;
    expect(evaluation.taken_from_player).toEqual(['src/lib.js']);
    // The fail-to-pass run ran both files: the base test passed there, shout's failed.
    const onBase = evaluation.passing_on_base_code as string[];
    expect(onBase.some((id) => id.includes('greets by name'))).toBe(true);
    expect(onBase.filter((id) => id.includes('shouts'))).toEqual([]);
  }, 240_000);
});

/**
 * pytest plugins in the borrowed virtualenv: a distribution whose entry_points.txt registers a
 * `[pytest11]` plugin is imported by pytest's plugin autoload into every run, the trusted ones too.
 * Here the plugin turns the base tests' failures into passes, hiding the broken add(), and leaves the
 * new test alone, so the fail-to-pass run still sees it fail on the base code.
 */
const hasVenv = (() => {
  try {
    execFileSync('python3', ['-c', 'import venv, pytest'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

// The suite may turn pytest's plugin autoload off for speed (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 in the
// test setup); these tests are about that autoload, so the in-process server's runs get it back. The
// plugins the machine's Python already had (hypothesis, pytest-benchmark: about 1.1 s per pytest
// start) are blocked by name instead: the plugins these tests plant still load.
const { PYTEST_ADDOPTS: addopts } = process.env;
afterAll(() => {
  // Files share their worker process: the next file gets the environment it would have had.
  if (addopts === undefined) delete process.env.PYTEST_ADDOPTS;
  else process.env.PYTEST_ADDOPTS = addopts;
});
delete process.env.PYTEST_DISABLE_PLUGIN_AUTOLOAD;
process.env.PYTEST_ADDOPTS = machinePytestPlugins()
  .map((name) => `-p no:${name}`)
  .join(' ');

function machinePytestPlugins(): string[] {
  const script =
    "import importlib.metadata as m; print(' '.join(e.name for e in m.entry_points(group='pytest11')))";
  try {
    return execFileSync('python3', ['-c', script], { encoding: 'utf8' })
      .split(/\s+/)
      .filter(Boolean);
  } catch {
    return [];
  }
}

const FLIP_PLUGIN = [
  'import pytest',
  '',
  '',
  '@pytest.hookimpl(hookwrapper=True)',
  'def pytest_runtest_makereport(item, call):',
  '    report = (yield).get_result()',
  '    if report.failed and "test_divide" not in item.nodeid:',
  '        report.outcome = "passed"',
  '',
].join('\n');

describe.skipIf(!hasVenv)(
  `a pytest plugin planted in the project virtualenv (python3 with venv and pytest)${hasVenv ? '' : ' — skipped: not installed'}`,
  () => {
    let project: PythonTask | undefined;
    afterEach(async () => {
      await project?.close();
      project?.repo.remove();
      project = undefined;
    });

    const makeVenv = (dir: string) =>
      execFileSync('python3', ['-m', 'venv', '--system-site-packages', '--without-pip', '.venv'], {
        cwd: dir,
      });
    const sitePackages = (dir: string) =>
      path.relative(
        dir,
        execFileSync(
          '.venv/bin/python',
          ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
          { cwd: dir, encoding: 'utf8' },
        ).trim(),
      );
    /** Installs a `flip` distribution as pip would lay it out; its module goes to `moduleDirectory`. */
    function plantPlugin(dir: string, moduleDirectory: string, module = FLIP_PLUGIN): string {
      const site = sitePackages(dir);
      const distInfo = path.join(dir, site, 'flip-1.0.dist-info');
      mkdirSync(distInfo, { recursive: true });
      writeFileSync(
        path.join(distInfo, 'METADATA'),
        'Metadata-Version: 2.1\nName: flip\nVersion: 1.0\n',
      );
      writeFileSync(path.join(distInfo, 'entry_points.txt'), '[pytest11]\nflip = flip_plugin\n');
      const hash = createHash('sha256').update(module).digest('base64url');
      writeFileSync(
        path.join(distInfo, 'RECORD'),
        `flip_plugin.py,sha256=${hash},${module.length}\nflip-1.0.dist-info/RECORD,,\n`,
      );
      writeFileSync(path.join(dir, moduleDirectory, 'flip_plugin.py'), module);
      return `${site}/flip-1.0.dist-info/entry_points.txt`;
    }
    const removePlugin = (dir: string, moduleDirectory: string) => {
      rmSync(path.join(dir, sitePackages(dir), 'flip-1.0.dist-info'), { recursive: true });
      rmSync(path.join(dir, moduleDirectory, 'flip_plugin.py'));
    };
    const escaped = (file: string) => file.replace(/[.]/g, '\\.');

    it('refuses one installed after the base was pinned, naming its entry_points.txt; approves without it', async () => {
      project = await pythonTask(
        { 'calc.py': BROKEN_CALC },
        { '.gitignore': '.venv/\n' },
        {},
        (repo) => makeVenv(repo.dir),
      );
      const dir = project.repo.dir;
      // The pin, out of the Player's reach, recorded the virtualenv as it was: no plugin then.
      const pin = JSON.parse(
        readFileSync(path.join(await taskStateDirectory(dir, TASK_ID), 'pinned-base.json'), 'utf8'),
      );
      expect(Object.keys(pin.environment)).toContain('.venv/bin/python');
      const entryPoints = plantPlugin(dir, sitePackages(dir));
      const refused = await project.approve();
      expect(refused.run.status).toBe('passed'); // the plugin fooled the Player's own run
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        new RegExp(
          `planted environment: ${escaped(entryPoints)} — a pytest plugin \\(flip_plugin\\) added since the base was pinned`,
        ),
      );
      removePlugin(dir, sitePackages(dir));
      project.repo.write('calc.py', GOOD_CALC);
      const honest = await project.approve();
      expect(honest.result.isError, honest.text).toBeFalsy();
    }, 240_000);

    it('refuses an installed plugin edited in place (its file no longer matches its RECORD); approves it restored', async () => {
      const benign = 'def pytest_configure(config):\n    pass\n';
      project = await pythonTask(
        { 'calc.py': BROKEN_CALC },
        { '.gitignore': '.venv/\n' },
        {},
        (repo) => {
          makeVenv(repo.dir);
          plantPlugin(repo.dir, sitePackages(repo.dir), benign); // installed before the pin
        },
      );
      const dir = project.repo.dir;
      const module = `${sitePackages(dir)}/flip_plugin.py`;
      writeFileSync(path.join(dir, module), FLIP_PLUGIN);
      const refused = await project.approve();
      expect(refused.run.status).toBe('passed');
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        new RegExp(
          `planted environment: ${escaped(module)} — a pytest plugin \\(flip_plugin\\): this installed file differs from the sha256 its RECORD lists`,
        ),
      );
      writeFileSync(path.join(dir, module), benign);
      project.repo.write('calc.py', GOOD_CALC);
      const honest = await project.approve();
      expect(honest.result.isError, honest.text).toBeFalsy();
    }, 240_000);

    it('refuses one whose module loads from the worktree in a virtualenv made after the pin; approves without it', async () => {
      project = await pythonTask({ 'calc.py': BROKEN_CALC }, { '.gitignore': '.venv/\n' });
      const dir = project.repo.dir;
      makeVenv(dir); // after the pin: no record of it, so the plugin's shape decides
      const entryPoints = plantPlugin(dir, '.');
      const refused = await project.approve();
      expect(refused.run.status).toBe('passed');
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        new RegExp(
          `planted environment: ${escaped(entryPoints)} — a pytest plugin \\(flip_plugin\\) whose module loads from the worktree \\(flip_plugin\\.py\\)`,
        ),
      );
      removePlugin(dir, '.');
      project.repo.write('calc.py', GOOD_CALC);
      const honest = await project.approve();
      expect(honest.result.isError, honest.text).toBeFalsy();
    }, 240_000);

    it('refuses an installed library the tests use, edited in place to swallow one failure; approves it restored', async () => {
      // An assertion helper installed in the virtualenv, as pip lays out a plain distribution.
      const helper = 'def check_add(add):\n    assert add(2, 3) == 5\n';
      const narrowed = 'def check_add(add):\n    assert add(2, 3) in (5, -1)\n';
      let site = '';
      project = await pythonTask(
        { 'calc.py': BROKEN_CALC },
        {
          '.gitignore': '.venv/\n',
          'tests/test_calc.py':
            'from calc import add\nfrom checks import check_add\n\n\ndef test_add():\n    check_add(add)\n',
        },
        {},
        (repo) => {
          makeVenv(repo.dir);
          site = sitePackages(repo.dir);
          const distInfo = path.join(repo.dir, site, 'checks-1.0.dist-info');
          mkdirSync(distInfo, { recursive: true });
          writeFileSync(
            path.join(distInfo, 'METADATA'),
            'Metadata-Version: 2.1\nName: checks\nVersion: 1.0\n',
          );
          const hash = createHash('sha256').update(helper).digest('base64url');
          writeFileSync(
            path.join(distInfo, 'RECORD'),
            `checks.py,sha256=${hash},${helper.length}\nchecks-1.0.dist-info/RECORD,,\n`,
          );
          writeFileSync(path.join(repo.dir, site, 'checks.py'), helper);
        },
      );
      // After the pin: the Player narrows the installed helper so that only add()'s defect passes.
      writeFileSync(path.join(project.repo.dir, site, 'checks.py'), narrowed);
      const refused = await project.approve();
      expect(refused.run.status).toBe('passed');
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        new RegExp(
          `planted environment: ${escaped(site)}/checks\\.py — an installed file of checks no longer matches the sha256 its RECORD lists`,
        ),
      );
      writeFileSync(path.join(project.repo.dir, site, 'checks.py'), helper);
      project.repo.write('calc.py', GOOD_CALC);
      const honest = await project.approve();
      expect(honest.result.isError, honest.text).toBeFalsy();
    }, 240_000);

    it('approves a project that is itself a pytest plugin, installed editable as pip lays it out', async () => {
      // The base declares the plugin (pytest11) and its module; pip's PEP 660 editable install puts a
      // .pth naming the worktree and the dist-info in the virtualenv: the project's own plugin.
      const plugin = 'import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n';
      const pyproject = [
        '[project]',
        'name = "calc"',
        'version = "1.0"',
        '[project.entry-points.pytest11]',
        'calcplug = "calcplug"',
        '[tool.setuptools]',
        'py-modules = ["calc", "calcplug"]',
        '[tool.pytest.ini_options]',
        'testpaths = ["tests"]',
        'pythonpath = ["."]',
        '',
      ].join('\n');
      project = await pythonTask(
        { 'calc.py': GOOD_CALC },
        { '.gitignore': '.venv/\n', 'pyproject.toml': pyproject, 'calcplug.py': plugin },
        {},
        (repo) => {
          makeVenv(repo.dir);
          const site = path.join(repo.dir, sitePackages(repo.dir));
          const distInfo = path.join(site, 'calc-1.0.dist-info');
          mkdirSync(distInfo, { recursive: true });
          writeFileSync(
            path.join(distInfo, 'METADATA'),
            'Metadata-Version: 2.1\nName: calc\nVersion: 1.0\n',
          );
          writeFileSync(
            path.join(distInfo, 'entry_points.txt'),
            '[pytest11]\ncalcplug = calcplug\n',
          );
          const pth = `${repo.dir}\n`;
          writeFileSync(path.join(site, '__editable__.calc-1.0.pth'), pth);
          const hash = createHash('sha256').update(pth).digest('base64url');
          writeFileSync(
            path.join(distInfo, 'RECORD'),
            `__editable__.calc-1.0.pth,sha256=${hash},${pth.length}\ncalc-1.0.dist-info/RECORD,,\n`,
          );
        },
      );
      const approved = await project.approve();
      expect(approved.result.isError, approved.text).toBeFalsy();
    }, 240_000);

    it("refuses one registered from the worktree through an editable install's .pth; approves without it", async () => {
      project = await pythonTask(
        { 'calc.py': BROKEN_CALC },
        { '.gitignore': '.venv/\n*.egg-info/\n' },
      );
      const dir = project.repo.dir;
      makeVenv(dir);
      // As a legacy editable install lays it out: the .pth names src/, the metadata sits beside the code.
      writeFileSync(path.join(dir, sitePackages(dir), 'flip.pth'), `${path.join(dir, 'src')}\n`);
      mkdirSync(path.join(dir, 'src/flip.egg-info'), { recursive: true });
      writeFileSync(
        path.join(dir, 'src/flip.egg-info/PKG-INFO'),
        'Metadata-Version: 2.1\nName: flip\nVersion: 1.0\n',
      );
      writeFileSync(
        path.join(dir, 'src/flip.egg-info/entry_points.txt'),
        '[pytest11]\nflip = flip_plugin\n',
      );
      writeFileSync(path.join(dir, 'src/flip_plugin.py'), FLIP_PLUGIN);
      const refused = await project.approve();
      expect(refused.run.status).toBe('passed');
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        /planted environment: src\/flip\.egg-info\/entry_points\.txt — a pytest plugin \(flip_plugin\) registered from the worktree/,
      );
      rmSync(path.join(dir, 'src'), { recursive: true });
      project.repo.write('calc.py', GOOD_CALC);
      const honest = await project.approve();
      expect(honest.result.isError, honest.text).toBeFalsy();
    }, 240_000);
  },
);

/**
 * pyenv's Python: the worktree's own `.python-version` (ignored, as many keep it) selects a version
 * the Player's code needs. The trusted runs' snapshots live in the temp directory, where pyenv's shims
 * would start the global version; they must start the version the worktree selects.
 */
// Python 3.12 or later: the Player's code uses a type alias statement.
const pyenv = machinePyenv(/^3\.(1[2-9])\.\d+$/);

describe.skipIf(!pyenv)(
  `pyenv's shims first on PATH (pyenv with a Python >= 3.12 besides the global one)${pyenv ? '' : ' — skipped: not installed'}`,
  () => {
    const savedPath = process.env.PATH;
    afterEach(() => {
      process.env.PATH = savedPath;
    });

    it('the trusted runs start the version the worktree selects, not the global one', async () => {
      // As a pyenv user's shell has it (the suite puts a real interpreter first to skip the shims).
      process.env.PATH = `${pyenv!.shims}${path.delimiter}${savedPath}`;
      repo = makeRepo({
        '.gitignore': '.python-version\n',
        Makefile: 'test:\n\tpython -m unittest discover -s tests -t .\n',
        'shout.py': 'def shout(text):\n    return text.upper()\n',
        'tests/__init__.py': '',
        'tests/test_upper.py': [
          'import unittest',
          'from shout import shout',
          '',
          '',
          'class Upper(unittest.TestCase):',
          '    def test_upper(self):',
          '        self.assertTrue(shout("hi").startswith("HI"))',
          '',
        ].join('\n'),
        [`.guardkit/tasks/backlog/${TASK}.md`]: TASK_FILE,
      });
      repo.commit('base');
      repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
      repo.write('.python-version', `${pyenv!.other}\n`);
      // A type alias statement (Python 3.12): under the global version the module does not import.
      repo.write(
        'shout.py',
        'type Text = str\n\n\ndef shout(text: Text) -> Text:\n    return text.upper() + "!"\n',
      );
      repo.write(
        'tests/test_shout.py',
        [
          'import unittest',
          'from shout import shout',
          '',
          '',
          'class Shout(unittest.TestCase):',
          '    def test_shouts(self):',
          '        self.assertEqual(shout("hi"), "HI!")',
          '',
        ].join('\n'),
      );
      const approve = await session(['shout.py', 'tests/test_shout.py']);
      const approved = await approve(1, 'test_shouts');
      expect(approved.result.isError, approved.text).toBeFalsy();
      const evaluation = dataOf(approved.result).evaluation;
      expect(evaluation.regressions).toEqual([]);
      expect(evaluation.trusted.status).toBe('passed');
      expect(evaluation.passing_on_base_code).toEqual([expect.stringContaining('test_upper')]);
    }, 240_000);
  },
);
