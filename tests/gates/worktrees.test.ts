import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { GOOD_GREET, GREET_TASK, GREET_TESTS } from '../helpers/node-project.js';
import { CLI as cli } from '../helpers/cli.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

const run = (...args: string[]) =>
  spawnSync(process.execPath, [cli, ...args, '--worktree', repo.dir], { encoding: 'utf8' });
const evidence = [
  { criterion: 'AC-001', test: 'greets by name' },
  { criterion: 'AC-002', test: 'rejects empty names' },
];

function project(): TempRepo {
  return makeRepo({
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
    '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK,
  });
}

/** `git` in another directory than the repository's main checkout. */
function gitIn(directory: string, ...args: string[]): string {
  return spawnSync('git', args, { cwd: directory, encoding: 'utf8' }).stdout;
}

/** TASK-042 started in its worktree and approved there, its files left uncommitted. */
async function approvedInWorktree(client: Client): Promise<string> {
  expect(run('worktree', 'start', '--task', 'TASK-042').stdout).toMatch(
    /^started: .*\.guardkit\/worktrees\/TASK-042 on autobuild\/TASK-042 \(from main/,
  );
  const worktree = path.join(repo.dir, '.guardkit/worktrees/TASK-042');
  repo.write('.guardkit/worktrees/TASK-042/src/greet.js', GOOD_GREET);
  repo.write('.guardkit/worktrees/TASK-042/test/greet.test.js', GREET_TESTS);
  const task = { worktree, task_id: 'TASK-042' };
  await callTool(client, 'record_player_report', {
    ...task,
    turn: 1,
    report: { tests_passed: true, files_created: ['src/greet.js'] },
  });
  await callTool(client, 'run_independent_tests', task);
  dataOf(
    await callTool(client, 'record_verdict', {
      ...task,
      turn: 1,
      decision: 'approve',
      rationale: 'verified',
      evidence,
    }),
  );
  return worktree;
}

/** Every merge record in the state directory. */
function mergeRecords(): string[] {
  const state = process.env.COACHGATE_STATE_DIR!;
  return readdirSync(state, { recursive: true, encoding: 'utf8' })
    .filter((file) => path.basename(file) === 'merged.json')
    .sort();
}

describe('task worktrees', () => {
  it('start from the base, refuse to merge before the gate passes, then merge and clean up', async () => {
    repo = project();
    const { client, close } = await connect({ roots: [repo.dir] });
    const started = dataOf(
      await callTool(client, 'worktree_start', { worktree: repo.dir, task_id: 'TASK-042' }),
    );
    const worktree = path.join(repo.dir, '.guardkit/worktrees/TASK-042');
    expect(started).toMatchObject({
      path: worktree,
      branch: 'autobuild/TASK-042',
      base_branch: 'main',
      created: true,
      base_commit: repo.git('rev-parse', 'HEAD'),
    });
    expect(
      dataOf(await callTool(client, 'worktree_start', { worktree: repo.dir, task_id: 'TASK-042' }))
        .created,
    ).toBe(false);
    expect(repo.git('status', '--porcelain')).toBe('');

    const task = { worktree, task_id: 'TASK-042' };
    repo.write('.guardkit/worktrees/TASK-042/src/greet.js', GOOD_GREET);
    repo.write('.guardkit/worktrees/TASK-042/test/greet.test.js', GREET_TESTS);
    const early = dataOf(
      await callTool(client, 'worktree_finish', {
        worktree: repo.dir,
        task_id: 'TASK-042',
        merge: true,
      }),
    );
    expect(early.outcome).toBe('gate_failed');
    expect(early.reasons.join('\n')).toMatch(/task is in_progress, not approved/);

    await callTool(client, 'record_player_report', {
      ...task,
      turn: 1,
      report: { tests_passed: true, files_created: ['src/greet.js'] },
    });
    await callTool(client, 'run_independent_tests', task);
    expect(
      dataOf(
        await callTool(client, 'record_verdict', {
          ...task,
          turn: 1,
          decision: 'approve',
          rationale: 'verified',
          evidence,
        }),
      ).status,
    ).toBe('approved');
    expect(
      dataOf(
        await callTool(client, 'worktree_finish', {
          worktree: repo.dir,
          task_id: 'TASK-042',
          merge: false,
        }),
      ).outcome,
    ).toBe('not_confirmed');
    const cliRefusal = run('worktree', 'finish', '--task', 'TASK-042');
    expect(cliRefusal.status).toBe(1);
    expect(cliRefusal.stdout).toMatch(/merge was not confirmed \(pass --auto-merge/);

    const merged = run('worktree', 'finish', '--task', 'TASK-042', '--auto-merge');
    expect(merged.stdout).toMatch(/^merged: autobuild\/TASK-042 into main/);
    expect(merged.stdout).toContain(
      'git add .guardkit/autobuild/TASK-042 && git commit -m "TASK-042: coachgate records"',
    );
    expect(merged.status).toBe(0);
    expect(readFileSync(path.join(repo.dir, 'src/greet.js'), 'utf8')).toBe(GOOD_GREET);
    expect(repo.git('log', '-1', '--format=%s')).toBe(
      'Merge autobuild/TASK-042: TASK-042 approved by coachgate',
    );
    expect(repo.git('ls-files')).not.toMatch(/\.guardkit\/autobuild/);
    expect(existsSync(worktree)).toBe(false);
    expect(repo.git('branch', '--list', 'autobuild/TASK-042')).toBe('');
    expect(existsSync(path.join(repo.dir, '.guardkit/autobuild/TASK-042/review.md'))).toBe(true);
    // Started again, it would branch from the old pin: refused, pointing to a new task.
    const again = run('worktree', 'start', '--task', 'TASK-042');
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/TASK-042 was approved and merged already .*make a new task/s);
    expect(existsSync(worktree)).toBe(false);
    await close();
  });

  it('a file where the worktrees go is named, not a stack trace', () => {
    repo = project();
    repo.write('.guardkit/worktrees', 'notes\n');
    const refused = run('worktree', 'start', '--task', 'TASK-042');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/A file is in the way of \.guardkit\/worktrees\//);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  });

  it('abort a conflicting merge cleanly and say so; preserve keeps the work committed on the branch', async () => {
    repo = project();
    const { client, close } = await connect({ roots: [repo.dir] });
    const worktree = await approvedInWorktree(client);
    const branchHead = repo.git('rev-parse', 'autobuild/TASK-042');
    const worktreeStatus = gitIn(worktree, 'status', '--porcelain');
    expect(worktreeStatus).toMatch(/\?\? src\//);

    // Meanwhile someone commits a different greet.js on main.
    repo.write('src/greet.js', 'export const greet = () => "hey";\n');
    const mainHead = repo.commit('a rival greet on main');
    const conflict = await callTool(client, 'worktree_finish', {
      worktree: repo.dir,
      task_id: 'TASK-042',
      merge: true,
    });
    expect(dataOf(conflict)).toMatchObject({ outcome: 'conflict', conflicts: ['src/greet.js'] });
    expect(textOf(conflict)).toMatch(
      /conflicted and was aborted \(src\/greet\.js\)\. Nothing changed; the worktree is kept\./,
    );
    expect(repo.git('rev-parse', 'HEAD')).toBe(mainHead);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(existsSync(path.join(worktree, 'src/greet.js'))).toBe(true);

    // Nor was the work committed: the worktree is as it was, its files uncommitted.
    expect(repo.git('rev-parse', 'autobuild/TASK-042')).toBe(branchHead);
    expect(gitIn(worktree, 'status', '--porcelain')).toBe(worktreeStatus);

    repo.write('.guardkit/worktrees/TASK-042/NOTES.md', 'conflicts with the rival greet on main\n');
    const kept = dataOf(
      await callTool(client, 'worktree_preserve', {
        worktree: repo.dir,
        task_id: 'TASK-042',
        reason: 'merge conflict',
      }),
    );
    expect(kept.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(repo.git('show', '--stat', '--format=%s', 'autobuild/TASK-042')).toMatch(
      /TASK-042: preserved by coachgate \(merge conflict\)[\s\S]*NOTES\.md/,
    );
    expect(run('worktree', 'preserve', '--task', 'TASK-042').stdout).toMatch(
      /nothing new to commit/,
    );
    expect(run('worktree', 'finish', '--task', 'TASK-999').stderr).toMatch(
      /TASK-999 has no worktree started by coachgate/,
    );
    await close();
  });

  it('a finish that fails after the merge undoes the merge, the commit and the merge record', async () => {
    repo = project();
    const { client, close } = await connect({ roots: [repo.dir] });
    const worktree = await approvedInWorktree(client);
    await close();
    // The records cannot be copied to the main checkout: a file stands where their directory goes.
    repo.write('.guardkit/autobuild/TASK-042', 'in the way\n');
    const before = {
      main: repo.git('rev-parse', 'HEAD'),
      mainStatus: repo.git('status', '--porcelain'),
      branch: repo.git('rev-parse', 'autobuild/TASK-042'),
      worktree: gitIn(worktree, 'status', '--porcelain'),
      records: mergeRecords(),
    };
    const failed = run('worktree', 'finish', '--task', 'TASK-042', '--auto-merge');
    expect(failed.status).toBe(2);
    expect(failed.stderr).toMatch(
      /TASK-042 was not finished: .*\.guardkit\/autobuild\/TASK-042.* Everything finish had done is undone/,
    );
    expect(failed.stderr).not.toMatch(/^\s+at /m);
    expect({
      main: repo.git('rev-parse', 'HEAD'),
      mainStatus: repo.git('status', '--porcelain'),
      branch: repo.git('rev-parse', 'autobuild/TASK-042'),
      worktree: gitIn(worktree, 'status', '--porcelain'),
      records: mergeRecords(),
    }).toEqual(before);
    expect(existsSync(path.join(worktree, '.guardkit/autobuild/TASK-042/merged.json'))).toBe(false);

    // The cause removed, the same finish goes through.
    rmSync(path.join(repo.dir, '.guardkit/autobuild/TASK-042'));
    const merged = run('worktree', 'finish', '--task', 'TASK-042', '--auto-merge');
    expect(merged.status, merged.stderr).toBe(0);
    expect(merged.stdout).toMatch(/^merged: autobuild\/TASK-042 into main/);
  });

  it('gated in the checkout around it, a task approved in its own worktree is pointed there', async () => {
    repo = project();
    const { client, close } = await connect({ roots: [repo.dir] });
    const worktree = await approvedInWorktree(client);
    // Its mirror is in that worktree: looked at from here, nothing is missing from it.
    const status = dataOf(
      await callTool(client, 'task_status', { worktree: repo.dir, task_id: 'TASK-042' }),
    );
    expect(status.mirror_tampering).toEqual([]);
    await close();
    const gate = (cwd: string) =>
      spawnSync(process.execPath, [cli, 'gate', '--task', 'TASK-042', '--format', 'json'], {
        cwd,
        encoding: 'utf8',
      });
    const around = gate(repo.dir);
    expect(around.status, around.stderr).toBe(1);
    const reasons: string[] = JSON.parse(around.stdout).reasons;
    expect(reasons[0]).toBe(
      `TASK-042 is worked on in its own worktree, ${worktree}, not in this checkout: gate it there (coachgate gate --task TASK-042 --worktree ${worktree}), or merge it first (coachgate worktree finish --task TASK-042)`,
    );
    expect(reasons.join('\n')).not.toMatch(/mirror was changed/);
    expect(gate(worktree).status).toBe(0);

    // A record edited in that mirror is found from either place.
    repo.write('.guardkit/worktrees/TASK-042/.guardkit/autobuild/TASK-042/review.md', 'all good\n');
    for (const cwd of [repo.dir, worktree])
      expect(JSON.parse(gate(cwd).stdout).reasons.join('\n')).toMatch(
        /the mirror was changed: \.guardkit\/autobuild\/TASK-042\/review\.md whole file/,
      );
  });

  it('finish and preserve refuse a repository path that does not exist', () => {
    repo = project();
    for (const action of ['finish', 'preserve']) {
      const missing = spawnSync(
        process.execPath,
        [cli, 'worktree', action, '--task', 'TASK-042', '--worktree', `${repo.dir}/no/such`],
        { encoding: 'utf8' },
      );
      expect(missing.status).toBe(2);
      expect(missing.stderr).toContain(`${repo.dir}/no/such does not exist.`);
      expect(missing.stderr).not.toMatch(/^\s+at /m);
    }
  });
});
