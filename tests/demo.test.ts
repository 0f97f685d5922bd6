import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('npm run demo (dist/cli.js demo)', () => {
  it('catches the buggy turn, refuses the approval, then approves the fix — over stdio', () => {
    const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
    const result = spawnSync(process.execPath, [cli, 'demo'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/FAILED \(2 passed, 1 failed\); class code/);
    expect(result.stdout).toMatch(/- 'Hello, Ada!'/);
    expect(result.stdout).toMatch(
      /REFUSED by the server:\n\s+- latest test run \S+ has status "failed"/,
    );
    expect(result.stdout).toMatch(/criterion AC-003 is not verified/);
    expect(result.stdout).toMatch(/^Verdict: APPROVED$/m);
    expect(result.stdout).toMatch(
      /Turn 1: Player ✓ report \(claims done\) \/ Coach ✗ feedback \(1 issue\)/,
    );
    expect(result.stdout).toMatch(/Turn 2: Player ✓ report \(fix\) \/ Coach ✓ approved/);
    // The repository it printed is still there to look at, and the output says how to remove it.
    const kept = /^Remove it with: rm -rf (\S+)$/m.exec(result.stdout)?.[1];
    expect(kept).toBeDefined();
    expect(result.stdout).toContain(`example project copied to ${kept}/greeting`);
    expect(existsSync(`${kept}/greeting/.guardkit/autobuild/TASK-GREET-001/review.md`)).toBe(true);
    // Its closing hint runs as printed, with nothing installed on PATH.
    const gate = /^ {2}(.* gate --task TASK-GREET-001 --worktree \S+)$/m.exec(result.stdout)?.[1];
    expect(gate).toMatch(/^node \S+cli\.js gate/);
    const ran = spawnSync('sh', ['-c', gate!], { encoding: 'utf8' });
    expect(ran.stdout).toMatch(/COACH GATE: PASSED/);
    expect(ran.status, ran.stderr).toBe(0);
    rmSync(kept!, { recursive: true, force: true });
  });
});
