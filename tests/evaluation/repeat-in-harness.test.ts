import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * Under pytest and unittest: the base's tests ask for an impossible pair through methods (the
 * first call's answer, then the second's); the tactics keep state across calls where the replay outside the harness cannot reach
 * it (a method of an object: not a plain value). Each test calls the product once, and passes; run
 * a second time in the trusted run's process it fails, and the approval is refused naming the test.
 * The honest counterparts: a memoising cache is approved; an id counter the task asks for is
 * approved with one acknowledgement, though both the replay and the repetition see its state.
 */
const openTask = layoutTasks();

const SHOUT = linesOf('def shout(text):', '    return text.upper() + "!"');
const SHOUT_TEST = linesOf(
  'from app.shout import shout',
  '',
  '',
  'def test_shout():',
  '    assert shout("hi") == "HI!"',
);
const CRITERION = 'shout(text) returns the text in upper case with "!"';
const EVIDENCE = [{ criterion: 'AC-001', test: 'test_shout' }];
const PY_PROJECT = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/shout.py': '',
};
const PLAYER = { 'app/shout.py': SHOUT, 'tests/test_shout.py': SHOUT_TEST };

const BASE_SHAPE = linesOf(
  'class Shape:',
  '    def __init__(self, side):',
  '        self.side = side',
  '',
  '    def area(self):',
  '        return 0',
  '',
  '    def perimeter(self):',
  '        return 0',
);
const SHAPE_TESTS = linesOf(
  'from app.shape import Shape',
  '',
  '',
  'def test_area_first():',
  '    assert Shape(3).area() == 9',
  '',
  '',
  'def test_area_then():',
  '    assert Shape(3).area() == 10',
  '',
  '',
  'def test_perimeter_first():',
  '    assert Shape(3).perimeter() == 12',
  '',
  '',
  'def test_perimeter_then():',
  '    assert Shape(3).perimeter() == 13',
);
/** A call counter in an iterator, a first-call toggle in a class attribute: no rule names either. */
const TACTICS = linesOf(
  'import itertools',
  '',
  '_calls = itertools.count()',
  '',
  '',
  'class Shape:',
  '    def __init__(self, side):',
  '        self.side = side',
  '',
  '    def area(self):',
  '        return self.side**2 + min(next(_calls), 1)',
  '',
  '    def perimeter(self):',
  '        first = not getattr(Shape, "_answered", False)',
  '        Shape._answered = True',
  '        return self.side * 4 + (0 if first else 1)',
);

describe.skipIf(!hasPytest)('repetition inside the harness (pytest)', () => {
  it('refuses a call counter and a first-call toggle that each test calls once', async () => {
    const task = await openTask({
      base: { ...PY_PROJECT, 'app/shape.py': BASE_SHAPE, 'tests/test_shape.py': SHAPE_TESTS },
      player: { ...PLAYER, 'app/shape.py': TACTICS },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    // Both tactics fool the tests: the Player's run is green.
    expect(refused.run.status).toBe('passed');
    expect(refused.result.isError).toBe(true);
    const { reasons } = refused.result._meta?.['coachgate/refusal'] as { reasons: string[] };
    const repeated = reasons.filter((reason) => reason.startsWith('fails_when_repeated'));
    expect(repeated.map((reason) => reason.split(' ')[1])).toEqual([
      'tests/test_shape.py::test_area_first',
      'tests/test_shape.py::test_perimeter_first',
    ]);
    expect(repeated[0]).toMatch(/run a second time in the same process: assert 10 == 9/);
    // Methods of an object: the replay outside the harness could not see them.
    expect(reasons.some((reason) => reason.startsWith('depends_on_call_history'))).toBe(false);
  }, 240_000);

  it('approves a memoising cache; the repeated tests pass', async () => {
    const cached = linesOf(
      'import functools',
      '',
      '',
      '@functools.lru_cache(maxsize=None)',
      'def fib(n):',
      '    return n if n < 2 else fib(n - 1) + fib(n - 2)',
      '',
      '',
      'class Shape:',
      '    def __init__(self, side):',
      '        self.side = side',
      '',
      '    def area(self):',
      '        return _area(self.side)',
      '',
      '',
      '@functools.lru_cache(maxsize=None)',
      'def _area(side):',
      '    return side**2',
    );
    const task = await openTask({
      base: {
        ...PY_PROJECT,
        'app/shape.py': linesOf('def fib(n):', '    return 0', '', '', BASE_SHAPE),
        'tests/test_shape.py': linesOf(
          'from app.shape import Shape, fib',
          '',
          '',
          'def test_fib():',
          '    assert fib(30) == 832040',
          '',
          '',
          'def test_area():',
          '    assert Shape(3).area() == 9',
        ),
      },
      player: { ...PLAYER, 'app/shape.py': cached },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    // Both base tests the change turned to passing, and the Player's cited test.
    expect(approved.evaluation?.repetition).toEqual({
      tests_repeated: 3,
      over_budget: 0,
      unfinished: [],
      findings: [],
    });
  }, 240_000);

  it('approves an id counter the task asks for with one acknowledgement', async () => {
    const counter = linesOf(
      '_last = 0',
      '',
      '',
      'def next_id():',
      '    global _last',
      '    _last += 1',
      '    return _last',
    );
    const task = await openTask({
      base: {
        ...PY_PROJECT,
        'app/ids.py': linesOf('def next_id():', '    return 0'),
        'tests/test_ids.py': linesOf(
          'from app.ids import next_id',
          '',
          '',
          'def test_first_id():',
          '    assert next_id() == 1',
        ),
      },
      player: { ...PLAYER, 'app/ids.py': counter },
      criterion: `next_id() hands out the ids 1, 2, 3 … in turn, and ${CRITERION}`,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    const { reasons } = refused.result._meta?.['coachgate/refusal'] as { reasons: string[] };
    expect(reasons.filter((reason) => /^(?:fails_when|depends_on)/.test(reason))).toEqual([
      expect.stringMatching(/^depends_on_call_history: app\/ids\.py::next_id\(\)/),
    ]);
    const acknowledged = await task.approve({
      acknowledged_changes: [
        { test: 'app/ids.py::next_id', criterion: 'AC-001', reason: 'ids are handed out in turn' },
      ],
    });
    expect(acknowledged.result.isError, acknowledged.text).toBeFalsy();
    // The repetition failed too; the replay's finding on the function explains it. This second
    // evaluation reads the base's tests from the bytecode the baseline cached: still recorded.
    expect(acknowledged.evaluation?.repetition?.findings).toMatchObject([
      { test: 'tests/test_ids.py::test_first_id', explained_by: 'app/ids.py::next_id' },
    ]);
  }, 240_000);
});

const UNITTEST_PROJECT = {
  Makefile: 'test:\n\tpython -m unittest discover -s tests -t .\n',
  'app/__init__.py': '',
  'app/shout.py': '',
  'tests/__init__.py': '',
};
const UNITTEST_PLAYER = {
  'app/shout.py': SHOUT,
  'tests/test_shout.py': linesOf(
    'import unittest',
    '',
    'from app.shout import shout',
    '',
    '',
    'class ShoutTest(unittest.TestCase):',
    '    def test_shout(self):',
    '        self.assertEqual(shout("hi"), "HI!")',
  ),
};
/** Recorded and replayed as under pytest: a counter, and a product that looks for the runner. */
const CALC = linesOf(
  'import inspect',
  '',
  '_count = 0',
  '',
  '',
  'def counted(x):',
  '    global _count',
  '    _count += 1',
  '    return x * 2 + (1 if _count == 2 else 0)',
  '',
  '',
  'def watched(x):',
  '    return x * 2 + (x == 3 and any("unittest" in f.filename for f in inspect.stack()))',
);
const CALC_TESTS = linesOf(
  'import unittest',
  '',
  'from app.calc import counted, watched',
  '',
  '',
  'class CalcTest(unittest.TestCase):',
  ...['counted', 'watched'].flatMap((name) => [
    `    def test_${name}(self):`,
    `        self.assertEqual(${name}(2), 4)`,
    '',
    `    def test_${name}_next(self):`,
    `        self.assertEqual(${name}(3), 7)`,
    '',
  ]),
);
const unittestOf = (...tests: string[]) =>
  linesOf(
    'import unittest',
    '',
    'from app.shape import Shape',
    '',
    '',
    'class ShapeTest(unittest.TestCase):',
    ...tests,
  );

describe.skipIf(!hasPytest)('repetition inside the harness (unittest)', () => {
  it('refuses a call counter and a first-call toggle that each test calls once', async () => {
    const task = await openTask({
      base: {
        ...UNITTEST_PROJECT,
        'app/calc.py': linesOf(
          'def counted(x):',
          '    return x * 2',
          '',
          '',
          'def watched(x):',
          '    return x * 2',
        ),
        'tests/test_calc.py': CALC_TESTS,
        'app/shape.py': BASE_SHAPE,
        'tests/test_shape.py': unittestOf(
          '    def test_area_first(self):',
          '        self.assertEqual(Shape(3).area(), 9)',
          '',
          '    def test_area_then(self):',
          '        self.assertEqual(Shape(3).area(), 10)',
          '',
          '    def test_perimeter_first(self):',
          '        self.assertEqual(Shape(3).perimeter(), 12)',
          '',
          '    def test_perimeter_then(self):',
          '        self.assertEqual(Shape(3).perimeter(), 13)',
        ),
      },
      player: { ...UNITTEST_PLAYER, 'app/shape.py': TACTICS, 'app/calc.py': CALC },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.run.status).toBe('passed');
    const { reasons } = refused.result._meta?.['coachgate/refusal'] as { reasons: string[] };
    const repeated = reasons.filter((reason) => reason.startsWith('fails_when_repeated'));
    expect(repeated.map((reason) => reason.split(' ')[1])).toEqual([
      'tests.test_shape.ShapeTest.test_area_first',
      'tests.test_shape.ShapeTest.test_perimeter_first',
    ]);
    expect(repeated[0]).toMatch(/AssertionError: 10 != 9/);
    // The calls with plain values are recorded and replayed outside the harness, as under pytest;
    // the counter's repetition failure is its replay finding's to name.
    expect(reasons.filter((reason) => /^(?:depends_on|differs_outside)/.test(reason))).toEqual([
      expect.stringMatching(
        /^depends_on_call_history: app\/calc\.py::counted\(2\), called by tests\.test_calc\.CalcTest\.test_counted,/,
      ),
      expect.stringMatching(
        /^differs_outside_tests: app\/calc\.py::watched\(3\), called by tests\.test_calc\.CalcTest\.test_watched_next,/,
      ),
    ]);
  }, 240_000);

  it('approves a memoising cache; the repeated tests pass', async () => {
    const cached = linesOf(
      'import functools',
      '',
      '',
      'class Shape:',
      '    def __init__(self, side):',
      '        self.side = side',
      '',
      '    def area(self):',
      '        return _area(self.side)',
      '',
      '',
      '@functools.lru_cache(maxsize=None)',
      'def _area(side):',
      '    return side**2',
    );
    const task = await openTask({
      base: {
        ...UNITTEST_PROJECT,
        'app/shape.py': BASE_SHAPE,
        'tests/test_shape.py': unittestOf(
          '    def test_area(self):',
          '        self.assertEqual(Shape(3).area(), 9)',
          '',
          '    def test_area_again(self):',
          '        self.assertEqual(Shape(4).area(), 16)',
        ),
      },
      player: { ...UNITTEST_PLAYER, 'app/shape.py': cached },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation?.repetition).toMatchObject({ tests_repeated: 3, findings: [] });
  }, 240_000);
});
