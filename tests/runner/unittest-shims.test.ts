/**
 * The unittest shims on their own: real `sh`, the real python3 behind them, a real unittest
 * project.
 * A `-m unittest` run records its tests; anything else runs exactly as without the shims.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { unittestShims, writeUnittestShims } from '../../src/runner/unittest-shims.js';
import { parseJUnitXml } from '../../src/runner/report/junit.js';

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function temp(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A project whose second test starts its own `python3 -m unittest` and checks its environment. */
function project(): string {
  const dir = temp('coachgate-unittest-project-');
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  };
  write('tests/__init__.py', '');
  write(
    'tests/test_env.py',
    [
      'import os, subprocess, unittest',
      'class EnvTest(unittest.TestCase):',
      '    def test_sees_the_users_environment(self):',
      "        self.assertEqual(os.environ.get('PYTHONPATH'), '/user/path')",
      "        self.assertNotIn('unittest-shims', os.environ['PATH'])",
      "        self.assertNotIn('COACHGATE_UNITTEST_REPORT', os.environ)",
      '    def test_child_unittest_is_not_recorded(self):',
      "        child = subprocess.run(['python3', '-m', 'unittest', 'inner'], cwd='inner_dir')",
      '        self.assertEqual(child.returncode, 0)',
      '    def test_breaks(self):',
      '        self.assertEqual(1, 2)',
      '',
    ].join('\n'),
  );
  write(
    'inner_dir/inner.py',
    'import unittest\nclass Inner(unittest.TestCase):\n    def test_inner(self): pass\n',
  );
  return dir;
}

/**
 * Shims in a fresh report directory, and a runner of shell lines with them first on PATH (`outer`:
 * after another run's, as when a run's tests start coachgate).
 */
async function shimmed(outer = process.env.PATH) {
  const reportDirectory = temp('coachgate-report-');
  await writeUnittestShims(reportDirectory, process.env.PATH);
  const { bin, channel } = unittestShims(reportDirectory);
  const run = (line: string, cwd: string) =>
    spawnSync('sh', ['-c', line], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${outer}`, PYTHONPATH: '/user/path' },
    });
  const report = () =>
    fs.existsSync(channel.file)
      ? parseJUnitXml(fs.readFileSync(channel.file, 'utf8')).map((t) => `${t.status} ${t.id}`)
      : undefined;
  return { bin, run, report };
}

describe('python shims', () => {
  it('shims only the interpreters the PATH has', async () => {
    const search = temp('coachgate-path-');
    fs.writeFileSync(path.join(search, 'python3'), '');
    fs.writeFileSync(path.join(search, 'pythonista'), '');
    const reportDirectory = temp('coachgate-report-');
    await writeUnittestShims(reportDirectory, search);
    expect(fs.readdirSync(unittestShims(reportDirectory).bin)).toEqual(['python3']);
  });

  it(
    "`python3 -m unittest` records every test, output and exit as unittest's own; " +
      'the tests see no trace of the shims',
    async () => {
      const cwd = project();
      const { run, report } = await shimmed();
      const raw = spawnSync('python3', ['-m', 'unittest'], {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: '/user/path' },
      });
      const result = run('python3 -m unittest', cwd);
      expect(result.status).toBe(raw.status);
      expect(result.status).toBe(1);
      expect(result.stderr.replace(/[\d.]+s/g, '')).toBe(raw.stderr.replace(/[\d.]+s/g, ''));
      expect(report()).toEqual([
        'failed tests.test_env.EnvTest.test_breaks',
        'passed tests.test_env.EnvTest.test_child_unittest_is_not_recorded',
        'passed tests.test_env.EnvTest.test_sees_the_users_environment',
      ]);
    },
  );

  it('checks the harness after each test, as the direct recorder does: a replaced builtin is an error case', async () => {
    const cwd = temp('coachgate-unittest-harness-');
    fs.writeFileSync(
      path.join(cwd, 'test_round.py'),
      [
        'import builtins, unittest',
        'class RoundTest(unittest.TestCase):',
        '    def test_bends(self):',
        '        builtins.round = lambda value, digits=None: 3',
        '    def test_restores(self):',
        '        saved = builtins.len',
        '        builtins.len = lambda value: 0',
        '        builtins.len = saved',
        '',
      ].join('\n'),
    );
    const { run, report } = await shimmed();
    expect(run('python3 -m unittest', cwd).status).toBe(0);
    expect(report()).toEqual([
      'passed test_round.RoundTest.test_bends',
      'error coachgate: test harness changed',
      'passed test_round.RoundTest.test_restores',
    ]);
  });

  it('a run inside another run records into its own report only', async () => {
    const cwd = project();
    const outer = await shimmed();
    const inner = await shimmed(`${outer.bin}:${process.env.PATH}`);
    expect(inner.run('python3 -m unittest', cwd).status).toBe(1);
    expect(inner.report()).toHaveLength(3);
    expect(outer.report()).toBeUndefined();
  });

  it('anything but `-m unittest` runs untouched: arguments, PYTHONPATH and exit code', async () => {
    const cwd = temp('coachgate-plain-');
    const { run, report } = await shimmed();
    const printed = run(
      `python3 -c 'import os, sys; print(sys.argv[1:], os.environ["PYTHONPATH"]); sys.exit(7)' ` +
        `'a b' -m unittest`,
      cwd,
    );
    expect(printed).toMatchObject({ status: 7, stdout: "['a b', '-m', 'unittest'] /user/path\n" });
    expect(run('python3 -m json.tool --help >/dev/null', cwd).status).toBe(0);
    expect(run('python3 -W error -m unittest -h >/dev/null', cwd).status).toBe(0);
    expect(report()).toBeUndefined();
  });
});
