/**
 * coachgate's pytest plugin against pytest itself: every project runs three ways — `python -m
 * pytest` as the user would, with pytest's own `--junitxml`, and through the reporter — and the
 * reporter's run must print and exit as the first and report the ids and statuses of the second.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PYTEST_REPORTER_FILE, writePytestReporter } from '../../src/runner/pytest-reporter.js';
import { countsFromTests } from '../../src/runner/report/counts.js';
import { HARNESS_CHANGED } from '../../src/runner/harness-case.js';
import { parsePytestReportLines } from '../../src/runner/report/pytest-jsonl.js';
import type { TestCaseResult } from '../../src/runner/report/types.js';
import {
  junitReport,
  runInProject,
  runPytest,
  type ProjectFiles,
  type RealRun,
} from './report-real-runs.js';

const MIXED: ProjectFiles = {
  'tests/test_mix.py': [
    'import pytest',
    '',
    '@pytest.fixture',
    'def broken_setup():',
    '    raise RuntimeError("setup broke")',
    '',
    '@pytest.fixture',
    'def broken_teardown():',
    '    yield',
    '    raise RuntimeError("teardown broke")',
    '',
    'def test_pass():',
    '    assert True',
    '',
    'def test_fail():',
    '    assert 1 + 1 == 3',
    '',
    'def test_setup_error(broken_setup):',
    '    pass',
    '',
    'def test_teardown_error(broken_teardown):',
    '    pass',
    '',
    'def test_fail_and_teardown_error(broken_teardown):',
    '    assert False, "call broke"',
    '',
    '@pytest.mark.xfail(reason="known bug")',
    'def test_xfail():',
    '    assert False',
    '',
    '@pytest.mark.xfail(reason="fixed?")',
    'def test_xpass():',
    '    pass',
    '',
    '@pytest.mark.xfail(reason="must fail", strict=True)',
    'def test_xpass_strict():',
    '    pass',
    '',
    '@pytest.mark.skip(reason="later")',
    'def test_skip():',
    '    pass',
    '',
    'def test_skip_inside():',
    '    pytest.skip("not today")',
    '',
    '@pytest.mark.parametrize("n", [1, 2, "a b"])',
    'def test_param(n):',
    '    assert n != 2',
    '',
    'class TestGroup:',
    '    def test_in_class(self):',
    '        pass',
    '    class TestNested:',
    '        def test_nested(self):',
    '            assert 0',
    '',
  ].join('\n'),
  // What the tests see of the process: printed into the failure's captured output, so the console
  // comparison covers sys.path, sys.argv and the environment.
  'tests/test_process.py': [
    'import os, sys',
    '',
    'def test_sees_the_process():',
    '    print("sys.path", sys.path)',
    '    print("sys.argv", sys.argv)',
    '    print("environ", sorted(os.environ.items()))',
    '    assert False',
    '',
  ].join('\n'),
  'tests/test_modskip.py': 'import pytest\npytest.skip("whole module", allow_module_level=True)\n',
  'tests/test_broken.py': 'import module_that_does_not_exist\n',
};

const PASSING: ProjectFiles = {
  'pkg/__init__.py': 'VALUE = 3\n',
  'tests/test_ok.py': [
    'import pytest',
    'from pkg import VALUE',
    '',
    'class TestOk:',
    '    def test_one(self):',
    '        assert VALUE == 3',
    '',
    '@pytest.mark.parametrize("a,b", [(1, 2), (2, 3)], ids=["low", "high"])',
    'def test_less(a, b):',
    '    assert a < b',
    '',
  ].join('\n'),
};

const COLLECTION_ERROR: ProjectFiles = {
  'tests/test_broken.py': 'import module_that_does_not_exist\n',
  'tests/test_ok.py': 'def test_ok():\n    assert True\n',
};

const NO_TESTS: ProjectFiles = { 'tests/helpers.py': 'def helper():\n    return 1\n' };

const INTERNAL_ERROR: ProjectFiles = {
  'conftest.py': 'def pytest_collection_finish(session):\n    raise RuntimeError("boom")\n',
  'tests/test_ok.py': 'def test_ok():\n    assert True\n',
};

interface Comparison {
  /** `python -m pytest`, as the user runs it. */
  raw: RealRun;
  /** `python -m pytest --junitxml`, what coachgate read before. */
  junit: RealRun;
  /** Through coachgate's reporter. */
  plugin: RealRun;
  junitTests: TestCaseResult[];
  pluginTests: TestCaseResult[];
}

let reporterDirectory: string;
let reporter: string;
const runs = {} as Record<
  'mixed' | 'passing' | 'collection' | 'internal' | 'usage' | 'noTests',
  Comparison
>;

function runThreeWays(files: ProjectFiles, args: string[] = []): Comparison {
  const raw = runInProject(files, () => [
    'python3',
    '-m',
    'pytest',
    '-p',
    'no:cacheprovider',
    ...args,
  ]);
  const junit = runPytest(files, args);
  const plugin = runThroughPlugin(files, args);
  return {
    raw,
    junit,
    plugin,
    junitTests: junitReport(junit),
    pluginTests: plugin.report ? parsePytestReportLines(plugin.report) : [],
  };
}

/** A run through coachgate's reporter, as run_independent_tests starts pytest. */
function runThroughPlugin(files: ProjectFiles, args: string[] = []): RealRun {
  return runInProject(files, (_dir, report) => [
    'python3',
    reporter,
    report,
    '-p',
    'no:cacheprovider',
    ...args,
  ]);
}

/** The console text without what differs between any two runs: temp dirs, timings, addresses. */
function comparable(output: string): string {
  return output
    .replace(/coachgate-report-test-\w+/g, 'PROJECT')
    .replace(/ in [\d.]+s\b/g, ' in Ns')
    .replace(/0x[0-9a-f]+/g, '0xADDR');
}

/** pytest's JUnit report calls a skipped module's message "collection skipped"; the plugin gives the reason. */
function withoutModuleSkipMessages(tests: TestCaseResult[]): TestCaseResult[] {
  return tests.map((test) =>
    test.status === 'skipped' && !test.id.includes('::')
      ? { id: test.id, status: test.status }
      : test,
  );
}

/** The JUnit report has no parameter values. */
function withoutCases(tests: TestCaseResult[]): TestCaseResult[] {
  return tests.map(({ case: _values, ...test }) => test);
}

beforeAll(async () => {
  reporterDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'coachgate-pytest-reporter-'));
  await writePytestReporter(reporterDirectory);
  reporter = path.join(reporterDirectory, PYTEST_REPORTER_FILE);
  runs.mixed = runThreeWays(MIXED, ['--continue-on-collection-errors']);
  runs.passing = runThreeWays(PASSING);
  runs.collection = runThreeWays(COLLECTION_ERROR);
  runs.internal = runThreeWays(INTERNAL_ERROR);
  runs.usage = runThreeWays(PASSING, ['--no-such-option']);
  runs.noTests = runThreeWays(NO_TESTS);
});

afterAll(() => fs.rmSync(reporterDirectory, { recursive: true, force: true }));

describe("coachgate's pytest plugin on real pytest runs", () => {
  it('gives each outcome the status the JUnit report gives it, with its message', () => {
    const { pluginTests } = runs.mixed;
    const file = 'tests/test_mix.py';
    const param = (values: string) => ({ function: `${file}::test_param`, values });
    expect(pluginTests).toEqual([
      {
        id: 'tests/test_broken.py',
        status: 'error',
        message: "ModuleNotFoundError: No module named 'module_that_does_not_exist'",
      },
      { id: 'tests/test_modskip.py', status: 'skipped', message: 'whole module' },
      { id: `${file}::test_pass`, status: 'passed' },
      { id: `${file}::test_fail`, status: 'failed', message: 'assert (1 + 1) == 3' },
      { id: `${file}::test_setup_error`, status: 'error', message: 'RuntimeError: setup broke' },
      {
        id: `${file}::test_teardown_error`,
        status: 'error',
        message: 'RuntimeError: teardown broke',
      },
      // As in the JUnit report: the failed call and the teardown error are two cases.
      {
        id: `${file}::test_fail_and_teardown_error`,
        status: 'failed',
        message: 'AssertionError: call broke\nassert False',
      },
      {
        id: `${file}::test_fail_and_teardown_error`,
        status: 'error',
        message: 'RuntimeError: teardown broke',
      },
      { id: `${file}::test_xfail`, status: 'skipped', message: 'known bug' },
      { id: `${file}::test_xpass`, status: 'passed' },
      { id: `${file}::test_xpass_strict`, status: 'failed', message: '[XPASS(strict)] must fail' },
      { id: `${file}::test_skip`, status: 'skipped', message: 'later' },
      { id: `${file}::test_skip_inside`, status: 'skipped', message: 'not today' },
      { id: `${file}::test_param[1]`, status: 'passed', case: param('n=1') },
      {
        id: `${file}::test_param[2]`,
        status: 'failed',
        message: 'assert 2 != 2',
        case: param('n=2'),
      },
      { id: `${file}::test_param[a b]`, status: 'passed', case: param("n='a b'") },
      { id: `${file}::TestGroup::test_in_class`, status: 'passed' },
      { id: `${file}::TestGroup::TestNested::test_nested`, status: 'failed', message: 'assert 0' },
      {
        id: 'tests/test_process.py::test_sees_the_process',
        status: 'failed',
        message: 'assert False',
      },
    ]);
  });

  it('reports the ids, statuses, messages and counts of pytest --junitxml for the same projects', () => {
    for (const name of ['mixed', 'passing', 'collection', 'noTests'] as const) {
      const { junitTests, pluginTests, plugin } = runs[name];
      expect(plugin.report, name).toBeDefined();
      expect(withoutModuleSkipMessages(withoutCases(pluginTests)), name).toEqual(
        withoutModuleSkipMessages(junitTests),
      );
      expect(countsFromTests(pluginTests), name).toEqual(countsFromTests(junitTests));
    }
    expect(runs.passing.pluginTests.map((test) => test.id)).toEqual([
      'tests/test_ok.py::TestOk::test_one',
      'tests/test_ok.py::test_less[low]',
      'tests/test_ok.py::test_less[high]',
    ]);
    expect(runs.collection.pluginTests).toEqual([
      {
        id: 'tests/test_broken.py',
        status: 'error',
        message: "ModuleNotFoundError: No module named 'module_that_does_not_exist'",
      },
    ]);
    expect(runs.noTests.pluginTests).toEqual([]);
  });

  it("gives each parametrized case's values from their structure, never through the project's code", () => {
    const run = runThroughPlugin({
      'tests/test_values.py': [
        'import dataclasses, enum',
        'from types import SimpleNamespace',
        'import pytest',
        '',
        'class Color(enum.Enum):',
        '    RED = 1',
        '',
        '@dataclasses.dataclass',
        'class Point:',
        '    x: int',
        '    tags: list',
        '',
        'class Loud:',
        '    def __init__(self):',
        '        self.n = 1',
        '    def __repr__(self):',
        '        raise SystemExit("repr called")',
        '',
        'class Slotted:',
        '    __slots__ = ("a",)',
        '',
        'class Meta(type):',
        '    @property',
        '    def __module__(cls):',
        '        raise SystemExit("metaclass called")',
        '',
        'class Odd(metaclass=Meta):',
        '    pass',
        '',
        '@pytest.mark.parametrize(',
        '    "case", [SimpleNamespace(v=-5, want={0: (1,)}), Loud(), Odd]',
        ')',
        'def test_plain(case):',
        '    pass',
        '',
        '@pytest.mark.parametrize("a,b", [(Color.RED, Point(1, ["x"])), (Slotted(), len)])',
        'def test_mixed(a, b):',
        '    pass',
      ].join('\n'),
    });
    expect(run.exit_code).toBe(0);
    const file = 'tests/test_values.py';
    expect(parsePytestReportLines(run.report!).map((test) => test.case?.values)).toEqual([
      'case=types.SimpleNamespace(v=-5, want={0: (1,)})',
      'case=test_values.Loud(n=1)',
      'case=test_values.Odd',
      "a=test_values.Color.RED, b=test_values.Point(x=1, tags=['x'])",
      // A slotted instance has no plain structure: the case is known by its id.
      undefined,
    ]);
    expect(parsePytestReportLines(run.report!)[0]!.case?.function).toBe(`${file}::test_plain`);
  });

  it('reports a pytest internal error as an error, as the JUnit report does (its id is pytest.py::internal)', () => {
    const { pluginTests, junitTests } = runs.internal;
    expect(pluginTests).toEqual([
      {
        id: 'pytest internal error',
        status: 'error',
        message: expect.stringMatching(/^Traceback \(most recent call last\)/),
      },
    ]);
    expect(junitTests).toEqual([{ ...pluginTests[0], id: 'pytest.py::internal' }]);
  });

  it('reports a test harness replaced by the code under test as an error case, after the test it changed in', () => {
    const files: ProjectFiles = {
      'pkg/__init__.py': '',
      'pkg/loose.py': [
        'import builtins',
        'import unittest',
        '',
        'unittest.TestCase.assertEqual = lambda self, a, b, msg=None: None',
        'builtins.round = lambda value: 3',
        '',
      ].join('\n'),
      'tests/test_a.py': [
        'import builtins',
        'import unittest',
        '',
        'def test_restored(monkeypatch):',
        '    monkeypatch.setattr(builtins, "input", lambda prompt: "y")',
        '',
        'class LooseTest(unittest.TestCase):',
        '    def test_loose(self):',
        '        import pkg.loose',
        '        self.assertEqual(1, 2)',
        '',
      ].join('\n'),
    };
    const plugin = runThroughPlugin(files);
    const tests = parsePytestReportLines(plugin.report!);
    expect(tests).toContainEqual({ id: 'tests/test_a.py::test_restored', status: 'passed' });
    expect(tests.find((test) => test.id === HARNESS_CHANGED)).toEqual({
      id: HARNESS_CHANGED,
      status: 'error',
      message: expect.stringMatching(
        /^replaced while tests\/test_a\.py::LooseTest::test_loose ran .*: builtins\.round, unittest\.TestCase\.assertEqual\./,
      ),
    });
  });

  it('is not blinded by a replaced getattr, a deleted builtin or a module given its own __getattribute__', () => {
    const files: ProjectFiles = {
      'pkg/__init__.py': '',
      'pkg/sly.py': [
        'import builtins, types, unittest',
        'import pytest',
        '',
        '# Hands the originals back to anyone who checks, after replacing them.',
        'real_getattr, real_assert = builtins.getattr, unittest.TestCase.assertEqual',
        'def getattr(holder, name, *default):',
        '    if holder is builtins and name == "getattr":',
        '        return real_getattr',
        '    if holder is unittest.TestCase and name == "assertEqual":',
        '        return real_assert',
        '    return real_getattr(holder, name, *default)',
        'builtins.getattr = getattr',
        'unittest.TestCase.assertEqual = lambda self, a, b, msg=None: None',
        'del builtins.divmod',
        '',
        'class Lenient(types.ModuleType):',
        '    def __getattribute__(self, name):',
        '        if name == "approx":',
        '            return lambda expected, **options: object.__new__(Equal)',
        '        return super().__getattribute__(name)',
        'class Equal:',
        '    def __eq__(self, other):',
        '        return True',
        'pytest.__class__ = Lenient',
        '',
      ].join('\n'),
      'tests/test_a.py': [
        'import pytest',
        '',
        'def test_sly():',
        '    import pkg.sly',
        '    assert 1 == pytest.approx(2)',
        '',
      ].join('\n'),
    };
    const tests = parsePytestReportLines(runThroughPlugin(files).report!);
    expect(tests).toContainEqual({ id: 'tests/test_a.py::test_sly', status: 'passed' });
    expect(tests.find((test) => test.id === HARNESS_CHANGED)?.message).toMatch(
      /^replaced while tests\/test_a\.py::test_sly ran .*: builtins\.divmod, builtins\.getattr, pytest\.approx, unittest\.TestCase\.assertEqual\./,
    );
  });

  it('names code that registers a plugin with the running pytest, however it is made and handed over, not the conftests and plugins the tests declare', () => {
    // Reaches the running plugin manager without importing pytest: no static rule sees it.
    const hook = (registration: string[]) =>
      [
        'import gc',
        '',
        'class Quiet:',
        '    def pytest_runtest_logreport(self, report):',
        '        pass',
        '',
        'for found in gc.get_objects():',
        '    if type(found).__name__ == "PytestPluginManager":',
        ...registration.map((line) => `        ${line}`),
        '        break',
        '',
      ].join('\n');
    const files: ProjectFiles = {
      'pkg/__init__.py': '',
      'pkg/hook.py': hook(['found.register(Quiet())']),
      'pkg/fixtures.py': 'import pytest\n\n@pytest.fixture\ndef word():\n    return "hi"\n',
      'tests/conftest.py': 'pytest_plugins = ["pkg.fixtures"]\n',
      'tests/test_a.py':
        'def test_word(word):\n    assert word == "hi"\n\ndef test_hook():\n    import pkg.hook\n',
      'tests/test_b.py': 'def test_after():\n    pass\n',
    };
    // In place of a plugin of pytest's own: as many plugins as before the test.
    const swapped = {
      ...files,
      'pkg/hook.py': hook([
        'found.unregister(name="junitxml")',
        'found.register(Quiet(), name="junitxml")',
      ]),
    };
    // A plugin with no file of its own, its code made at run time: known by who registered it.
    const madeAtRunTime = {
      ...files,
      'pkg/hook.py': hook([
        'import types',
        'plugin = types.ModuleType("quiet")',
        'exec("def pytest_runtest_logreport(report):\\n    pass\\n", vars(plugin))',
        'found.register(plugin)',
      ]),
    };
    // A plugin of the standard library's type, registered by the standard library's code (a timer's
    // thread): known by the file of the hooks pluggy will call.
    const handedOver = {
      ...files,
      'pkg/hook.py': hook([
        'import threading, types',
        'plugin = types.ModuleType("quiet")',
        'plugin.pytest_runtest_logreport = Quiet().pytest_runtest_logreport',
        'timer = threading.Timer(0, found.register, (plugin,))',
        'timer.start()',
        'timer.join()',
      ]),
    };
    const honest = {
      ...files,
      'tests/test_a.py': 'def test_word(word):\n    assert word == "hi"\n',
    };
    for (const [project, hooked] of [
      [files, true],
      [swapped, true],
      [madeAtRunTime, true],
      [handedOver, true],
      [honest, false],
    ] as const) {
      let root = '';
      const run = runInProject(project, (dir, report) => {
        root = dir;
        return ['python3', reporter, report, '-p', 'no:cacheprovider'];
      });
      const harness = parsePytestReportLines(run.report!, root).find(
        (test) => test.id === HARNESS_CHANGED,
      );
      if (!hooked) expect(harness).toBeUndefined();
      else
        expect(harness).toEqual({
          id: HARNESS_CHANGED,
          status: 'error',
          message: expect.stringMatching(
            /^registered with pytest while tests\/test_a\.py::test_hook ran .*: pkg\/hook\.py\./,
          ),
        });
    }
  });

  it('lists the real file of each module the session loaded: through a linked directory or file, or ..', () => {
    const files: ProjectFiles = {
      'real_pkg/__init__.py': 'X = 1\n',
      'other/mod_real.py': 'Y = 2\n',
      'tests/test_a.py': [
        'import os, sys',
        'sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "linkdir"))',
        'import pkg, mod, mod_real',
        '',
        'def test_a():',
        '    assert pkg.X + mod.Y + mod_real.Y == 5',
        '',
      ].join('\n'),
    };
    let root = '';
    const run = runInProject(files, (dir, report) => {
      root = fs.realpathSync(dir);
      fs.symlinkSync('real_pkg', path.join(dir, 'pkg'));
      fs.symlinkSync(path.join('other', 'mod_real.py'), path.join(dir, 'mod.py'));
      fs.symlinkSync(path.join(dir, 'other'), path.join(dir, 'linkdir'));
      return ['python3', reporter, report, '-p', 'no:cacheprovider'];
    });
    expect(run.exit_code).toBe(0);
    const lines = run
      .report!.trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; files?: string[] });
    const loaded = lines.find((line) => line.event === 'loaded')?.files ?? [];
    const inProject = loaded.filter((file) => file.startsWith(root + path.sep));
    expect(inProject.map((file) => path.relative(root, file))).toEqual([
      'other/mod_real.py',
      'real_pkg/__init__.py',
      'tests/test_a.py',
    ]);
  });

  it('exits as python -m pytest does: 0, 1, 2, 3, 4 and 5', () => {
    const expected = { passing: 0, mixed: 1, collection: 2, internal: 3, usage: 4, noTests: 5 };
    for (const [name, code] of Object.entries(expected) as [keyof typeof runs, number][]) {
      expect(runs[name].raw.exit_code, name).toBe(code);
      expect(runs[name].plugin.exit_code, name).toBe(code);
    }
  });

  it('prints what python -m pytest prints, and the tests see the same sys.path, argv and environment', () => {
    for (const name of Object.keys(runs) as (keyof typeof runs)[]) {
      const { raw, plugin } = runs[name];
      expect(comparable(plugin.output), name).toBe(comparable(raw.output));
    }
    // The comparison did cover what the tests see, and the reporter's own directory is not on sys.path.
    const printed = runs.mixed.plugin.output;
    expect(printed).toMatch(/sys\.argv \['[^']*pytest\/__main__\.py', '-p', 'no:cacheprovider'/);
    expect(printed).toContain('environ [');
    expect(printed).not.toContain(reporterDirectory);
  });

  it('runs a node id given twice (--keep-duplicates) twice, as two cases like the JUnit report', () => {
    const args = ['--keep-duplicates', 'tests/test_ok.py', 'tests/test_ok.py'];
    const { pluginTests, junitTests } = runThreeWays(PASSING, args);
    expect(pluginTests).toHaveLength(6);
    expect(withoutCases(pluginTests)).toEqual(junitTests);
  });

  it('keeps -P (safe path) as python -P -m pytest has it: the working directory stays off sys.path', () => {
    const raw = runInProject(PASSING, () => [
      'python3',
      '-P',
      '-m',
      'pytest',
      '-p',
      'no:cacheprovider',
    ]);
    const plugin = runInProject(PASSING, (_dir, report) => [
      'python3',
      '-P',
      reporter,
      report,
      '-p',
      'no:cacheprovider',
    ]);
    expect(raw.output).toContain("No module named 'pkg'");
    expect(plugin.exit_code).toBe(raw.exit_code);
    expect(comparable(plugin.output)).toBe(comparable(raw.output));
  });

  it('without pytest installed, says what python -m pytest says', () => {
    const venv = fs.mkdtempSync(path.join(os.tmpdir(), 'coachgate-venv-'));
    try {
      const created = spawnSync('python3', ['-m', 'venv', '--without-pip', venv]);
      expect(created.status).toBe(0);
      const python = path.join(venv, 'bin', 'python');
      const raw = runInProject(PASSING, () => [python, '-m', 'pytest']);
      const plugin = runInProject(PASSING, (_dir, report) => [python, reporter, report]);
      expect(raw.output).toBe(`${python}: No module named pytest\n`);
      expect(plugin.output).toBe(raw.output);
      expect(plugin.exit_code).toBe(1);
    } finally {
      fs.rmSync(venv, { recursive: true, force: true });
    }
  });

  it('leaves the finished tests in the report when the run is killed mid-test', async () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'coachgate-killed-run-'));
    try {
      fs.mkdirSync(path.join(project, 'tests'));
      fs.writeFileSync(
        path.join(project, 'tests/test_hang.py'),
        'import time\n\ndef test_a():\n    pass\n\ndef test_b():\n    assert 1 == 2\n\n' +
          'def test_hangs():\n    time.sleep(60)\n',
      );
      const report = path.join(project, 'report.jsonl');
      const child = spawn('python3', [reporter, report, '-p', 'no:cacheprovider'], {
        cwd: project,
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      // test_b's teardown line is flushed before test_hangs starts sleeping.
      const deadline = Date.now() + 30_000;
      while (!readOr(report).includes('test_b", "when": "teardown"') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      child.kill('SIGKILL');
      await exited;
      expect(parsePytestReportLines(readOr(report))).toEqual([
        { id: 'tests/test_hang.py::test_a', status: 'passed' },
        { id: 'tests/test_hang.py::test_b', status: 'failed', message: 'assert 1 == 2' },
      ]);
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });
});

function readOr(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}
