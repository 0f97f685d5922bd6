import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openTask } from '../../src/actions/task-scope.js';
import { stateRoot, taskStateDirectory } from '../../src/records/state-directory.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { greetingProject } from '../helpers/node-project.js';
import { CLI as cli } from '../helpers/cli.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

describe('pinned base (state directory)', () => {
  it('pins the base on first touch; moving main is reported, not followed; only the CLI re-pins', async () => {
    repo = greetingProject();
    const base = repo.git('rev-parse', 'main');
    const { client, close } = await connect({ roots: [repo.dir] });
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    const first = dataOf(await callTool(client, 'task_status', task));
    expect(first.base.commit).toBe(base);
    expect(first.base_moved).toBeNull();

    // The pin lives outside the worktree, in a 0700 directory keyed by the repository and task.
    const directory = await taskStateDirectory(repo.dir, 'TASK-042');
    expect(directory.startsWith(stateRoot())).toBe(true);
    expect(statSync(path.join(directory, 'pinned-base.json')).isFile()).toBe(true);
    expect(statSync(path.dirname(path.dirname(directory))).mode & 0o777).toBe(0o700);

    // The Player commits and makes its own commit the "trusted" base.
    const own = repo.commit('player work');
    repo.git('branch', '-f', 'main', 'HEAD');
    const moved = dataOf(await callTool(client, 'task_status', task));
    expect(moved.base.commit).toBe(base);
    expect(moved.base_moved).toEqual({ pinned: base, resolved: own });
    expect(textOf(await callTool(client, 'task_status', task))).toMatch(/BASE MOVED/);
    const integrity = dataOf(await callTool(client, 'check_test_integrity', task));
    expect(integrity.base_commit).toBe(base);
    expect(integrity.base_moved).toEqual({ pinned: base, resolved: own });

    await callTool(client, 'record_player_report', {
      ...task,
      turn: 1,
      report: { tests_passed: true, files_created: ['src/greet.js'] },
    });
    await callTool(client, 'run_independent_tests', task);
    const evidence = [
      { criterion: 'AC-001', test: 'greets by name' },
      { criterion: 'AC-002', test: 'rejects empty names' },
    ];
    const refused = await callTool(client, 'record_verdict', {
      ...task,
      turn: 1,
      decision: 'approve',
      rationale: 'ok',
      evidence,
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(
      `the base moved since TASK-042 was pinned (pinned ${base}, now resolves to ${own})`,
    );

    // A person re-pins with the CLI; the next evaluation uses the new base.
    const repin = spawnSync(
      process.execPath,
      [cli, 'task', 'pin-base', '--task', 'TASK-042', '--base', 'main', '--worktree', repo.dir],
      { encoding: 'utf8' },
    );
    expect(repin.stderr).toBe('');
    expect(repin.status).toBe(0);
    expect(repin.stdout).toContain(`base pinned to ${own}`);
    expect((await openTask(repo.dir, 'TASK-042')).base_moved).toBeNull();
    await close();
  });

  it('keeps the pin when --base or base_ref would say otherwise', async () => {
    repo = greetingProject();
    const base = repo.git('rev-parse', 'main');
    await openTask(repo.dir, 'TASK-042');
    const other = repo.commit('elsewhere');
    const scope = await openTask(repo.dir, 'TASK-042', 'HEAD');
    expect(scope.base.commit).toBe(base);
    expect(scope.base_moved).toEqual({ pinned: base, resolved: other });
  });
});
