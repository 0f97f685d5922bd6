import { describe, expect, it } from 'vitest';
import { approvedThenRefused, layoutTasks, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * The suite once in another order, under pytest and python -m unittest. The base's square() is wrong for 3, and a base
 * test shows it; an earlier base test calls the product first. Each tactic answers right only
 * once an earlier test has called into the module: a set of the arguments seen (two are needed),
 * a flag another function sets. Repeated in place each still passes (the state is there), and
 * the calls replayed in order agree; run again from the session's start in reverse order, the
 * test fails, and the approval is refused naming it (fails_in_other_order). The honest
 * counterpart, a memoising cache, is approved.
 */
const openTask = layoutTasks();

const BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/calc.py': linesOf(
    'def load():',
    '    return "ok"',
    '',
    '',
    'def square(x):',
    '    return x',
  ),
  'tests/test_calc.py': linesOf(
    'from app.calc import load, square',
    '',
    '',
    'def test_load():',
    '    assert load() == "ok"',
    '',
    '',
    'def test_square_one():',
    '    assert square(1) == 1',
    '',
    '',
    'def test_square_three():',
    '    assert square(3) == 9',
  ),
};
const NEW_TEST = {
  'tests/test_square_zero.py': linesOf(
    'from app.calc import square',
    '',
    '',
    'def test_square_zero():',
    '    assert square(0) == 0',
  ),
};
const CRITERION = 'square(x) returns x times x';
const EVIDENCE = [{ criterion: 'AC-001', test: 'test_square_three' }];
const REFUSAL =
  /fails_in_other_order: tests\/test_calc\.py::test_square_three passed in the trusted run, then failed when the tests that may show your change ran once more from the session's start in reverse order: assert 3 == 9/;

describe.skipIf(!hasPytest)('the suite in another order under pytest (pytest installed)', () => {
  it('approves a memoising cache and refuses an answer right only after two arguments', async () => {
    await approvedThenRefused({
      base: BASE,
      criterion: CRITERION,
      honest: {
        'app/calc.py': linesOf(
          'import functools',
          '',
          '',
          'def load():',
          '    return "ok"',
          '',
          '',
          '@functools.lru_cache(maxsize=None)',
          'def square(x):',
          '    return x * x',
        ),
        ...NEW_TEST,
      },
      tactic: {
        'app/calc.py': linesOf(
          '_seen = set()',
          '',
          '',
          'def load():',
          '    return "ok"',
          '',
          '',
          'def square(x):',
          '    _seen.add(x)',
          '    return x * x if len(_seen) >= 2 else x',
        ),
      },
      evidence: EVIDENCE,
      taken: { taken_from_player: ['app/calc.py'] },
      refusal: REFUSAL,
    });
  }, 300_000);

  it('refuses an answer right only after an earlier test called another function', async () => {
    const task = await openTask({
      base: BASE,
      player: {
        'app/calc.py': linesOf(
          '_loaded = []',
          '',
          '',
          'def load():',
          '    _loaded.append(True)',
          '    return "ok"',
          '',
          '',
          'def square(x):',
          '    return x * x if _loaded else x',
        ),
        ...NEW_TEST,
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(REFUSAL);
  }, 240_000);
});

describe('the suite in another order under python -m unittest', () => {
  it('refuses an answer right only after an earlier test called the module', async () => {
    const task = await openTask({
      base: {
        Makefile: 'test:\n\tpython -m unittest discover -s tests -t .\n',
        'app/__init__.py': '',
        'app/calc.py': BASE['app/calc.py'],
        'tests/__init__.py': '',
        'tests/test_calc.py': linesOf(
          'import unittest',
          '',
          'from app.calc import square',
          '',
          '',
          'class CalcTest(unittest.TestCase):',
          '    def test_square_one(self):',
          '        self.assertEqual(square(1), 1)',
          '',
          '    def test_square_three(self):',
          '        self.assertEqual(square(3), 9)',
        ),
      },
      player: {
        'app/calc.py': linesOf(
          '_calls = []',
          '',
          '',
          'def load():',
          '    return "ok"',
          '',
          '',
          'def square(x):',
          '    _calls.append(x)',
          '    return x * x if _calls[0] != x else x',
        ),
        'tests/test_square_zero.py': linesOf(
          'import unittest',
          '',
          'from app.calc import square',
          '',
          '',
          'class ZeroTest(unittest.TestCase):',
          '    def test_square_zero(self):',
          '        self.assertEqual(square(0), 0)',
        ),
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /fails_in_other_order: tests\.test_calc\.CalcTest\.test_square_three passed in the trusted run, then failed [^]*AssertionError: 3 != 9/,
    );
  }, 240_000);
});
