import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTaskWorktree } from '../../src/actions/worktree.js';
import { readDashboard, readRunLog } from '../../src/dashboard/read.js';
import { stateRoot, useStateDirectory } from '../../src/records/state-directory.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import { GOOD_GREET, GREET_TASK, GREET_TESTS } from '../helpers/node-project.js';

const TASK = 'TASK-042';
let repo: TempRepo;
let worktree: string;
let runId: string;

/**
 * The documented worktree flow: `worktree start` from the main checkout, then one Player turn, a
 * server run and feedback recorded in `.guardkit/worktrees/TASK-042`, as the loop's tool calls do.
 */
beforeAll(async () => {
  repo = makeRepo({
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
    [`.guardkit/tasks/backlog/${TASK}.md`]: GREET_TASK,
  });
  worktree = (await startTaskWorktree(repo.dir, TASK)).path;
  repo.write(`.guardkit/worktrees/${TASK}/src/greet.js`, GOOD_GREET);
  repo.write(`.guardkit/worktrees/${TASK}/test/greet.test.js`, GREET_TESTS);
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    const task = { worktree, task_id: TASK };
    dataOf(
      await callTool(client, 'record_player_report', {
        ...task,
        turn: 1,
        report: { tests_passed: true, files_created: ['src/greet.js', 'test/greet.test.js'] },
      }),
    );
    runId = dataOf(await callTool(client, 'run_independent_tests', task)).run_id;
    dataOf(
      await callTool(client, 'record_verdict', {
        ...task,
        turn: 1,
        decision: 'feedback',
        rationale: 'Name the empty-name error in the message.',
      }),
    );
  } finally {
    await close();
  }
});

afterAll(() => repo?.remove());

describe('the read model of a repository whose task runs in its own worktree', () => {
  it('opened on the main checkout: the task, the worktree it runs in, its live state, no tampering', async () => {
    const data = await readDashboard(repo.dir);
    expect(data.state_directory).toBe(stateRoot());
    expect(data.notice).toBeNull();
    expect(data.worktrees.map((item) => [item.label, item.branch])).toEqual([
      ['this checkout', 'main'],
      [`.guardkit/worktrees/${TASK}`, `autobuild/${TASK}`],
    ]);
    const [task] = data.tasks;
    expect(task).toMatchObject({
      id: TASK,
      signed: true,
      problem: null,
      status: 'in_progress',
      worktree: { label: `.guardkit/worktrees/${TASK}`, branch: `autobuild/${TASK}` },
      mirror_tampering: [],
      latest_run: { run_id: runId, status: 'passed', fresh: true },
    });
    expect(data.tampered_tasks).toEqual([]);
    expect(task!.turns.map((turn) => turn.coach?.decision)).toEqual(['feedback']);
    // The run's log is in the worktree the run ran in, and is served from there.
    expect((await readRunLog(repo.dir, TASK, runId))?.text).toContain('greets by name');
  });

  it('names a real edit of a mirror record in the worktree as tampering', async () => {
    const mirror = path.join(worktree, '.guardkit', 'autobuild', TASK, 'verdicts.jsonl');
    const text = readFileSync(mirror, 'utf8');
    writeFileSync(mirror, text.replace('"decision":"feedback"', '"decision":"approve"'));
    try {
      const data = await readDashboard(repo.dir);
      expect(data.tampered_tasks).toEqual([TASK]);
      expect(data.tasks[0]!.mirror_tampering).toEqual([
        {
          file: `.guardkit/autobuild/${TASK}/verdicts.jsonl`,
          entry: 'line 1 (seq 1)',
          difference: 'field decision: server "feedback", mirror "approve"',
        },
      ]);
    } finally {
      writeFileSync(mirror, text);
    }
  });

  it('under another state directory: no signed records there, and no tampering claimed', async () => {
    const other = mkdtempSync(path.join(os.tmpdir(), 'coachgate-other-state-'));
    useStateDirectory(other);
    try {
      const data = await readDashboard(repo.dir);
      expect(data.state_directory).toBe(other);
      expect(data.notice).toBe(`No signed records for this repository in ${other}.`);
      expect(data.key_id).toBeNull();
      expect(data.tampered_tasks).toEqual([]);
      expect(data.tasks.map((task) => [task.id, task.signed, task.mirror_tampering])).toEqual([
        [TASK, false, []],
      ]);
      expect(data.tasks[0]!.problem).toContain(`No signed records of this task in ${other}`);
    } finally {
      useStateDirectory(undefined);
    }
  });
});
