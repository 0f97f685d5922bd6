import { describe, expect, it } from 'vitest';
import { approvedThenRefused, layoutTask, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * Doctests the Player writes in a product file's docstrings, through the MCP client with real pytest
 * (--doctest-modules): the fail-to-pass run ("your tests on the base code") runs the Player's
 * docstrings spliced into the base's app/clamp.py, so "also passes on the base code" is said of the
 * Player's examples, not of the base's.
 */
const BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\naddopts = --doctest-modules\n',
  'app/__init__.py': '',
  'tests/test_clamp.py': linesOf(
    'from app.clamp import percent',
    '',
    '',
    'def test_high():',
    '    assert percent(150) == 100',
  ),
};

const clamp = (examples: string[], body: string[], doubleDoc: string[] = []) =>
  linesOf(
    'def percent(value):',
    '    """Clamps value to 0..100.',
    '',
    '    >>> percent(150)',
    '    100',
    ...examples,
    '    """',
    ...body,
    '',
    '',
    'def double(value):',
    ...doubleDoc,
    '    return value * 2',
  );

const BUGGY = ['    return min(value, 100)'];
const FIXED = ['    if value < 0:', '        return 0', ...BUGGY];
const NEW_EXAMPLE = ['    >>> percent(-5)', '    0'];
const DOCTEST = 'app/clamp.py::app.clamp.percent';

describe.skipIf(!hasPytest)('doctests the Player adds to product code (pytest installed)', () => {
  it('a new example that fails on the base is approved; the reverted fix is refused', async () => {
    // Before the splice: "test app/clamp.py::app.clamp.percent also passes on the base code", the
    // base's own docstring (150 -> 100) having passed there.
    await approvedThenRefused({
      base: { ...BASE, 'app/clamp.py': clamp([], BUGGY) },
      honest: { 'app/clamp.py': clamp(NEW_EXAMPLE, FIXED) },
      tactic: { 'app/clamp.py': clamp(NEW_EXAMPLE, BUGGY) },
      tacticRun: 'failed',
      criterion: 'percent(value) clamps negative values to 0',
      // The doctest alone: a snippet of the fix beside it would verify the criterion by itself.
      evidence: [{ criterion: 'AC-001', test: DOCTEST }],
      taken: { taken_from_player: ['app/clamp.py'], regressions: [] },
      refusal: /app\.clamp\.percent/,
    });
  }, 240_000);

  it('a new doctest that passes on the base code too is refused as such', async () => {
    // Before: approved, for double() had no docstring at the base, so its doctest never ran there.
    const task = await layoutTask({
      base: { ...BASE, 'app/clamp.py': clamp([], BUGGY) },
      player: {
        'app/clamp.py': clamp([], FIXED, [
          '    """Twice the value.',
          '',
          '    >>> double(2)',
          '    4',
          '    """',
        ]),
      },
      criterion: 'double(value) returns twice the value',
      evidence: [{ criterion: 'AC-001', test: 'app/clamp.py::app.clamp.double' }],
    });
    try {
      const refused = await task.approve();
      expect(refused.run.status, refused.run.summary).toBe('passed');
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        /test app\/clamp\.py::app\.clamp\.double also passes on the base code/,
      );
    } finally {
      await task.close();
    }
  }, 240_000);
});
