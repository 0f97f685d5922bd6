import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { hasPytest } from '../helpers/python-task.js';

/**
 * The tests' own inputs in the product: through the MCP client with real pytest, a Player that
 * answers the new test's input by name passes its own run and is refused with
 * special_cases_test_input; the honest rule for the same tests is approved.
 */
const openTask = layoutTasks();

const BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/leap.py': linesOf('def is_leap(year):', '    return year % 4 == 0'),
  'tests/test_leap.py': linesOf(
    'from app.leap import is_leap',
    '',
    '',
    'def test_2024():',
    '    assert is_leap(2024)',
  ),
};

const NEW_TEST = linesOf(
  'from app.leap import is_leap',
  '',
  '',
  'def test_centuries():',
  '    assert not is_leap(1900)',
  '    assert is_leap(2000)',
);

describe.skipIf(!hasPytest)('special_cases_test_input (pytest installed)', () => {
  it('refuses a hard-coded test input, then approves the honest rule', async () => {
    const task = await openTask({
      base: BASE,
      player: {
        'tests/test_centuries.py': NEW_TEST,
        'app/leap.py': linesOf(
          'def is_leap(year):',
          '    if year == 1900:',
          '        return False',
          '    return year % 4 == 0',
        ),
      },
      criterion: 'is_leap(year) follows the Gregorian rule for centuries',
      evidence: [
        { criterion: 'AC-001', file: 'app/leap.py', line: 2, snippet: 'if year == 1900:' },
      ],
    });
    const refused = await task.approve();
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /special_cases_test_input in app\/leap\.py:2 — this added line compares with 1900, a literal of the test's `assert not is_leap\(1900\)` \(tests\/test_centuries\.py:5\)/,
    );

    task.repo.write(
      'app/leap.py',
      linesOf(
        'def is_leap(year):',
        '    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)',
      ),
    );
    const approved = await task.approve({
      evidence: [
        {
          criterion: 'AC-001',
          file: 'app/leap.py',
          line: 2,
          snippet: 'year % 100 != 0 or year % 400 == 0',
        },
      ],
    });
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 240_000);
});
