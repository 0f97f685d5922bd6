import { describe, it } from 'vitest';
import { approvedThenRefused, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * pytest names a case whose parameters print no id by its position (`test_percent[case1]`): a case
 * inserted mid-list gives the base's later cases new ids. Through the MCP client with real pytest:
 * the fix with its inserted case is approved; the reverted fix is refused, and the failing case is
 * not called a case that passed at the base (at the base, case1 was another case).
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
const OLD_CASES = ['Case(value=50, want=50)', 'Case(value=150, want=100)'];
const BUGGY = 'def percent(value):\n    return min(value, 100)\n';

describe.skipIf(!hasPytest)('positional parametrize ids (pytest installed)', () => {
  it('a case inserted mid-list: the fix is approved, the reverted fix refused as a moved case', async () => {
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
      tactic: { 'app/clamp.py': BUGGY },
      tacticRun: 'failed',
      criterion: 'percent(value) clamps negative values to 0',
      evidence: [
        { criterion: 'AC-001', test: 'tests/test_clamp.py::test_percent[case1]' },
        { criterion: 'AC-001', file: 'app/clamp.py', snippet: 'max(0, min(value, 100))' },
      ],
      taken: { taken_from_player: ['app/clamp.py'] },
      refusal:
        /tests\/test_clamp\.py::test_percent\[case1\] \(a case at a position that moved: the base has another case under this id\)/,
    });
  }, 240_000);
});
