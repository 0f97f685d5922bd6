import { spawnSync } from 'node:child_process';
import { chmodSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mergeRecordMismatch } from '../src/actions/gate-merge.js';
import { approvedFiles, changedApprovedFiles } from '../src/repo/worktrees.js';
import { connect } from './helpers/mcp.js';
import { makeRepo, type TempRepo } from './helpers/git-repo.js';
import { approveGreeting, greetingProject } from './helpers/node-project.js';
import { runGate } from './helpers/gate-cli.js';
import { CLI as cli } from './helpers/cli.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

const gate = () => runGate(repo.dir, 'TASK-042');

describe('coachgate gate (for hooks and CI)', () => {
  it('fails before approval, passes after it, and fails again once the code changes', async () => {
    repo = greetingProject();
    const before = gate();
    expect(before.status).toBe(1);
    expect(before.stdout).toMatch(/TASK-042 FAIL\n {2}- task is in_progress, not approved\n/);

    const { client, close } = await connect({ roots: [repo.dir] });
    expect(await approveGreeting(client, repo.dir)).toBe('approved');
    await close();

    const after = gate();
    expect(after.status).toBe(0);
    expect(after.stdout).toMatch(/TASK-042 PASS/);

    repo.write('src/greet.js', '// rewritten after approval\n');
    const changed = gate();
    expect(changed.status).toBe(1);
    expect(changed.stdout).toMatch(/the worktree changed after run/);
  });

  it('exits 2 for a caller mistake', () => {
    repo = greetingProject();
    const missing = spawnSync(process.execPath, [cli, 'gate', '--worktree', repo.dir], {
      encoding: 'utf8',
    });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/gate needs --task ID/);
    const unknown = spawnSync(
      process.execPath,
      [cli, 'gate', '--task', 'TASK-404', '--worktree', repo.dir],
      { encoding: 'utf8' },
    );
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/No task file for TASK-404/);
  });
});

describe('after the merge: the approved files and the merge record', () => {
  it('lists what the approved commit changed, and tells which of those files changed since', async () => {
    repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'run.sh': 'echo\n', 'same.txt': 's\n' });
    const base = repo.git('rev-parse', 'HEAD');
    repo.write('a.txt', 'approved a\n');
    rmSync(path.join(repo.dir, 'b.txt'));
    repo.write('c.txt', 'new c\n');
    chmodSync(path.join(repo.dir, 'run.sh'), 0o755);
    repo.write('.guardkit/autobuild/TASK-001/review.md', 'records are not the work\n');
    const approved = repo.commit('the approved work');
    const files = await approvedFiles(repo.dir, base, approved);
    expect(files.map((file) => [file.path, file.mode])).toEqual([
      ['a.txt', '100644'],
      ['b.txt', null],
      ['c.txt', '100644'],
      ['run.sh', '100755'],
    ]);
    expect(files[0]!.blob).toBe(repo.git('rev-parse', `${approved}:a.txt`));
    expect(await changedApprovedFiles(repo.dir, files)).toEqual([]);

    // Files the task did not touch may change; each approved one is checked by content and mode.
    repo.write('same.txt', 'a later, unrelated change\n');
    expect(await changedApprovedFiles(repo.dir, files)).toEqual([]);
    repo.write('a.txt', 'edited after the merge\n');
    repo.write('b.txt', 'deleted by the task, back again\n');
    chmodSync(path.join(repo.dir, 'run.sh'), 0o644);
    rmSync(path.join(repo.dir, 'c.txt'));
    expect(await changedApprovedFiles(repo.dir, files)).toEqual([
      'a.txt',
      'b.txt',
      'c.txt',
      'run.sh',
    ]);
  });

  it('a merge record vouches only for its own task, approving run and tree', () => {
    const run = { run_id: 'R2', tree_hash: 'T2' };
    const record = { task_id: 'TASK-001', run_id: 'R2', tree_hash: 'T2' };
    expect(mergeRecordMismatch(record, 'TASK-001', run)).toBeNull();
    expect(mergeRecordMismatch(record, 'TASK-002', run)).toBe(
      'records the merge of TASK-001, not TASK-002',
    );
    expect(mergeRecordMismatch({ ...record, run_id: 'R1' }, 'TASK-001', run)).toBe(
      'names run R1, not the approving run R2',
    );
    expect(mergeRecordMismatch({ ...record, tree_hash: 'T1' }, 'TASK-001', run)).toBe(
      'records another tree than the approving run R2 fingerprinted',
    );
  });
});
