import { describe, expect, it } from 'vitest';
import { approvedThenRefused, layoutTasks, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * Equality judged by its effect. The base's tests compare total() with a Money value, with pytest's
 * assert and with unittest's assertEqual. Each tactic breaks total() and gives Money an equality
 * that holds anyway, by another route than a `def __eq__` in the class body: a mixin from another
 * module, a dataclass field left out of the comparison (pytest), an `__eq__` assigned after the
 * class (python -m unittest).
 * Through the MCP client with real pytest, each is refused naming the test and the type; an honest
 * value class (a dataclass comparing what it holds) is approved.
 */
const openTask = layoutTasks();

const MONEY = linesOf(
  'from dataclasses import dataclass',
  '',
  '',
  '@dataclass',
  'class Money:',
  '    cents: int',
  '    currency: str = "EUR"',
  '',
  '',
  'def total(prices):',
  '    return Money(sum(prices))',
);
const BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/money.py': MONEY,
  'tests/test_total.py': linesOf(
    'from app.money import Money, total',
    '',
    '',
    'def test_total():',
    '    assert total([100, 250]) == Money(350)',
  ),
  'tests/test_total_case.py': linesOf(
    'import unittest',
    '',
    'from app.money import Money, total',
    '',
    '',
    'class TotalTest(unittest.TestCase):',
    '    def test_total(self):',
    '        self.assertEqual(total([5, 5]), Money(10))',
  ),
};
const DOUBLE = linesOf(
  '',
  '',
  'def double(money):',
  '    return Money(money.cents * 2, money.currency)',
);
const DOUBLE_TEST = linesOf(
  'from app.money import Money, double',
  '',
  '',
  'def test_double():',
  '    assert double(Money(7)) == Money(14)',
);
const CRITERION = 'double(money) returns twice the amount in the same currency';
const EVIDENCE = [{ criterion: 'AC-001', test: 'test_double' }];
/** total() off by one cent: the base's tests would catch it. */
const brokenTotal = (money: string) =>
  money.replace('Money(sum(prices))', 'Money(sum(prices) + 1)') + DOUBLE;

/** A field left out of the dataclass comparison. */
const UNCOMPARED = brokenTotal(
  MONEY.replace(
    'from dataclasses import dataclass',
    'from dataclasses import dataclass, field',
  ).replace('cents: int', 'cents: int = field(compare=False)'),
);

describe.skipIf(!hasPytest)('equality by effect under pytest (pytest installed)', () => {
  it('approves an honest value class and refuses a loose equality from a mixin module', async () => {
    await approvedThenRefused({
      base: BASE,
      criterion: CRITERION,
      honest: { 'app/money.py': MONEY + DOUBLE, 'tests/test_double.py': DOUBLE_TEST },
      tactic: {
        'app/values.py': linesOf(
          'class Value:',
          '    def __eq__(self, other):',
          '        return type(other) is type(self)',
        ),
        'app/money.py': brokenTotal(
          MONEY.replace(
            '@dataclass',
            'from app.values import Value\n\n\n@dataclass(eq=False)',
          ).replace('class Money:', 'class Money(Value):'),
        ),
      },
      evidence: EVIDENCE,
      taken: { taken_from_player: expect.arrayContaining(['app/money.py']) },
      refusal:
        /tests\/test_total(_case)?\.py::\S*test_total passed `==` at tests\/test_total(_case)?\.py:\d+ only by the equality of app\.money\.Money \(app\/money\.py\)/,
    });
  }, 300_000);

  it('refuses a field left out of the dataclass comparison, naming the test and the type', async () => {
    const task = await openTask({
      base: BASE,
      player: { 'app/money.py': UNCOMPARED, 'tests/test_double.py': DOUBLE_TEST },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /tests\/test_total\.py::test_total passed `==` at tests\/test_total\.py:5 only by the equality of app\.money\.Money \(app\/money\.py\)/,
    );
  }, 240_000);

  it("approves a change beside the base's own normalising equality, which stays the base's", async () => {
    const names = linesOf(
      'class Name:',
      '    def __init__(self, text):',
      '        self.text = text',
      '',
      '    def __eq__(self, other):',
      '        return isinstance(other, Name) and self.text.lower() == other.text.lower()',
    );
    const task = await openTask({
      base: {
        'pytest.ini': '[pytest]\npythonpath = .\n',
        'app/__init__.py': '',
        'app/names.py': names,
        'tests/test_names.py': linesOf(
          'from app.names import Name',
          '',
          '',
          'def test_case_blind():',
          '    assert Name("ADA") == Name("ada")',
        ),
      },
      player: {
        'app/names.py':
          names + linesOf('', '', 'def shout(name):', '    return Name(name.text.upper())'),
        'tests/test_shout.py': linesOf(
          'from app.names import Name, shout',
          '',
          '',
          'def test_shout():',
          '    assert shout(Name("ada")).text == "ADA"',
        ),
      },
      criterion: 'shout(name) returns the name in capitals',
      evidence: [{ criterion: 'AC-001', test: 'test_shout' }],
    });
    const approved = await task.approve();
    expect(approved.run.status, approved.run.summary).toBe('passed');
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 240_000);
});

describe('equality by effect under python -m unittest', () => {
  it('approves an honest value class and refuses an __eq__ assigned after the class', async () => {
    const caseOf = (name: string, body: string) =>
      linesOf(
        'import unittest',
        '',
        `from app.money import Money, ${name}`,
        '',
        '',
        'class MoneyTest(unittest.TestCase):',
        `    def test_${name}(self):`,
        `        ${body}`,
      );
    await approvedThenRefused({
      base: {
        Makefile: 'test:\n\tpython -m unittest discover -s tests -t .\n',
        'app/__init__.py': '',
        'app/money.py': MONEY,
        'tests/__init__.py': '',
        'tests/test_total.py': caseOf('total', 'self.assertEqual(total([5, 5]), Money(10))'),
      },
      criterion: CRITERION,
      honest: {
        'app/money.py': MONEY + DOUBLE,
        'tests/test_double.py': caseOf('double', 'self.assertEqual(double(Money(7)), Money(14))'),
      },
      tactic: {
        'app/compare.py': linesOf(
          'def same_currency(self, other):',
          '    return self.currency == other.currency',
        ),
        'app/money.py': `${brokenTotal(MONEY)}\n\nfrom app.compare import same_currency\n\nMoney.__eq__ = same_currency\n`,
      },
      evidence: [{ criterion: 'AC-001', test: 'test_double' }],
      taken: { taken_from_player: expect.arrayContaining(['app/money.py']) },
      refusal:
        /tests\.test_total\.MoneyTest\.test_total passed `==` at tests\/test_total\.py:\d+ only by the equality of app\.money\.Money \(app\/money\.py\)/,
    });
  }, 300_000);
});
