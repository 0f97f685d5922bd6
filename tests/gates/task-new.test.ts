import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { CLI as cli } from '../helpers/cli.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

const taskNew = (...args: string[]) =>
  spawnSync(process.execPath, [cli, 'task', 'new', '--worktree', repo.dir, ...args], {
    encoding: 'utf8',
  });

describe('coachgate task new', () => {
  it('writes a task file load_task reads, numbering after the existing tasks', async () => {
    repo = makeRepo({
      '.guardkit/tasks/backlog/TASK-007-old.md': '---\nid: TASK-007\ntitle: Old\n---\n',
    });
    const made = taskNew(
      '--title',
      'Add a greeting',
      '--criterion',
      'greet(name) returns "Hello, <name>!"',
      '--criterion',
      'greet("") throws a TypeError',
      '--criterion',
      'greet("world") returns "  Hello, World!  "',
      '--depends-on',
      'TASK-007',
    );
    expect(made.status).toBe(0);
    expect(made.stdout).toMatch(
      /^TASK-008: wrote \.guardkit\/tasks\/backlog\/TASK-008-add-a-greeting\.md\ncommitted [0-9a-f]{12}\nbase pinned to [0-9a-f]{40}\n$/,
    );
    expect(repo.git('log', '-1', '--format=%s')).toBe('TASK-008: add task Add a greeting');
    const { client, close } = await connect({ roots: [repo.dir] });
    const task = dataOf(
      await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'TASK-008' }),
    );
    await close();
    expect(task).toMatchObject({ title: 'Add a greeting', dependencies: ['TASK-007'] });
    expect(
      task.acceptance_criteria.map((item: { id: string; text: string }) => [item.id, item.text]),
    ).toEqual([
      ['AC-001', 'greet(name) returns "Hello, <name>!"'],
      ['AC-002', 'greet("") throws a TypeError'],
      // Spaces inside a criterion are part of what it asks for.
      ['AC-003', 'greet("world") returns "  Hello, World!  "'],
    ]);
  });

  it('--no-commit writes the file only, commits nothing and pins nothing; other staged work stays staged', () => {
    repo = makeRepo({ 'a.txt': 'a\n' });
    const head = repo.git('rev-parse', 'HEAD');
    const only = taskNew('--no-commit', '--title', 'Later', '--criterion', 'x');
    expect(only.status).toBe(0);
    expect(only.stdout).toMatch(
      /Commit it: .*\nbase not pinned yet: not committed \(--no-commit\)/,
    );
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    repo.write('a.txt', 'staged\n');
    repo.git('add', 'a.txt');
    expect(taskNew('--title', 'Now', '--criterion', 'y').status).toBe(0);
    expect(repo.git('show', '--name-only', '--format=', 'HEAD')).toBe(
      '.guardkit/tasks/backlog/TASK-002-now.md',
    );
    expect(repo.git('diff', '--cached', '--name-only')).toBe('a.txt');
  });

  it('a whitelist .gitignore: the task file is force-added, and the output names the rule', async () => {
    repo = makeRepo({ '.gitignore': '*\n!.gitignore\n!src/\n!src/**\n', 'src/a.py': 'A = 1\n' });
    const made = taskNew('--title', 'Greet', '--criterion', 'greets');
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toMatch(
      /committed [0-9a-f]{12}\nforce-added \(git add -f\): \.gitignore:1:\* ignores it, .*\nbase pinned to [0-9a-f]{40}\n$/,
    );
    expect(repo.git('show', '--name-only', '--format=', 'HEAD')).toBe(
      '.guardkit/tasks/backlog/TASK-001-greet.md',
    );
    const { client, close } = await connect({ roots: [repo.dir] });
    const task = dataOf(
      await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'TASK-001' }),
    );
    await close();
    expect(task.title).toBe('Greet');
  });

  it('refuses a task without criteria and never overwrites an existing id', () => {
    repo = makeRepo({
      '.guardkit/tasks/backlog/TASK-007-old.md': '---\nid: TASK-007\ntitle: Old\n---\n',
    });
    const bare = taskNew('--title', 'Vague');
    expect(bare.status).toBe(2);
    expect(bare.stderr).toMatch(/at least one acceptance criterion/);
    const clash = taskNew('--id', 'TASK-007', '--title', 'Again', '--criterion', 'x');
    expect(clash.status).toBe(2);
    expect(clash.stderr).toMatch(/A task file for TASK-007 already exists/);
  });

  it('a refused task new leaves the repository as it was: bad config, missing directory, unknown dependency', () => {
    repo = makeRepo({
      '.guardkit/config.yaml': 'coachgate:\n  max_strikes: zero\n',
      '.guardkit/tasks/backlog/TASK-007-old.md': '---\nid: TASK-007\ntitle: Old\n---\n',
    });
    const head = repo.git('rev-parse', 'HEAD');
    const unchanged = () => {
      expect(repo.git('rev-parse', 'HEAD')).toBe(head);
      expect(repo.git('status', '--porcelain', '--untracked-files=all')).toBe('');
    };
    const badConfig = taskNew('--title', 'T', '--criterion', 'x');
    expect(badConfig.status).toBe(2);
    expect(badConfig.stderr).toMatch(/coachgate\.max_strikes/);
    unchanged();

    repo.write('.guardkit/config.yaml', 'coachgate:\n  max_strikes: 3\n');
    repo.commit('fix config');
    const fixed = repo.git('rev-parse', 'HEAD');
    const unknown = taskNew('--title', 'T', '--criterion', 'x', '--depends-on', 'TASK-404');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('no task file: TASK-404. Known task ids: TASK-007.');
    expect(repo.git('rev-parse', 'HEAD')).toBe(fixed);
    expect(repo.git('status', '--porcelain', '--untracked-files=all')).toBe('');

    // A commit that fails (another git process holds the index) takes its file back out.
    writeFileSync(path.join(repo.dir, '.git', 'index.lock'), '');
    const locked = taskNew('--title', 'T', '--criterion', 'x');
    expect(locked.status).toBe(2);
    expect(locked.stderr).toMatch(
      /Could not commit .*TASK-008-t\.md: [\s\S]*[^.]\. Nothing was written\./,
    );
    rmSync(path.join(repo.dir, '.git', 'index.lock'));
    expect(repo.git('rev-parse', 'HEAD')).toBe(fixed);
    expect(repo.git('status', '--porcelain', '--untracked-files=all')).toBe('');

    const missing = path.join(repo.dir, 'no', 'such', 'dir');
    const elsewhere = spawnSync(
      process.execPath,
      [cli, 'task', 'new', '--worktree', missing, '--title', 'T', '--criterion', 'x'],
      { encoding: 'utf8' },
    );
    expect(elsewhere.status).toBe(2);
    expect(elsewhere.stderr).toContain(`${missing} does not exist.`);
    expect(existsSync(path.join(repo.dir, 'no'))).toBe(false);
  });
});
