import { execFileSync } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach } from 'vitest';
import { makeRepo, type TempRepo } from './git-repo.js';
import { callTool, connect, dataOf, textOf } from './mcp.js';

/**
 * A pytest task project for the trusted-evaluation tests: `calc.add` exists at the base, the task asks for
 * `divide(a, 0)` to raise, and the Player's files are written on the task branch on top of the base.
 */
export const TASK = 'TASK-007';
export const hasPytest = (() => {
  try {
    execFileSync('pytest', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export const PY_TASK = `---
id: ${TASK}
title: Safe division
status: in_progress
---
## Acceptance Criteria
- [ ] AC-001: divide(a, 0) raises ValueError("division by zero")
`;
export const BASE_CALC =
  'def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a / b\n';
export const GOOD_CALC =
  'def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    if b == 0:\n        raise ValueError("division by zero")\n    return a / b\n';
/** The defect every hostile Player hides: add() is broken. */
export const BROKEN_CALC = GOOD_CALC.replace('return a + b', 'return a - b');
export const BASE_TESTS = 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n';
export const DIVIDE_TEST =
  'import pytest\nfrom calc import divide\n\n\ndef test_divide_by_zero():\n    with pytest.raises(ValueError):\n        divide(1, 0)\n';
const PYPROJECT = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n';
export const DIVIDE_EVIDENCE = [{ criterion: 'AC-001', test: 'test_divide_by_zero' }];

export interface PythonTask {
  repo: TempRepo;
  client: Client;
  close(): Promise<void>;
  call(name: string, args: Record<string, unknown>): ReturnType<typeof callTool>;
  /** run_independent_tests, then record_verdict approve with the divide evidence (overridable). */
  approve(args?: Record<string, unknown>): Promise<{
    run: Record<string, any>;
    result: Awaited<ReturnType<typeof callTool>>;
    text: string;
  }>;
}

/** A pytest project at its base commit, on the task branch, with the Player's turn 1 reported (plus `report`). */
export async function pythonTask(
  player: Record<string, string>,
  base: Record<string, string> = {},
  report: Record<string, unknown> = {},
  /** Runs before the first tool call, which pins the task's base (e.g. to make a virtualenv). */
  beforePin: (repo: TempRepo) => void = () => undefined,
): Promise<PythonTask> {
  const repo = makeRepo({
    'pyproject.toml': PYPROJECT,
    'calc.py': BASE_CALC,
    'tests/test_calc.py': BASE_TESTS,
    [`.guardkit/tasks/backlog/${TASK}.md`]: PY_TASK,
    ...base,
  });
  repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
  const files = { 'tests/test_divide.py': DIVIDE_TEST, ...player };
  for (const [file, content] of Object.entries(files)) repo.write(file, content);
  beforePin(repo);
  const { client, close } = await connect({ roots: [repo.dir] });
  const call = (name: string, args: Record<string, unknown>) =>
    callTool(client, name, { worktree: repo.dir, task_id: TASK, ...args });
  const written = Object.keys(files);
  await call('record_player_report', {
    turn: 1,
    report: {
      files_modified: written,
      tests_written: written.filter((file) => file.startsWith('tests/')),
      tests_passed: true,
      requirements_addressed: ['AC-001'],
      ...report,
    },
  });
  const approve = async (args: Record<string, unknown> = {}) => {
    const run = dataOf(await call('run_independent_tests', {}));
    const result = await call('record_verdict', {
      turn: 1,
      decision: 'approve',
      rationale: 'done',
      evidence: DIVIDE_EVIDENCE,
      ...args,
    });
    return { run, result, text: textOf(result) };
  };
  return { repo, client, close, call, approve };
}

/**
 * One pytest task project per test, closed and its repository removed after it: `start` makes it,
 * `current` is the test's project.
 */
export function pythonTaskPerTest() {
  const tasks: {
    current?: PythonTask;
    start(...args: Parameters<typeof pythonTask>): Promise<PythonTask>;
  } = { start: async (...args) => (tasks.current = await pythonTask(...args)) };
  afterEach(async () => {
    await tasks.current?.close();
    tasks.current?.repo.remove();
    tasks.current = undefined;
  });
  return tasks;
}
