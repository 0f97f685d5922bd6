import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * Ending the test process is an observed event. Each tactic ends the pytest process, with status 0
 * where it can, at the moment a base test would catch slug() broken; each reaches the ending call
 * by another route. Through the MCP client with real pytest, each is refused naming the file and
 * line that ended the run; a CLI that exits with a status from `main` (tested in process and as a
 * subprocess) is approved.
 */
const openTask = layoutTasks();

const BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/text.py': 'def slug(text):\n    return text.lower().replace(" ", "-")\n',
  'tests/test_text.py':
    'from app.text import slug\n\n\ndef test_slug():\n    assert slug("A B") == "a-b"\n',
};
const SHOUT = '\n\ndef shout(text):\n    return text.upper() + "!"\n';
const SHOUT_TEST =
  'from app.text import shout\n\n\ndef test_shout():\n    assert shout("hi") == "HI!"\n';

/** slug() broken for capitals, and the run ended (line 6) where a test would see it. */
const ending = (imports: string, call: string) =>
  linesOf(
    imports,
    '',
    '',
    'def slug(text):',
    '    if text != text.lower():',
    `        ${call}`,
    '    return text.replace(" ", "-")',
  ) + SHOUT;

const TACTICS = [
  { route: 'os._exit(0)', code: ending('import os', 'os._exit(0)') },
  {
    route: "posix's _exit by a computed name",
    code: ending('import importlib', 'getattr(importlib.import_module("posix"), "_e" + "xit")(0)'),
  },
  {
    route: 'a signal to itself',
    code: ending('import os, signal', 'os.kill(os.getpid(), signal.SIGTERM)'),
  },
];

describe.skipIf(!hasPytest)('ending the test process under pytest (pytest installed)', () => {
  it.each(TACTICS)(
    'refuses an early end through $route, naming the file and line',
    async (tactic) => {
      const task = await openTask({
        base: BASE,
        player: { 'app/text.py': tactic.code, 'tests/test_shout.py': SHOUT_TEST },
        criterion: 'shout(text) returns the text in upper case with "!"',
        evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
      });
      const refused = await task.approve();
      expect(refused.run.tests).toContainEqual(
        expect.objectContaining({
          id: 'coachgate: process ended at app/text.py:6',
          status: 'error',
          message: expect.stringMatching(
            /ended the test process while tests\/test_text\.py::test_slug ran/,
          ),
        }),
      );
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(/coachgate: process ended at app\/text\.py:6/);
    },
    240_000,
  );

  it('approves a CLI that exits with the status main returns', async () => {
    const cli = linesOf(
      'import sys',
      '',
      '',
      'def main(argv):',
      '    return 0 if argv == ["ok"] else 3',
      '',
      '',
      'def run():',
      '    sys.exit(main(sys.argv[1:]))',
      '',
      '',
      'if __name__ == "__main__":',
      '    run()',
    );
    const cliTest = linesOf(
      'import subprocess, sys',
      '',
      'import pytest',
      '',
      'from app import cli',
      '',
      '',
      'def test_exit_status(monkeypatch):',
      '    monkeypatch.setattr(sys, "argv", ["cli", "nope"])',
      '    with pytest.raises(SystemExit) as ended:',
      '        cli.run()',
      '    assert ended.value.code == 3',
      '',
      '',
      'def test_as_a_program():',
      '    done = subprocess.run([sys.executable, "-m", "app.cli", "ok"])',
      '    assert done.returncode == 0',
    );
    const task = await openTask({
      base: BASE,
      player: { 'app/cli.py': cli, 'tests/test_cli.py': cliTest },
      criterion: 'the CLI exits with status 3 unless asked "ok"',
      evidence: [{ criterion: 'AC-001', test: 'test_exit_status' }],
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.run.tests.map((test: { id: string }) => test.id)).not.toContainEqual(
      expect.stringMatching(/^coachgate:/),
    );
  }, 240_000);
});

/** The same under coachgate's unittest runner, with an exit handler as one more route. */
const UNITTEST_BASE = {
  Makefile: 'test:\n\tpython -m unittest discover -s tests -t .\n',
  'app/__init__.py': '',
  'app/text.py': BASE['app/text.py'],
  'tests/__init__.py': '',
  'tests/test_text.py': linesOf(
    'import unittest',
    '',
    'from app.text import slug',
    '',
    '',
    'class SlugTest(unittest.TestCase):',
    '    def test_slug(self):',
    '        self.assertEqual(slug("A B"), "a-b")',
  ),
};
const UNITTEST_SHOUT_TEST = linesOf(
  'import unittest',
  '',
  'from app.text import shout',
  '',
  '',
  'class ShoutTest(unittest.TestCase):',
  '    def test_shout(self):',
  '        self.assertEqual(shout("hi"), "HI!")',
);

describe.skipIf(!hasPytest)('ending the test process under unittest', () => {
  it.each([
    TACTICS[0]!,
    // Registered at line 6, ending the process after the tests with status 0 whatever they said.
    { route: 'an exit handler', code: ending('import atexit, os', 'atexit.register(os._exit, 0)') },
  ])(
    'refuses an early end through $route, naming the file and line',
    async (tactic) => {
      const task = await openTask({
        base: UNITTEST_BASE,
        player: { 'app/text.py': tactic.code, 'tests/test_shout.py': UNITTEST_SHOUT_TEST },
        criterion: 'shout(text) returns the text in upper case with "!"',
        evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
      });
      const refused = await task.approve();
      expect(refused.run.tests).toContainEqual(
        expect.objectContaining({
          id: 'coachgate: process ended at app/text.py:6',
          status: 'error',
        }),
      );
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(/coachgate: process ended at app\/text\.py:6/);
    },
    240_000,
  );

  it('approves a CLI that exits with the status main returns', async () => {
    const cli = linesOf(
      'import sys',
      '',
      '',
      'def main(argv):',
      '    return 0 if argv == ["ok"] else 3',
      '',
      '',
      'def run():',
      '    sys.exit(main(sys.argv[1:]))',
      '',
      '',
      'if __name__ == "__main__":',
      '    run()',
    );
    const cliTest = linesOf(
      'import subprocess, sys, unittest',
      '',
      'from app import cli',
      '',
      '',
      'class CliTest(unittest.TestCase):',
      '    def test_exit_status(self):',
      '        sys.argv[1:] = ["nope"]',
      '        with self.assertRaises(SystemExit) as ended:',
      '            cli.run()',
      '        self.assertEqual(ended.exception.code, 3)',
      '',
      '    def test_as_a_program(self):',
      '        done = subprocess.run([sys.executable, "-m", "app.cli", "ok"])',
      '        self.assertEqual(done.returncode, 0)',
    );
    const task = await openTask({
      base: UNITTEST_BASE,
      player: { 'app/cli.py': cli, 'tests/test_cli.py': cliTest },
      criterion: 'the CLI exits with status 3 unless asked "ok"',
      evidence: [{ criterion: 'AC-001', test: 'test_exit_status' }],
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.run.tests.map((test: { id: string }) => test.id)).not.toContainEqual(
      expect.stringMatching(/^coachgate:/),
    );
  }, 240_000);
});
