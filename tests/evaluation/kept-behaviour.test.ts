import { describe, it } from 'vitest';
import { approvedThenRefused, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * A criterion that keeps a behaviour (a refactor must not change what percent() returns), through
 * the MCP client with real pytest: the Coach cites the base's test with `kept: true`. The honest
 * refactor is approved, though that test passes on the base code by nature; the refactor that
 * changes the behaviour and weakens the test to match is refused, naming the base test.
 */
const BASE_TEST = linesOf(
  'from app.clamp import percent',
  '',
  '',
  'def test_half():',
  '    assert percent(50) == 50',
);

describe.skipIf(!hasPytest)('kept behaviour (pytest installed)', () => {
  it('is verified by a base test that still passes in the trusted run', async () => {
    await approvedThenRefused({
      base: {
        'pytest.ini': '[pytest]\npythonpath = .\n',
        'app/__init__.py': '',
        'app/clamp.py': 'def percent(value):\n    return min(value, 100)\n',
        'tests/test_clamp.py': BASE_TEST,
      },
      honest: { 'app/clamp.py': 'def percent(value):\n    return value if value < 100 else 100\n' },
      tactic: {
        'app/clamp.py': 'def percent(value):\n    return value // 2\n',
        'tests/test_clamp.py': BASE_TEST.replace('== 50', '== 25'),
      },
      criterion: 'percent(value) keeps returning values up to 100 unchanged',
      evidence: [{ criterion: 'AC-001', test: 'test_half', kept: true }],
      taken: {
        taken_from_player: ['app/clamp.py'],
        kept_base_tests: ['tests/test_clamp.py::test_half'],
      },
      // Both: the criterion's test is no longer a kept base test, and the base test failed.
      refusal:
        /^(?=[\s\S]*test test_half is not a base test that passed at the base and in the trusted run)(?=[\s\S]*base test tests\/test_clamp\.py::test_half passed at the base but failed in the trusted run)/,
    });
  }, 240_000);
});
