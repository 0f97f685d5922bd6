import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REFUSAL_META } from '../../src/tools/tool.js';
import { taskStateDirectory } from '../../src/records/state-directory.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { GREET_TASK } from '../helpers/node-project.js';
import { CLI as cli } from '../helpers/cli.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

const coachgate = (...args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

/** A fresh repository (git init) at `dir`, with `files` in its first commit. */
function initRepositoryAt(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  git('add', '-A');
  git('-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'first');
}

describe('the base is pinned when the task is made or started, not when first touched', () => {
  it('task new commits the task file and pins it; moving main afterwards changes nothing', async () => {
    repo = makeRepo({ 'README.md': 'project\n' });
    const made = coachgate(
      'task',
      'new',
      '--worktree',
      repo.dir,
      '--title',
      'Greet',
      '--criterion',
      'greets',
    );
    expect(made.stderr).toBe('');
    expect(made.status).toBe(0);
    const created = repo.git('rev-parse', 'HEAD');
    expect(made.stdout).toContain(`committed ${created.slice(0, 12)}`);
    expect(made.stdout).toContain(`base pinned to ${created}`);
    expect(repo.git('status', '--porcelain')).toBe('');

    // main moves before any server has opened the task.
    repo.write('src/player.js', 'export const x = 1;\n');
    const moved = repo.commit('moved main');
    const { client, close } = await connect({ roots: [repo.dir] });
    const status = dataOf(
      await callTool(client, 'task_status', { worktree: repo.dir, task_id: 'TASK-001' }),
    );
    await close();
    expect(status.base.commit).toBe(created);
    expect(status.base_moved).toEqual({ pinned: created, resolved: moved });
  });

  it('worktree start pins the base it branches from', async () => {
    repo = makeRepo({ '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK });
    const base = repo.git('rev-parse', 'main');
    const started = coachgate('worktree', 'start', '--task', 'TASK-042', '--worktree', repo.dir);
    expect(started.status).toBe(0);
    // The Player commits in its worktree and points main at its own commit.
    const worktree = path.join(repo.dir, '.guardkit/worktrees/TASK-042');
    writeFileSync(path.join(worktree, 'greet.js'), 'export const greet = 1;\n');
    execFileSync('git', ['add', '-A'], { cwd: worktree });
    execFileSync(
      'git',
      ['-c', 'user.name=P', '-c', 'user.email=p@example.com', 'commit', '-q', '-m', 'player'],
      { cwd: worktree },
    );
    const own = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: worktree, encoding: 'utf8' });
    repo.git('merge', '-q', '--ff-only', own.trim());
    const { client, close } = await connect({ roots: [repo.dir] });
    const status = dataOf(await callTool(client, 'task_status', { worktree, task_id: 'TASK-042' }));
    await close();
    expect(status.base.commit).toBe(base);
  });
});

describe('a lookup of a task that does not exist yet', () => {
  it('pins nothing: load_task, gate and worktree start refuse, then task new pins its own commit', async () => {
    repo = makeRepo({ 'README.md': 'project\n' });
    const { client, close } = await connect({ roots: [repo.dir] });
    const lookup = await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'TASK-999' });
    await close();
    expect(lookup.isError).toBe(true);
    expect(textOf(lookup)).toMatch(/No task file for TASK-999/);
    expect(coachgate('gate', '--task', 'TASK-999', '--worktree', repo.dir).status).toBe(2);
    const start = coachgate('worktree', 'start', '--task', 'TASK-999', '--worktree', repo.dir);
    expect(start.status).toBe(2);
    expect(existsSync(await taskStateDirectory(repo.dir, 'TASK-999'))).toBe(false);

    repo.write('src/later.js', 'export const later = 1;\n');
    repo.commit('main moves on');
    const made = coachgate(
      ...['task', 'new', '--worktree', repo.dir, '--id', 'TASK-999', '--title', 'Later'],
      ...['--criterion', 'works'],
    );
    expect(made.stderr).toBe('');
    expect(made.status).toBe(0);
    expect(made.stdout).toContain(`base pinned to ${repo.git('rev-parse', 'HEAD')}`);
    const gate = coachgate('gate', '--task', 'TASK-999', '--worktree', repo.dir);
    expect(gate.stderr).not.toMatch(/exists only in the working tree/);
    expect(gate.stdout).toMatch(/TASK-999/);
  });

  it('task new refuses an id pinned before, naming the pin and task pin-base, and writes nothing', () => {
    repo = makeRepo({ 'README.md': 'project\n' });
    const old = repo.git('rev-parse', 'HEAD');
    const pin = coachgate(
      'task',
      'pin-base',
      '--task',
      'TASK-999',
      '--base',
      'HEAD',
      '--worktree',
      repo.dir,
    );
    expect(pin.status).toBe(0);
    const made = coachgate(
      ...['task', 'new', '--worktree', repo.dir, '--id', 'TASK-999', '--title', 'Later'],
      ...['--criterion', 'works'],
    );
    expect(made.status).toBe(2);
    expect(made.stderr).toContain(`TASK-999 is already pinned to ${old}`);
    expect(made.stderr).toContain('coachgate task pin-base --task TASK-999');
    expect(repo.git('rev-parse', 'HEAD')).toBe(old);
    expect(repo.git('status', '--porcelain', '--untracked-files=all')).toBe('');
  });
});

describe('a pin that outlived its repository', () => {
  it('a repository re-created at the same path: the tool names the exact command to run', async () => {
    repo = makeRepo({ '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK, 'a.txt': 'old\n' });
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    const { client, close } = await connect({ roots: [repo.dir] });
    const old = repo.git('rev-parse', 'HEAD');
    expect(dataOf(await callTool(client, 'task_status', task)).base.commit).toBe(old);
    await callTool(client, 'record_player_report', {
      ...task,
      turn: 1,
      report: { tests_passed: true, files_created: ['a.txt'] },
    });

    rmSync(repo.dir, { recursive: true, force: true });
    initRepositoryAt(repo.dir, {
      '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK,
      'b.txt': 'a new project\n',
    });
    const fresh = repo.git('rev-parse', 'HEAD');
    const refused = await callTool(client, 'task_status', task);
    expect(refused.isError).toBe(true);
    const command = `coachgate task pin-base --task TASK-042 --base ${fresh} --worktree ${repo.dir}`;
    expect(textOf(refused)).toContain(
      `TASK-042 was pinned to ${old} in another repository at this path`,
    );
    expect(textOf(refused)).toContain(command);
    expect(refused._meta?.[REFUSAL_META]).toMatchObject({ fix_command: command });
    expect(textOf(refused)).not.toMatch(/does not name a commit/);

    const repin = coachgate(...command.split(' ').slice(1));
    expect(repin.stderr).toBe('');
    expect(repin.status).toBe(0);
    expect(repin.stdout).toMatch(
      /the old repository's records of TASK-042 were moved to .*replaced/,
    );
    const status = dataOf(await callTool(client, 'task_status', task));
    await close();
    expect(status.base.commit).toBe(fresh);
    expect(status.turns).toEqual([]);
  });

  it('a pinned commit pruned from the same repository: restore it or re-pin', async () => {
    repo = makeRepo({ '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK });
    repo.write('b.txt', 'second\n');
    const pinned = repo.commit('second');
    const { client, close } = await connect({ roots: [repo.dir] });
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    expect(dataOf(await callTool(client, 'task_status', task)).base.commit).toBe(pinned);
    repo.git('commit', '-q', '--amend', '-m', 'rewritten');
    // Pruned as gc --prune=now would, without gc (whose repack failed here under load for reasons of
    // its own): the rewritten commit's loose object is removed.
    rmSync(path.join(repo.dir, '.git', 'objects', pinned.slice(0, 2), pinned.slice(2)));
    expect(() => repo.git('cat-file', '-e', pinned)).toThrow();
    const refused = await callTool(client, 'task_status', task);
    await close();
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(
      `TASK-042 is pinned to ${pinned}, which ${repo.dir} no longer`,
    );
    expect(textOf(refused)).toContain(
      `coachgate task pin-base --task TASK-042 --base ${repo.git('rev-parse', 'HEAD')} --worktree ${repo.dir}`,
    );
  });
});

describe('a pin that disappears', () => {
  it('is never re-made silently: the task is refused until a person runs task pin-base', async () => {
    repo = makeRepo({ '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK });
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    const { client, close } = await connect({ roots: [repo.dir] });
    const pinned = dataOf(await callTool(client, 'task_status', task)).base.commit;
    await callTool(client, 'record_player_report', {
      ...task,
      turn: 1,
      report: { tests_passed: true, files_created: ['a.txt'] },
    });
    // The Player's tactic: delete the pin and move the base branch to a commit of its choosing.
    const pinFile = path.join(await taskStateDirectory(repo.dir, 'TASK-042'), 'pinned-base.json');
    rmSync(pinFile);
    repo.write('planted.txt', 'x\n');
    const moved = repo.commit('moved main');

    const refused = await callTool(client, 'task_status', task);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(`TASK-042's pinned base is missing: ${pinFile} was deleted`);
    const command = `coachgate task pin-base --task TASK-042 --base ${moved} --worktree ${repo.dir}`;
    expect(refused._meta?.[REFUSAL_META]).toMatchObject({ fix_command: command });
    expect(existsSync(pinFile)).toBe(false);

    const repin = coachgate(
      'task',
      'pin-base',
      '--task',
      'TASK-042',
      '--base',
      pinned,
      '--worktree',
      repo.dir,
    );
    expect(repin.status).toBe(0);
    const status = dataOf(await callTool(client, 'task_status', task));
    await close();
    expect(status.base.commit).toBe(pinned);
    expect(status.turns).toHaveLength(1);
  });
});
