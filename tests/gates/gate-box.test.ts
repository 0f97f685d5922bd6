import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { approveGreeting, greetingProject } from '../helpers/node-project.js';
import { toolchainProject } from '../helpers/toolchain-project.js';
import { CLI as cli } from '../helpers/cli.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

const gate = (...extra: string[]) =>
  spawnSync(
    process.execPath,
    [cli, 'gate', '--task', 'TASK-042', '--worktree', repo.dir, ...extra],
    { encoding: 'utf8' },
  );
const task = () => ({ worktree: repo.dir, task_id: 'TASK-042' });

async function approve(): Promise<void> {
  const { client, close } = await connect({ roots: [repo.dir] });
  expect(await approveGreeting(client, repo.dir)).toBe('approved');
  await close();
}

describe('coachgate gate renders the gate', () => {
  it('shows verdict, graph health, build, typecheck, tests and lint in a box, as text and as JSON', async () => {
    repo = toolchainProject();
    await approve();
    const box = gate();
    expect(box.status).toBe(0);
    expect(box.stdout).toMatch(/^╔═+╗\n║ COACH GATE: PASSED — TASK-042 Greeting +║\n╠═+╣\n/);
    for (const row of [
      /✓ Verdict +APPROVED/,
      /✓ Graph health +no cycles \(1 task, 0 dependencies\)/,
      /✓ Build +exit 0/,
      /✓ Type check +no new errors|✓ Type check +exit 0/,
      /✓ Tests +passed: 2 passed, 0 failed/,
      /✓ Lint +no new errors against base [0-9a-f]{12} \(1 pre-existing\)/,
    ]) {
      expect(box.stdout).toMatch(row);
    }
    expect(
      new Set(
        box.stdout
          .trimEnd()
          .split('\n')
          .map((line) => [...line].length),
      ).size,
    ).toBe(1);

    const text = gate('--format', 'text');
    expect(text.stdout).toMatch(/^coachgate gate: TASK-042 PASS/);
    expect(text.stdout).toMatch(/\nlint: pass — no new errors/);

    // A dependency cycle in the task graph, then a new lint error: the gate fails and says why, in JSON too.
    repo.write(
      '.guardkit/tasks/backlog/TASK-050.md',
      '---\nid: TASK-050\ntitle: A\ndepends_on: [TASK-051]\n---\n',
    );
    repo.write(
      '.guardkit/tasks/backlog/TASK-051.md',
      '---\nid: TASK-051\ntitle: B\ndepends_on: [TASK-050]\n---\n',
    );
    repo.write('src/extra.js', 'var extra = 1;\nexport { extra };\n');
    const json = gate('--format', 'json');
    expect(json.status).toBe(1);
    const report = JSON.parse(json.stdout);
    expect(report.passed).toBe(false);
    const rows = Object.fromEntries(report.rows.map((row: { label: string }) => [row.label, row]));
    expect(rows['Graph health']).toMatchObject({
      state: 'fail',
      detail: '1 dependency cycle(s): TASK-050 → TASK-051 → TASK-050',
    });
    expect(rows.Lint.state).toBe('fail');
    expect(rows.Lint.details).toEqual([
      'src/extra.js:1 no-var: Unexpected var, use let or const instead.',
    ]);
    expect(rows.Tests.detail).toMatch(/STALE/);
    expect(gate().stdout).toMatch(/COACH GATE: FAILED[\s\S]*✗ Graph health[\s\S]*✗ Lint/);
  });

  it('prints the 3-strike box with the failure pattern for a blocked task', async () => {
    repo = greetingProject(undefined, 'coachgate:\n  max_strikes: 2\n');
    const { client, close } = await connect({ roots: [repo.dir] });
    for (const [turn, problem] of [
      [1, 'greet returns Hi instead of Hello'],
      [2, 'empty names are accepted'],
    ] as const) {
      await callTool(client, 'record_player_report', {
        ...task(),
        turn,
        report: { tests_passed: false },
      });
      dataOf(
        await callTool(client, 'record_verdict', {
          ...task(),
          turn,
          decision: 'feedback',
          rationale: 'not yet',
          issues: [{ severity: 'must_fix', category: 'tests', description: problem }],
        }),
      );
    }
    await close();
    const box = gate();
    expect(box.status).toBe(1);
    expect(box.stdout).toMatch(/COACH GATE: BLOCKED — TASK-042/);
    expect(box.stdout).toMatch(/STRIKES: 2\/2 — escalate to a human/);
    expect(box.stdout).toMatch(
      /Turn 1: feedback — greet returns Hi instead of Hello[\s\S]*Turn 2: feedback — empty names are accepted/,
    );
    expect(box.stdout).toMatch(/Why blocked: 2 feedback verdicts reached max_strikes \(2\)/);
    expect(box.stdout).toMatch(/– Build +not configured/);
    const usage = gate('--format', 'yaml');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/--format must be one of box, text, json/);
  });
});
