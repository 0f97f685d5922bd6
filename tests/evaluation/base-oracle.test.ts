import { describe, expect, it } from 'vitest';
import { approvedThenRefused, layoutTasks, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * A base test's oracle stays the base's. The base's tests judge render() through a checker in the
 * product's own package (the product imports it too), so the Player's change takes it. Each tactic
 * breaks render() and weakens the checker by another route: a predicate (pytest `assert
 * is_valid(...)`), a checker object's method (unittest `assertTrue`), a list of problems that comes
 * back empty (pytest `assert not problems(...)`). Through the MCP client with real runners, each is
 * refused naming the test and the base's verdict; an honest change beside the checker is approved,
 * and an honest change of what the checker accepts, which a criterion asks for, is approved with
 * one acknowledgement of the tests. A checker method that asks isinstance() of its own class judges
 * the Player's objects as its own in the base's copy too.
 */
const openTask = layoutTasks();

const RENDER = linesOf('def render(items):', '    return ",".join(str(item) for item in items)');
const CHECK = linesOf(
  'import re',
  '',
  'PATTERN = r"\\d+(,\\d+)*"',
  '',
  '',
  'def is_valid(text):',
  '    return re.fullmatch(PATTERN, text) is not None',
  '',
  '',
  'def problems(text):',
  '    return [] if is_valid(text) else ["not a list of numbers: %r" % text]',
  '',
  '',
  'class Checker:',
  '    def accepts(self, text):',
  '        return is_valid(text)',
  '',
  '    def same(self, other):',
  '        return isinstance(other, Checker)',
);
const BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/render.py': RENDER,
  'app/check.py': CHECK,
  'tests/test_render.py': linesOf(
    'from app.check import Checker, is_valid, problems',
    'from app.render import render',
    '',
    '',
    'def test_render_valid():',
    '    assert is_valid(render([1, 2, 3]))',
    '',
    '',
    'def test_render_no_problems():',
    '    assert not problems(render([4, 5]))',
    '',
    '',
    'def test_checker_same():',
    "    # The base's copy of same() judges the Player's objects as its own class's.",
    '    assert Checker().same(Checker())',
  ),
};
const SORTED = linesOf(
  '',
  '',
  'def render_sorted(items):',
  '    return ",".join(str(item) for item in sorted(items))',
);
const SORTED_TEST = linesOf(
  'from app.render import render_sorted',
  '',
  '',
  'def test_render_sorted():',
  '    assert render_sorted([3, 1, 2]) == "1,2,3"',
);
const CRITERION = 'render_sorted(items) renders the items in ascending order';
const EVIDENCE = [{ criterion: 'AC-001', test: 'test_render_sorted' }];
/** render() with a trailing separator: the base's checker refuses it. */
const brokenRender =
  RENDER.replace(
    'return ",".join(str(item) for item in items)',
    'return "".join(str(item) + "," for item in items)',
  ) + SORTED;

describe.skipIf(!hasPytest)('the base oracle under pytest (pytest installed)', () => {
  it('approves a change beside the checker and refuses a weakened predicate', async () => {
    await approvedThenRefused({
      base: BASE,
      criterion: CRITERION,
      honest: {
        'app/render.py': RENDER + SORTED,
        // The checker reworded, its answers the same: the base's copy agrees.
        'app/check.py': CHECK.replace('is not None', 'is not None  # the whole text'),
        'tests/test_sorted.py': SORTED_TEST,
      },
      tactic: {
        'app/render.py': brokenRender,
        'app/check.py': CHECK.replace('PATTERN = r"\\d+(,\\d+)*"', 'PATTERN = r"[\\d,]+"'),
      },
      evidence: EVIDENCE,
      taken: { taken_from_player: expect.arrayContaining(['app/check.py', 'app/render.py']) },
      refusal:
        /base test tests\/test_render\.py::test_render_valid passed at the base but failed in the trusted run[^]*the base's is_valid \(app\/check\.py\) says False where yours says True/,
    });
  }, 300_000);

  it('refuses a list of problems that comes back empty, naming the base answer', async () => {
    const task = await openTask({
      base: BASE,
      player: {
        'app/render.py': brokenRender,
        'app/check.py': CHECK.replace('PATTERN = r"\\d+(,\\d+)*"', 'PATTERN = r".+"').replace(
          'return [] if is_valid(text) else',
          'return [] if text else',
        ),
        'tests/test_sorted.py': SORTED_TEST,
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /base test tests\/test_render\.py::test_render_no_problems passed at the base but failed[^]*the base's problems \(app\/check\.py\) says \["not a list of numbers/,
    );
  }, 240_000);

  it('approves a checker the task changes, with the test acknowledged', async () => {
    const task = await openTask({
      base: BASE,
      player: {
        'app/render.py': (RENDER + SORTED).replaceAll('","', '";"'),
        'app/check.py': CHECK.replace('PATTERN = r"\\d+(,\\d+)*"', 'PATTERN = r"\\d+(;\\d+)*"'),
        'tests/test_sorted.py': SORTED_TEST.replace('"1,2,3"', '"1;2;3"'),
      },
      criterion: 'render separates items with ";" and render_sorted(items) sorts them',
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(/the base's is_valid \(app\/check\.py\) says False/);
    const approved = await task.approve({
      acknowledged_changes: ['test_render_valid', 'test_render_no_problems'].map((test) => ({
        test,
        criterion: 'AC-001',
        reason: 'the task changes the separator, so the checker accepts ";"',
      })),
    });
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 300_000);
});

describe('the base oracle under python -m unittest', () => {
  it("refuses a checker object's method weakened with the code", async () => {
    const task = await openTask({
      base: {
        Makefile: 'test:\n\tpython -m unittest discover -s tests -t .\n',
        'app/__init__.py': '',
        'app/render.py': RENDER,
        'app/check.py': CHECK,
        'tests/__init__.py': '',
        'tests/test_render.py': linesOf(
          'import unittest',
          '',
          'from app.check import Checker',
          'from app.render import render',
          '',
          '',
          'class RenderTest(unittest.TestCase):',
          '    def test_render_valid(self):',
          '        self.assertTrue(Checker().accepts(render([1, 2, 3])))',
        ),
      },
      player: {
        'app/render.py': brokenRender,
        'app/check.py': CHECK.replace('        return is_valid(text)', '        return bool(text)'),
        'tests/test_sorted.py': linesOf(
          'import unittest',
          '',
          'from app.render import render_sorted',
          '',
          '',
          'class SortedTest(unittest.TestCase):',
          '    def test_render_sorted(self):',
          '        self.assertEqual(render_sorted([3, 1, 2]), "1,2,3")',
        ),
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /base test tests\.test_render\.RenderTest\.test_render_valid passed at the base but failed[^]*the base's Checker\.accepts \(app\/check\.py\) says False where yours says True/,
    );
  }, 240_000);
});
