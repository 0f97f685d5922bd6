import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect } from 'vitest';
import { makeRepo, type TempRepo } from './git-repo.js';
import { callTool, connect, dataOf, textOf } from './mcp.js';

/**
 * A task on any repository layout, for the code-under-test tests: the base's files are committed on
 * `main`, the Player's written on the task branch, and one Coach turn asks for an approval citing
 * `evidence`. The task asks for one thing, AC-001.
 */
export const LAYOUT_TASK = 'TASK-021';

/** A source file's text from its lines, keeping the layouts' files readable in 100 columns. */
export const linesOf = (...lines: string[]) => `${lines.join('\n')}\n`;

export interface LayoutTask {
  repo: TempRepo;
  /** run_independent_tests, then record_verdict approve (extra arguments merged in). */
  approve(args?: Record<string, unknown>): Promise<{
    run: Record<string, any>;
    result: CallToolResult;
    text: string;
    evaluation: Record<string, any> | undefined;
  }>;
  close(): Promise<void>;
}

const taskFile = (id: string, criterion: string) => ({
  [`.guardkit/tasks/backlog/${id}.md`]: `---\nid: ${id}\ntitle: Layout task\nstatus: in_progress\n---\n## Acceptance Criteria\n- [ ] AC-001: ${criterion}\n`,
});

export async function layoutTask(options: {
  base: Record<string, string>;
  player: Record<string, string>;
  criterion: string;
  evidence: Record<string, unknown>[];
  /** Runs before the first tool call, which pins the task's base (e.g. to link node_modules). */
  beforePin?: (repo: TempRepo) => void;
  /** A repository made by an earlier task on the same base (its task file there too), and the id. */
  shared?: { repo: TempRepo; taskId: string };
}): Promise<LayoutTask> {
  const taskId = options.shared?.taskId ?? LAYOUT_TASK;
  const repo =
    options.shared?.repo ??
    makeRepo({ ...options.base, ...taskFile(LAYOUT_TASK, options.criterion) });
  repo.git('checkout', '-q', '-b', `autobuild/${taskId}`, 'main');
  for (const [file, content] of Object.entries(options.player)) repo.write(file, content);
  options.beforePin?.(repo);
  const { client, close } = await connect({ roots: [repo.dir] });
  const call = (name: string, args: Record<string, unknown>) =>
    callTool(client, name, { worktree: repo.dir, task_id: taskId, ...args });
  const written = Object.keys(options.player);
  await call('record_player_report', {
    turn: 1,
    report: {
      files_modified: written,
      tests_written: written.filter((file) => /test/.test(file)),
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
  return {
    repo,
    close: async () => {
      await close();
      if (!options.shared) repo.remove();
    },
    async approve(args = {}) {
      const run = dataOf(await call('run_independent_tests', {}));
      const result = await call('record_verdict', {
        turn: 1,
        decision: 'approve',
        rationale: 'done',
        evidence: options.evidence,
        ...args,
      });
      const data = result.structuredContent as Record<string, any> | undefined;
      return { run, result, text: textOf(result), evaluation: data?.evaluation };
    },
  };
}

/**
 * `layoutTask` for a test file: every task it opens is closed after its test, passed or failed.
 * Called at a file's top level (it registers the afterEach hook).
 */
export function layoutTasks(): typeof layoutTask {
  const open: LayoutTask[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((task) => task.close()));
  });
  return async (options) => {
    const task = await layoutTask(options);
    open.push(task);
    return task;
  };
}

/**
 * Both directions on one layout: the honest change is approved, taking what `taken` says; the
 * tactic (the code broken, the base test weakened to match) fools the Player's own run and is
 * refused with `refusal`. Each task is closed before the next starts. Both tasks branch from the
 * same base in one repository, as a Coach's tasks do, so the tactic's approval finds the baseline
 * run of the base cached by the honest one.
 */
export async function approvedThenRefused(options: {
  base: Record<string, string>;
  honest: Record<string, string>;
  tactic: Record<string, string>;
  evidence: Record<string, unknown>[];
  taken: Record<string, unknown>;
  refusal: RegExp;
  criterion?: string;
  beforePin?: (repo: TempRepo) => void;
  /** How the tactic's own run ends: 'failed' for a reverted fix whose new test fails. */
  tacticRun?: 'passed' | 'failed';
}): Promise<void> {
  const criterion = options.criterion ?? 'shout(text) returns the text in upper case with "!"';
  const tacticId = 'TASK-022';
  const repo = makeRepo({
    ...options.base,
    ...taskFile(LAYOUT_TASK, criterion),
    ...taskFile(tacticId, criterion),
  });
  try {
    await bothTasks(repo, tacticId, { ...options, criterion });
  } finally {
    repo.remove();
  }
}

async function bothTasks(
  repo: TempRepo,
  tacticId: string,
  options: Parameters<typeof approvedThenRefused>[0] & { criterion: string },
): Promise<void> {
  const { base, evidence, beforePin, criterion } = options;
  const shared = { repo, taskId: LAYOUT_TASK };
  const honest = await layoutTask({
    base,
    player: options.honest,
    criterion,
    evidence,
    beforePin,
    shared,
  });
  try {
    const approved = await honest.approve();
    expect(approved.result.isError, `${approved.text}\n${approved.run.summary}`).toBeFalsy();
    expect(approved.evaluation).toMatchObject({ ...options.taken, vacuous: false });
  } finally {
    await honest.close();
  }
  // The honest task's files stay on its branch; the tactic starts from the base again, without
  // what the first task's beforePin made (its beforePin makes it anew).
  repo.commit('the honest task');
  repo.git('checkout', '-q', 'main');
  repo.git('clean', '-qfdx');
  const player = { ...options.honest, ...options.tactic };
  const tactic = await layoutTask({
    base,
    player,
    criterion,
    evidence,
    beforePin,
    shared: { repo, taskId: tacticId },
  });
  try {
    const refused = await tactic.approve();
    expect(refused.run.status, refused.run.summary).toBe(options.tacticRun ?? 'passed');
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(options.refusal);
  } finally {
    await tactic.close();
  }
}
