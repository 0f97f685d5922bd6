import { describe, it } from 'vitest';
import { approvedThenRefused, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * pytest names a case whose parameters print no id by its position (`test_percent[case1]`): a case
 * inserted mid-list gives the base's later cases new ids. coachgate's reporter gives each case's
 * values, and a case is found at the base by them. Through the MCP client with real pytest: the fix
 * with its inserted case is approved; a change that clamps nothing is refused, naming the inserted
 * case by its values as one the base did not run (at the base, case1 was another case), and the
 * base case it broke, whose id moved, by its values and the base's id for it.
 */
const tests = (cases: string[]) =>
  linesOf(
    'from types import SimpleNamespace as Case',
    '',
    'import pytest',
    '',
    'from app.clamp import percent',
    '',
    'CASES = [',
    ...cases.map((text) => `    ${text},`),
    ']',
    '',
    '',
    '@pytest.mark.parametrize("case", CASES)',
    'def test_percent(case):',
    '    assert percent(case.value) == case.want',
  );
const FILE = 'tests/test_clamp.py';
/** A failing case as the refusal names it: by id, values and how the base's run ended it. */
const named = (id: string, values: string, atBase: string) =>
  `${FILE}::test_percent[${id}] (case=types.SimpleNamespace(${values}): ${atBase})`;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const OLD_CASES = ['Case(value=50, want=50)', 'Case(value=150, want=100)'];
const BUGGY = 'def percent(value):\n    return min(value, 100)\n';

describe.skipIf(!hasPytest)('positional parametrize ids (pytest installed)', () => {
  it('cases inserted mid-list: the fix approved, a break refused naming cases by values', async () => {
    await approvedThenRefused({
      base: {
        'pytest.ini': '[pytest]\npythonpath = .\n',
        'app/__init__.py': '',
        'app/clamp.py': BUGGY,
        'tests/test_clamp.py': tests(OLD_CASES),
      },
      honest: {
        'app/clamp.py': 'def percent(value):\n    return max(0, min(value, 100))\n',
        'tests/test_clamp.py': tests([OLD_CASES[0]!, 'Case(value=-5, want=0)', OLD_CASES[1]!]),
      },
      tactic: { 'app/clamp.py': 'def percent(value):\n    return value\n' },
      tacticRun: 'failed',
      criterion: 'percent(value) clamps negative values to 0',
      evidence: [
        { criterion: 'AC-001', test: 'tests/test_clamp.py::test_percent[case1]' },
        { criterion: 'AC-001', file: 'app/clamp.py', snippet: 'max(0, min(value, 100))' },
      ],
      taken: { taken_from_player: ['app/clamp.py'] },
      refusal: new RegExp(
        escaped(
          [
            named('case1', 'value=-5, want=0', 'did not run at the base'),
            named(
              'case2',
              'value=150, want=100',
              `passed at the base, as ${FILE}::test_percent[case1]`,
            ),
          ].join(', '),
        ),
      ),
    });
  }, 240_000);
});
