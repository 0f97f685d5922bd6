import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { dataOf, textOf } from '../helpers/mcp.js';
import { STEP } from '../../src/evaluation/steps.js';
import {
  BROKEN_CALC,
  DIVIDE_EVIDENCE,
  GOOD_CALC,
  PY_TASK,
  TASK,
  hasPytest,
  pythonTask,
  type PythonTask,
} from '../helpers/python-task.js';

/**
 * The trusted runs start beside a stored candidate run of the tree, so record_verdict finds them done or
 * running: real pytest runs through a real MCP client.
 */
let project: PythonTask | undefined;
afterEach(async () => {
  await project?.close();
  project?.repo.remove();
  project = undefined;
});

/** The logs the trusted runs of the task left, by run name (`<run id>-trusted.log` → trusted). */
function runLogs(dir: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const file of readdirSync(path.join(dir, '.guardkit/autobuild', TASK, 'runs'))) {
    const name = /-(baseline|trusted|fail-to-pass|new-tests)\.log$/.exec(file)?.[1];
    if (name) counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

const verdict = { turn: 1, decision: 'approve', rationale: 'done', evidence: DIVIDE_EVIDENCE };

describe.skipIf(!hasPytest)('trusted runs started early (pytest installed)', () => {
  it('record_verdict after run_independent_tests uses the runs the candidate run started', async () => {
    project = await pythonTask({ 'calc.py': GOOD_CALC });
    dataOf(await project.call('run_independent_tests', {}));
    const result = await project.call('record_verdict', verdict);
    const data = dataOf(result);
    expect(data.status).toBe('approved');
    expect(data.evaluation.regressions).toEqual([]);
    // No second set of runs: the approval awaited the first.
    expect(runLogs(project.repo.dir)).toEqual({
      baseline: 1,
      trusted: 1,
      'fail-to-pass': 1,
      'new-tests': 1,
    });
  });

  it('a second task on the same base does not run the baseline again: its approval says so', async () => {
    const other = 'TASK-008';
    project = await pythonTask(
      { 'calc.py': GOOD_CALC },
      { [`.guardkit/tasks/backlog/${other}.md`]: PY_TASK.replace(TASK, other) },
    );
    const approve = async (task: string) => {
      const call = (name: string, args: Record<string, unknown>) =>
        project!.client.callTool({
          name,
          arguments: { worktree: project!.repo.dir, task_id: task, ...args },
        }) as Promise<CallToolResult>;
      if (task !== TASK)
        await call('record_player_report', { turn: 1, report: { tests_passed: true } });
      dataOf(await call('run_independent_tests', {}));
      return dataOf(await call('record_verdict', verdict));
    };
    const first = await approve(TASK);
    expect(first.evaluation.baseline.cached).toBe(false);
    expect(first.trusted_runs_timings[STEP.baseline]).toBeDefined();
    // The runs the second approval rests on are the trusted ones alone: the base's came from the cache.
    const second = await approve(other);
    expect(second.status).toBe('approved');
    expect(second.evaluation.baseline.cached).toBe(true);
    expect(second.trusted_runs_timings[STEP.baseline]).toBeUndefined();
    expect(second.trusted_runs_timings[STEP.trusted]).toBeDefined();
  });

  it('longest first: the runs limited to the Player test file run at the lowest priority', async () => {
    // The base's conftest prints each run's niceness at the end of the run, into the run's log.
    // (Each run's session is lowered alike where Linux has autogroups: tests/runner/run-priority.)
    const report = [
      'import os',
      'def pytest_terminal_summary(terminalreporter):',
      '    terminalreporter.write_line(f"priority: nice {os.nice(0)}")',
      '',
    ].join('\n');
    project = await pythonTask({ 'calc.py': GOOD_CALC }, { 'tests/conftest.py': report });
    dataOf(await project.call('run_independent_tests', {}));
    expect(dataOf(await project.call('record_verdict', verdict)).status).toBe('approved');
    const runs = path.join(project.repo.dir, '.guardkit/autobuild', TASK, 'runs');
    const priorities: Record<string, string> = {};
    for (const file of readdirSync(runs)) {
      const name = /-(baseline|trusted|fail-to-pass|new-tests)\.log$/.exec(file)?.[1];
      const line = /^priority: (.*)$/m.exec(readFileSync(path.join(runs, file), 'utf8'));
      if (name && line) priorities[name] = line[1]!;
    }
    const at = (nice: number) => `nice ${Math.min(19, os.getPriority() + nice)}`;
    expect(priorities).toEqual({
      baseline: at(10),
      trusted: at(10),
      'fail-to-pass': at(19),
      'new-tests': at(19),
    });
  });

  it('a newer tree replaces the runs of the old one: its defect is judged, not the old evaluation', async () => {
    project = await pythonTask({ 'calc.py': GOOD_CALC });
    dataOf(await project.call('run_independent_tests', {}));
    // The Player breaks add() and hides the failing base test from its own run.
    project.repo.write('calc.py', BROKEN_CALC);
    project.repo.write(
      'tests/conftest.py',
      'def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if i.name != "test_add"]\n',
    );
    expect(dataOf(await project.call('run_independent_tests', {})).status).toBe('passed');
    const result = await project.call('record_verdict', verdict);
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(
      /base test tests\/test_calc\.py::test_add passed at the base but failed in the trusted run/,
    );
  });

  it('sends progress while record_verdict waits, so a client resetting its timeout on progress keeps the call alive', async () => {
    // A base test that is slow only in the server's snapshots: the candidate run is quick, the
    // approval waits for the trusted runs.
    project = await pythonTask(
      { 'calc.py': GOOD_CALC },
      {
        'tests/test_slow.py':
          'import os, time\n\n\ndef test_slow():\n    if "coachgate-repo-" not in os.getcwd():\n        time.sleep(12)\n',
      },
    );
    dataOf(await project.call('run_independent_tests', {}));
    const progress: string[] = [];
    const result = (await project.client.callTool(
      {
        name: 'record_verdict',
        arguments: { worktree: project.repo.dir, task_id: TASK, ...verdict },
      },
      undefined,
      {
        onprogress: (notification) => progress.push(notification.message ?? ''),
        // Shorter than the wait: only the progress notifications keep the request alive.
        timeout: 8_000,
        resetTimeoutOnProgress: true,
      },
    )) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(progress.length).toBeGreaterThanOrEqual(3);
    // Each names the step the call waits on: the slow run the candidate run started.
    expect(progress[0]).toMatch(
      /^.+: \d+ s into the call, \d+ tests? finished in the trusted runs$/,
    );
    expect(progress).toContainEqual(
      expect.stringMatching(/(^|; )trusted run: base tests on the Player's code[;:]/),
    );
    // The answer says where the call waited: for the runs started early, not in runs of its own.
    const timings = dataOf(result).timings as Record<string, number>;
    expect(timings[STEP.earlyRuns]).toBeGreaterThan(5);
    expect(Object.keys(timings)).toEqual(
      expect.arrayContaining([
        STEP.git,
        STEP.integrity,
        STEP.requirements,
        STEP.gates,
        STEP.records,
      ]),
    );
    expect(timings[STEP.trusted]).toBeUndefined();
    // The approval's one read of the environment, shared by the runs it reuses and its checks.
    expect(timings[STEP.environment]).toBeDefined();
    // Where the turn's time went: the runs the approval rests on, though started before the call.
    const runs = dataOf(result).trusted_runs_timings as Record<string, number>;
    expect(runs[STEP.trusted]).toBeGreaterThan(5);
    expect(runs[STEP.snapshots]).toBeGreaterThan(0);
    expect(runs[STEP.earlyRuns]).toBeUndefined();
  });

  it('an approval that starts the trusted runs itself answers with the seconds of each', async () => {
    // A base test that already fails: the candidate run fails, so the runs it started are stopped,
    // and the approval (the failure is the base's) makes its own.
    project = await pythonTask(
      { 'calc.py': GOOD_CALC },
      {
        'tests/test_known.py': 'def test_known():\n    assert False\n',
        'tests/test_slow.py':
          'import os, time\n\n\ndef test_slow():\n    if "coachgate-repo-" not in os.getcwd():\n        time.sleep(3)\n',
      },
    );
    expect(dataOf(await project.call('run_independent_tests', {})).status).toBe('failed');
    const progress: string[] = [];
    const result = (await project.client.callTool(
      {
        name: 'record_verdict',
        arguments: { worktree: project.repo.dir, task_id: TASK, ...verdict },
      },
      undefined,
      { onprogress: (notification) => progress.push(notification.message ?? '') },
    )) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const timings = dataOf(result).timings as Record<string, number>;
    expect(timings[STEP.trusted]).toBeGreaterThan(3);
    expect(timings[STEP.trustedRuns]).toBeGreaterThanOrEqual(timings[STEP.trusted]!);
    expect(timings[STEP.snapshots]).toBeGreaterThan(0);
    expect(timings[STEP.environment]).toBeGreaterThan(0);
    expect(timings[STEP.earlyRuns]).toBeUndefined();
    expect(progress).toContainEqual(
      expect.stringMatching(/(^|; )trusted run: base tests on the Player's code[;:]/),
    );
  });
});
