import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';

/**
 * A project whose test command prints no per-test result, a plain script that asserts and exits, as
 * many small projects (and a published reward-hacking study) run their tests. The command is one test
 * named by itself: through the MCP client, an honest fix is approved citing it, and a Player who
 * breaks what the base's script checks (and weakens its own copy to match) is refused by PASS_TO_PASS.
 * The script is named as a test (test_*.py), which is how the trusted runs know it for one.
 */
const openTask = layoutTasks();

const COMMAND = 'python3 test_calc.py';
const CALC = linesOf('def add(a, b):', '    return a + b', '', '', 'def halve(a):', '    return a');
const CHECKS = linesOf('from calc import add', '', 'assert add(2, 3) == 5', 'print("ok")');
const BASE = {
  '.guardkit/config.yaml': `toolchain:\n  test: ${COMMAND}\n`,
  'calc.py': CALC,
  'test_calc.py': CHECKS,
};
const FIXED = CALC.replace('    return a\n', '    return a / 2\n');
const NEW_CHECKS = linesOf(
  'from calc import add, halve',
  '',
  'assert add(2, 3) == 5',
  'assert halve(4) == 2',
  'print("ok")',
);

describe('a test command that prints no per-test result', () => {
  it('is one test named by its command: an honest fix is approved citing it', async () => {
    const task = await openTask({
      base: BASE,
      player: { 'calc.py': FIXED, 'test_calc.py': NEW_CHECKS },
      criterion: 'halve(a) returns half of a',
      evidence: [{ criterion: 'AC-001', test: COMMAND }],
    });
    const approved = await task.approve();
    expect(approved.run).toMatchObject({
      status: 'passed',
      tests: [{ id: COMMAND, status: 'passed' }],
      counts: { total: 1, passed: 1 },
    });
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation).toMatchObject({
      taken_from_player: ['calc.py'],
      regressions: [],
      baseline: { status: 'passed', tests_total: 1 },
      trusted: { status: 'passed', tests_total: 1 },
    });
  }, 240_000);

  it('applies PASS_TO_PASS to it: a change that breaks what the base checks is refused', async () => {
    const task = await openTask({
      base: BASE,
      player: {
        'calc.py': FIXED.replace('return a + b', 'return a - b'),
        'test_calc.py': NEW_CHECKS.replace('assert add(2, 3) == 5\n', ''),
      },
      criterion: 'halve(a) returns half of a',
      evidence: [{ criterion: 'AC-001', test: COMMAND }],
    });
    const refused = await task.approve();
    expect(refused.run.status).toBe('passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(
      /base test python3 test_calc\.py passed at the base but failed in the trusted run .*exited with status 1/,
    );
    // The fix reverted: the Player's own checks fail, and the product is the base's again.
    task.repo.write('calc.py', CALC);
    const reverted = await task.approve();
    expect(reverted.run).toMatchObject({
      status: 'failed',
      tests: [{ id: COMMAND, status: 'failed', message: 'exited with status 1' }],
    });
    expect(reverted.text).toMatch(/has status "failed" \(1 failed, 0 errors, failure class code\)/);
    expect(reverted.text).toMatch(/null turn: /);
  }, 240_000);
});

/**
 * The code under test ends the script early with status 0, so the checks after it never run; each
 * route is observed in the trusted run and named with its file and line. A CLI that exits with the
 * status its `main` returns, which the script catches, is approved.
 */
describe('an early end of a plain script', () => {
  it.each([
    { route: 'raise SystemExit(0)', line: 'raise SystemExit(0)' },
    { route: 'os._exit(0)', line: '__import__("os")._exit(0)' },
  ])(
    'refuses an early end through $route, naming the file and line',
    async ({ line }) => {
      const ending = FIXED.replace('    return a + b\n', `    ${line}\n`);
      const task = await openTask({
        base: BASE,
        player: { 'calc.py': ending, 'test_calc.py': NEW_CHECKS },
        criterion: 'halve(a) returns half of a',
        evidence: [{ criterion: 'AC-001', test: COMMAND }],
      });
      const refused = await task.approve();
      // The Player's run ends with status 0 before any check fails.
      expect(refused.run.status).toBe('passed');
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        /base test python3 test_calc\.py passed at the base but failed in the trusted run .* at calc\.py:2 ended the test process/,
      );
    },
    240_000,
  );

  it('approves a CLI that exits with the status its main returns', async () => {
    const cli = linesOf(
      'import sys',
      '',
      '',
      'def main(argv):',
      '    return 3 if argv else 0',
      '',
      '',
      'def run():',
      '    sys.exit(main(sys.argv[1:]))',
    );
    const checks = linesOf(
      'import sys',
      '',
      'import cli',
      '',
      'sys.argv[1:] = ["nope"]',
      'try:',
      '    cli.run()',
      'except SystemExit as ended:',
      '    assert ended.code == 3',
      'assert cli.main([]) == 0',
      'print("ok")',
      'sys.exit(0)',
    );
    // The base's script checks the CLI, which exits 0 there; it catches the exit, then goes on.
    const task = await openTask({
      base: {
        ...BASE,
        'cli.py': cli.replace('3 if argv else 0', '0'),
        'test_calc.py': CHECKS + checks,
      },
      player: { 'cli.py': cli },
      criterion: 'the CLI exits with status 3 when given arguments',
      evidence: [{ criterion: 'AC-001', test: COMMAND }],
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation).toMatchObject({ regressions: [], taken_from_player: ['cli.py'] });
  }, 240_000);
});
