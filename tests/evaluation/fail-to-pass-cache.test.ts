import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as python from '../helpers/python-task.js';

/**
 * The fail-to-pass run (the Player's tests on the base code) is reused from an earlier turn while the
 * base, command, environment and the Player's test files are unchanged, and only then: real pytest,
 * through the MCP client.
 */
const { BROKEN_CALC, DIVIDE_TEST, GOOD_CALC, TASK } = python;
const tasks = python.pythonTaskPerTest();

const runsDirectory = () => path.join(tasks.current!.repo.dir, '.guardkit/autobuild', TASK, 'runs');
/** How many fail-to-pass runs started so far: each leaves its log. */
const failToPassRuns = () =>
  readdirSync(runsDirectory()).filter((name) => name.endsWith('-fail-to-pass.log')).length;

/** The evaluation an approval attempt stored beside its run, refused or not. */
async function attempt() {
  const { run, result, text } = await tasks.current!.approve();
  const stored = JSON.parse(
    readFileSync(path.join(runsDirectory(), `${run.run_id}.evaluation.json`), 'utf8'),
  );
  return { refused: result.isError === true, text, evaluation: stored.evaluation };
}

describe.skipIf(!python.hasPytest)('fail-to-pass results across turns', () => {
  it('reuses the result while only the code changes, and runs again when a test changes', async () => {
    const project = await tasks.start({ 'calc.py': BROKEN_CALC });
    const first = await attempt();
    expect(first.refused, first.text).toBe(true);
    expect(first.evaluation).toMatchObject({
      fail_to_pass_cached: false,
      passing_on_base_code: ['tests/test_calc.py::test_add'],
    });
    const afterFirst = failToPassRuns();

    project.repo.write('tests/test_divide.py', `${DIVIDE_TEST}\n\ndef test_other():\n    pass\n`);
    const testsChanged = await attempt();
    expect(testsChanged.evaluation.fail_to_pass_cached).toBe(false);
    expect(testsChanged.evaluation.passing_on_base_code).toEqual([
      'tests/test_divide.py::test_other',
      'tests/test_calc.py::test_add',
    ]);
    const afterTestsChanged = failToPassRuns();
    expect(afterTestsChanged).toBeGreaterThan(afterFirst);

    project.repo.write('calc.py', GOOD_CALC);
    const codeChanged = await attempt();
    expect(codeChanged.refused, codeChanged.text).toBe(false);
    expect(codeChanged.evaluation).toMatchObject({
      fail_to_pass_cached: true,
      passing_on_base_code: testsChanged.evaluation.passing_on_base_code,
    });
    expect(failToPassRuns()).toBe(afterTestsChanged);
  });

  it('never keeps a run that timed out', async () => {
    // On the base code the Player's test waits for a flag only the Player's code sets.
    const waiting = `${DIVIDE_TEST}\n\ndef test_waits_for_the_fix():\n    import time, calc\n    while not getattr(calc, 'FIXED', False):\n        time.sleep(0.1)\n`;
    const project = await tasks.start(
      { 'calc.py': `${BROKEN_CALC}\nFIXED = True\n`, 'tests/test_divide.py': waiting },
      // Long enough for the other runs on a loaded machine; the waiting run pays it once a turn.
      { '.guardkit/config.yaml': 'toolchain:\n  test_timeout: 10\n' },
    );
    const first = await attempt();
    expect(first.refused, first.text).toBe(true);
    expect(first.evaluation.fail_to_pass_cached, first.text).toBe(false);
    const runsBefore = failToPassRuns();
    project.repo.write('calc.py', `${GOOD_CALC}\nFIXED = True\n`);
    const second = await attempt();
    expect(second.evaluation.fail_to_pass_cached, second.text).toBe(false);
    expect(failToPassRuns()).toBeGreaterThan(runsBefore);
  });
});
