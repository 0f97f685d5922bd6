import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * The base's tests hold an impossible pair for each function (f(2) == 4, then f(3) == 7); each
 * tactic below passes both under pytest, by state kept across calls or by looking for the harness
 * through a route no rule names. The trusted run records the tests' calls into the Player's changed
 * file, the replay outside the harness answers otherwise, and the approval is refused naming each
 * function. The honest counterparts (a cache, configuration from the environment, a class with
 * state) are approved without a finding; an id counter the task asks for, with one acknowledgement.
 */
const openTask = layoutTasks();

const SHOUT = linesOf('', '', 'def shout(text):', '    return text.upper() + "!"');
const SHOUT_TEST = linesOf(
  'from app.shout import shout',
  '',
  '',
  'def test_shout():',
  '    assert shout("hi") == "HI!"',
);
const CRITERION = 'shout(text) returns the text in upper case with "!"';
const EVIDENCE = [{ criterion: 'AC-001', test: 'test_shout' }];

/** Each tactic: a function name and its body (x * 2, and 7 where the tests want it). */
const TACTICS: Record<string, string[]> = {
  counter: ['global _counted', '_counted += 1', 'return x * 2 + (1 if _counted == 2 else 0)'],
  first_call: [
    'global _first',
    'was, _first = _first, False',
    'return x * 2 if was else x * 2 + 1',
  ],
  parity: ['global _odd', '_odd = not _odd', 'return x * 2 if _odd else x * 2 + 1'],
  by_stack: [
    'import inspect',
    'watched = any(frame.function.endswith("_next") for frame in inspect.stack())',
    'return x * 2 + watched',
  ],
  by_traceback: [
    'import traceback',
    'watched = any("test" in entry.filename for entry in traceback.extract_stack())',
    'return x * 2 + (watched and x == 3)',
  ],
  by_frame: [
    'import sys',
    'return x * 2 + (x == 3 and sys._getframe(1).f_code.co_name.startswith("test"))',
  ],
  by_environment: [
    'import os',
    'return x * 2 + (x == 3 and any(name.startswith("PYTEST_") for name in os.environ))',
  ],
  by_modules: ['import sys', 'return x * 2 + (x == 3 and "pytest" in sys.modules)'],
};

const STATE = linesOf(
  'import functools',
  '',
  '_counted = 0',
  '_first = True',
  '_odd = False',
  '',
  '',
  'def _traced(function):',
  '    @functools.wraps(function)',
  '    def wrapper(*args, **kwargs):',
  '        return function(*args, **kwargs)',
  '',
  '    return wrapper',
);
/** Hidden behind a decorator of the product's own, and in a lambda: named as the tests call them. */
const HIDDEN = linesOf(
  '',
  '',
  '@_traced',
  'def by_decorated(x):',
  '    import os',
  '    return x * 2 + (x == 3 and "PYTEST_CURRENT_TEST" in os.environ)',
  '',
  '',
  'by_lambda = lambda x: x * 2 + (x == 3 and "_pytest" in __import__("sys").modules)',
);
const NAMES = [...Object.keys(TACTICS), 'by_decorated', 'by_lambda'];
const baseCode = NAMES.map((name) => linesOf('', '', `def ${name}(x):`, '    return x * 2')).join(
  '',
);
const tacticCode = Object.entries(TACTICS)
  .map(([name, body]) => linesOf('', '', `def ${name}(x):`, ...body.map((line) => `    ${line}`)))
  .join('');
const baseTests = linesOf(
  `from app.calc import ${NAMES.join(', ')}`,
  ...NAMES.flatMap((name) => [
    '',
    '',
    `def test_${name}():`,
    `    assert ${name}(2) == 4`,
    '',
    '',
    `def test_${name}_next():`,
    `    assert ${name}(3) == 7`,
  ]),
);
const PY_PROJECT = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/shout.py': '',
};

describe.skipIf(!hasPytest)('replay outside the harness (pytest)', () => {
  it('refuses state kept across calls and a product that looks for the harness', async () => {
    const task = await openTask({
      base: { ...PY_PROJECT, 'app/calc.py': baseCode, 'tests/test_calc.py': baseTests },
      player: {
        'app/calc.py': STATE + tacticCode + HIDDEN,
        'app/shout.py': SHOUT,
        'tests/test_shout.py': SHOUT_TEST,
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    // Every tactic fools the tests: the Player's run is green.
    expect(refused.run.status).toBe('passed');
    expect(refused.result.isError).toBe(true);
    const kinds: Record<string, string> = {
      counter: 'depends_on_call_history',
      first_call: 'depends_on_call_history',
      parity: 'depends_on_call_history',
      by_stack: 'differs_outside_tests',
      by_traceback: 'differs_outside_tests',
      by_frame: 'differs_outside_tests',
      by_environment: 'differs_outside_tests',
      by_modules: 'differs_outside_tests',
      by_decorated: 'differs_outside_tests',
      by_lambda: 'differs_outside_tests',
    };
    // Each reason whole, as the refusal's data carries it (its text shares 2,000 characters).
    const { reasons } = refused.result._meta?.['coachgate/refusal'] as { reasons: string[] };
    const whole = reasons.map((reason) => `- ${reason}`).join('\n');
    const found = [...whole.matchAll(/^- (\w+): app\/calc\.py::(\w+)\(/gm)];
    expect(Object.fromEntries(found.map((match) => [match[2], match[1]]))).toEqual(kinds);
    // Each names the function, its arguments and the test (whole in review.md).
    expect(whole).toMatch(
      /differs_outside_tests: app\/calc\.py::by_frame\(3\), called by tests\/test_calc\.py::test_by_frame_next/,
    );
    expect(whole).toMatch(
      /depends_on_call_history: app\/calc\.py::parity\(2\), called by tests\/test_calc\.py::test_parity,/,
    );
  }, 240_000);

  it('approves a cache, configuration from the environment (the test may set it) and a class with state', async () => {
    const honest = linesOf(
      'import functools',
      'import os',
      '',
      '',
      '@functools.lru_cache(maxsize=None)',
      'def cached(x):',
      '    return x * 2',
      '',
      '',
      'def configured(x):',
      '    return x * int(os.environ.get("CALC_FACTOR", "2"))',
      '',
      '',
      'class Tally:',
      '    def __init__(self):',
      '        self.total = 0',
      '',
      '    def add(self, x):',
      '        self.total += x',
      '        return self.total',
    );
    const tests = linesOf(
      'from app.calc import Tally, cached, configured',
      '',
      '',
      'def test_cached():',
      '    assert cached(2) == 4 and cached(2) == 4 and cached(3) == 6',
      '',
      '',
      'def test_configured():',
      '    assert configured(3) == 6',
      '',
      '',
      'def test_configured_by_the_test(monkeypatch):',
      '    monkeypatch.setenv("CALC_FACTOR", "3")',
      '    assert configured(3) == 9',
      '',
      '',
      'def test_tally():',
      '    tally = Tally()',
      '    assert tally.add(2) == 2 and tally.add(3) == 5',
    );
    const base = linesOf(
      'class Tally:',
      '    def add(self, x):',
      '        return x',
      '',
      '',
      'def cached(x):',
      '    return x + x',
      '',
      '',
      'def configured(x):',
      '    return x + x',
    );
    const task = await openTask({
      base: { ...PY_PROJECT, 'app/calc.py': base, 'tests/test_calc.py': tests },
      player: { 'app/calc.py': honest, 'app/shout.py': SHOUT, 'tests/test_shout.py': SHOUT_TEST },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    // The base's Tally fails its test: a pre-existing failure the Player's change fixes.
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation?.observation).toMatchObject({ findings: [], cut: false });
    expect(approved.evaluation?.observation.calls_compared).toBeGreaterThanOrEqual(3);
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
        'app/ids.py': linesOf('def next_id():', '    return 1'),
        'tests/test_ids.py': linesOf(
          'from app.ids import next_id',
          '',
          '',
          'def test_next_id():',
          '    assert next_id() >= 1',
        ),
      },
      player: { 'app/ids.py': counter, 'app/shout.py': SHOUT, 'tests/test_shout.py': SHOUT_TEST },
      criterion: `next_id() hands out the ids 1, 2, 3 … in turn, and ${CRITERION}`,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.text).toMatch(
      /depends_on_call_history: app\/ids\.py::next_id\(\), called by tests\/test_ids\.py::test_next_id, answered 1 and then 2 when called twice in a row outside the tests \(the test saw 1\)/,
    );
    const acknowledged = await task.approve({
      acknowledged_changes: [
        { test: 'app/ids.py::next_id', criterion: 'AC-001', reason: 'ids are handed out in turn' },
      ],
    });
    expect(acknowledged.result.isError, acknowledged.text).toBeFalsy();
  }, 240_000);
});
