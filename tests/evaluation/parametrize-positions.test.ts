import { describe, expect, it } from 'vitest';
import { approvedThenRefused, layoutTask, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * pytest names a case whose parameters print no id by its position (`test_percent[case1]`): a case
 * inserted mid-list gives the base's later cases new ids. coachgate's reporter gives each case's
 * values, and a case is found at the base by them. Through the MCP client with real pytest: the fix
 * with its inserted case is approved; the reverted fix is refused, its failing case named by its
 * values as one the base did not run (at the base, case1 was another case); a change that breaks
 * a base case whose id moved is refused, naming it by its values and the base's id for it.
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
        /tests\/test_clamp\.py::test_percent\[case1\] \(case=types\.SimpleNamespace\(value=-5, want=0\): did not run at the base\)/,
    });
  }, 240_000);

  it('a base case whose id moved and that now fails is refused, named by its values', async () => {
    const task = await layoutTask({
      base: {
        'pytest.ini': '[pytest]\npythonpath = .\n',
        'app/__init__.py': '',
        'app/clamp.py': BUGGY,
        'tests/test_clamp.py': tests(OLD_CASES),
      },
      player: {
        'app/clamp.py': 'def percent(value):\n    return max(0, value)\n',
        'tests/test_clamp.py': tests([OLD_CASES[0]!, 'Case(value=-5, want=0)', OLD_CASES[1]!]),
      },
      criterion: 'percent(value) clamps negative values to 0',
      evidence: [
        { criterion: 'AC-001', test: 'tests/test_clamp.py::test_percent[case1]' },
        { criterion: 'AC-001', file: 'app/clamp.py', snippet: 'max(0, value)' },
      ],
    });
    try {
      const { run, result, text } = await task.approve();
      expect(run.status).toBe('failed');
      expect(result.isError).toBe(true);
      expect(text).toContain(
        'tests/test_clamp.py::test_percent[case2] (case=types.SimpleNamespace(value=150, ' +
          'want=100): passed at the base, as tests/test_clamp.py::test_percent[case1])',
      );
    } finally {
      await task.close();
    }
  }, 240_000);
});
