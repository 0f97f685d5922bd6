import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from './helpers/mcp.js';
import type { TempRepo } from './helpers/git-repo.js';
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
