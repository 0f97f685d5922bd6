import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { changedSince } from '../src/repo/git.js';
import { makeRepo, type TempRepo } from './helpers/git-repo.js';
import { callTool, connect, dataOf } from './helpers/mcp.js';
import { GOOD_GREET, greetingProject } from './helpers/node-project.js';
import { CLI as cli } from './helpers/cli.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

/**
 * A Player's repository that names a program in every place git would run one. Each program appends its
 * name to a marker file outside the worktree, so any run is visible.
 */
function hostileRepository(): { repo: TempRepo; marker: string } {
  const repo = greetingProject();
  const marker = path.join(repo.dir, '..', `${path.basename(repo.dir)}-ran`);
  const script = (name: string) => {
    const file = path.join(repo.dir, '.git', `evil-${name}`);
    writeFileSync(file, `#!/bin/sh\necho ${name} >> '${marker}'\ncat\n`);
    chmodSync(file, 0o755);
    return file;
  };
  const config = (key: string, value: string) => repo.git('config', key, value);
  config('core.fsmonitor', script('fsmonitor'));
  config('core.pager', script('pager'));
  config('diff.external', script('external-diff'));
  config('diff.evil.textconv', script('textconv'));
  config('filter.evil.clean', script('clean'));
  config('filter.evil.smudge', script('smudge'));
  config('filter.evil.required', 'true');
  config('core.hooksPath', path.join(repo.dir, '.git', 'evil-hooks'));
  config('remote.origin.url', repo.dir);
  config('remote.origin.uploadpack', script('uploadpack'));
  writeFileSync(path.join(repo.dir, '.git', 'info', 'attributes'), '* filter=evil diff=evil\n');
  const hooks = path.join(repo.dir, '.git', 'hooks');
  for (const hook of ['post-checkout', 'post-index-change', 'reference-transaction']) {
    writeFileSync(path.join(hooks, hook), `#!/bin/sh\necho ${hook} >> '${marker}'\n`);
    chmodSync(path.join(hooks, hook), 0o755);
  }
  return { repo, marker };
}

describe('git never runs what the repository configures', () => {
  it('no tool call and no gate run executes a configured fsmonitor, pager, driver, hook or pack program', async () => {
    const hostile = hostileRepository();
    repo = hostile.repo;
    const { client, close } = await connect({ roots: [repo.dir] });
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    try {
      dataOf(await callTool(client, 'load_task', task));
      dataOf(
        await callTool(client, 'record_player_report', {
          ...task,
          turn: 1,
          report: { tests_passed: true },
        }),
      );
      dataOf(await callTool(client, 'read_task_work_results', task));
      const run = dataOf(
        await callTool(client, 'run_independent_tests', { ...task, compare_baseline: true }),
      );
      expect(run.status).toBe('passed');
      dataOf(await callTool(client, 'check_test_integrity', task));
      dataOf(await callTool(client, 'task_status', task));
    } finally {
      await close();
    }
    const gate = spawnSync(
      process.execPath,
      [cli, 'gate', '--task', 'TASK-042', '--worktree', repo.dir],
      { encoding: 'utf8' },
    );
    expect(gate.status, gate.stderr).toBe(1);
    expect(existsSync(hostile.marker) ? readFileSync(hostile.marker, 'utf8') : 'nothing ran').toBe(
      'nothing ran',
    );
  });

  it('still tells changed files from touched ones without reading them through filters', async () => {
    const hostile = hostileRepository();
    repo = hostile.repo;
    repo.git(
      '-c',
      'core.fsmonitor=false',
      '-c',
      'filter.evil.clean=',
      '-c',
      'filter.evil.required=false',
      'add',
      'src/greet.js',
    );
    repo.git(
      '-c',
      'core.fsmonitor=false',
      '-c',
      'core.hooksPath=/dev/null',
      '-c',
      'filter.evil.clean=',
      '-c',
      'filter.evil.required=false',
      'commit',
      '-q',
      '-m',
      'greet',
    );
    const base = repo.git('rev-parse', 'HEAD');
    // Same content, new mtime: the index's stat data is stale, the file is not changed.
    repo.write('src/greet.js', GOOD_GREET);
    repo.write(
      'package.json',
      '{"type":"module","scripts":{"test":"node --test"},"changed":true}\n',
    );
    expect(await changedSince(repo.dir, base)).toEqual(['package.json', 'test/greet.test.js']);
    expect(existsSync(hostile.marker)).toBe(false);
  });
});

describe('changedSince on large files and the server store', () => {
  it('hashes a large file as it streams, and leaves out what it is told to', async () => {
    const large = 'x'.repeat(6 * 1024 * 1024);
    const repo = makeRepo({ 'data/big.txt': large, 'src/a.py': 'A = 1\n' });
    try {
      const base = repo.git('rev-parse', 'HEAD');
      expect(await changedSince(repo.dir, base)).toEqual([]);
      repo.write('data/big.txt', `${large}y`);
      repo.write('.guardkit/autobuild/TASK-1/runs/1.log', large);
      repo.write('src/a.py', 'A = 2\n');
      expect(await changedSince(repo.dir, base)).toEqual([
        '.guardkit/autobuild/TASK-1/runs/1.log',
        'data/big.txt',
        'src/a.py',
      ]);
      expect(await changedSince(repo.dir, base, { skipPrefix: '.guardkit/autobuild/' })).toEqual([
        'data/big.txt',
        'src/a.py',
      ]);
      expect(await changedSince(repo.dir, base, { among: ['src/a.py', 'src/b.py'] })).toEqual([
        'src/a.py',
      ]);
    } finally {
      repo.remove();
    }
  });
});
