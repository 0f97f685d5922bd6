import { describe, expect, it } from 'vitest';
import * as python from '../helpers/python-task.js';

/**
 * A trusted run cut by its time limit: the base tests it never reached are named with that cause,
 * not as tests the Player's code stopped from being collected (real pytest, through the MCP client).
 */
const { BASE_CALC, GOOD_CALC } = python;
const tasks = python.pythonTaskPerTest();

// Collected first; it ends only while calc.READY holds, as at the base.
const WAITS =
  "import time\n\nimport calc\n\n\ndef test_waits():\n    while not getattr(calc, 'READY', False):\n        time.sleep(0.1)\n";

describe.skipIf(!python.hasPytest)('a trusted run that reaches its time limit', () => {
  it('names the limit as the cause of the base tests it never reached', async () => {
    const project = await tasks.start(
      // The Player drops READY and rewrites the waiting test: its own run ends at once.
      { 'calc.py': GOOD_CALC, 'tests/test_a_wait.py': 'def test_waits():\n    pass\n' },
      {
        'calc.py': `${BASE_CALC}\nREADY = True\n`,
        'tests/test_a_wait.py': WAITS,
        // Long enough for the other runs on a loaded machine; the waiting run pays it once.
        '.guardkit/config.yaml': 'toolchain:\n  test_timeout: 10\n',
      },
    );
    const { run, result, text } = await project.approve();
    expect(run.status, text).toBe('passed');
    expect(result.isError, text).toBe(true);
    expect(text).toMatch(/tests\/test_calc\.py::test_add.*reached its time limit/s);
    expect(text).not.toMatch(/test_add passed at the base but did not run[^.]*collected/);
  }, 240_000);
});
