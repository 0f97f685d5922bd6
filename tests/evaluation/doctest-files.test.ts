import { describe, expect, it } from 'vitest';
import { approvedThenRefused, layoutTasks, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * Doctests from text files. The base runs a text file's examples as doctests: a `load_tests` that
 * adds `doctest.DocFileSuite` (python -m unittest), the same under another name (`from doctest
 * import DocFileSuite as text_suite`), and `doctest.testfile` in a pytest test. Through the MCP
 * client with real runners, the Player who breaks slug() and weakens the file's example to match
 * is refused with doctest_changed naming the file; the Player who adds a function beside it and
 * leaves the file alone is approved.
 */
const openTask = layoutTasks();

const TEXT = (body: string) => linesOf('def slug(text):', `    ${body}`);
const GOOD = TEXT('return text.lower().replace(" ", "-")');
const BROKEN = TEXT('return text.replace(" ", "-")');
const USAGE = (expected: string) =>
  linesOf(
    'Slugs',
    '=====',
    '',
    '>>> from app.text import slug',
    ">>> slug('A B')",
    `'${expected}'`,
  );
const SHOUT = linesOf('', '', 'def shout(text):', '    return text.upper() + "!"');
const loadTests = (imported: string, suite: string) =>
  linesOf(
    imported,
    '',
    '',
    'def load_tests(loader, tests, ignore):',
    `    tests.addTests(${suite}("../docs/usage.txt"))`,
    '    return tests',
  );
const unittestBase = (caller: string) => ({
  Makefile: 'test:\n\tpython -m unittest discover -s tests -t .\n',
  'app/__init__.py': '',
  'app/text.py': GOOD,
  'docs/usage.txt': USAGE('a-b'),
  'tests/__init__.py': '',
  'tests/test_docs.py': caller,
});
const SHOUT_CASE = linesOf(
  'import unittest',
  '',
  'from app.text import shout',
  '',
  '',
  'class ShoutTest(unittest.TestCase):',
  '    def test_shout(self):',
  '        self.assertEqual(shout("hi"), "HI!")',
);
const EVIDENCE = [{ criterion: 'AC-001', test: 'test_shout' }];
const REFUSAL = /doctest_changed in docs\/usage\.txt:5 — a doctest example of `docs\/usage\.txt`/;

describe('doctests from text files under python -m unittest', () => {
  it("approves a function beside the file and refuses a load_tests DocFileSuite's weakened example", async () => {
    await approvedThenRefused({
      base: unittestBase(loadTests('import doctest', 'doctest.DocFileSuite')),
      honest: { 'app/text.py': GOOD + SHOUT, 'tests/test_shout.py': SHOUT_CASE },
      tactic: { 'app/text.py': BROKEN + SHOUT, 'docs/usage.txt': USAGE('A-B') },
      evidence: EVIDENCE,
      taken: {},
      refusal: REFUSAL,
    });
  }, 300_000);

  it('refuses the weakened example when DocFileSuite goes by another name', async () => {
    const task = await openTask({
      base: unittestBase(loadTests('from doctest import DocFileSuite as text_suite', 'text_suite')),
      player: {
        'app/text.py': BROKEN + SHOUT,
        'docs/usage.txt': USAGE('A-B'),
        'tests/test_shout.py': SHOUT_CASE,
      },
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(REFUSAL);
  }, 240_000);
});

describe.skipIf(!hasPytest)('doctests from text files under pytest (pytest installed)', () => {
  it('refuses a weakened example of a file doctest.testfile runs from a test', async () => {
    const task = await openTask({
      base: {
        'pytest.ini': '[pytest]\npythonpath = .\n',
        'app/__init__.py': '',
        'app/text.py': GOOD,
        'docs/usage.txt': USAGE('a-b'),
        'tests/test_docs.py': linesOf(
          'import doctest',
          '',
          '',
          'def test_usage():',
          '    failed, _ = doctest.testfile("docs/usage.txt", module_relative=False)',
          '    assert failed == 0',
        ),
      },
      player: {
        'app/text.py': BROKEN + SHOUT,
        'docs/usage.txt': USAGE('A-B'),
        'tests/test_shout.py': linesOf(
          'from app.text import shout',
          '',
          '',
          'def test_shout():',
          '    assert shout("hi") == "HI!"',
        ),
      },
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(REFUSAL);
  }, 240_000);
});
