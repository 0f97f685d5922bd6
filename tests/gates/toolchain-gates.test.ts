import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openTask } from '../../src/actions/task-scope.js';
import { runToolchainGates } from '../../src/quality-gates/toolchain-gates.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { GOOD_GREET } from '../helpers/node-project.js';
import { toolchainProject } from '../helpers/toolchain-project.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

const evidence = [
  { criterion: 'AC-001', test: 'greets by name' },
  { criterion: 'AC-002', test: 'rejects empty names' },
];

describe('build, typecheck and lint gates run by the server', () => {
  it('pass on a clean change even though the base already had a lint error', async () => {
    repo = toolchainProject();
    const gates = await runToolchainGates(await openTask(repo.dir, 'TASK-042'));
    expect(gates.map((gate) => [gate.name, gate.passed])).toEqual([
      ['build', true],
      ['typecheck', true],
      ['lint', true],
    ]);
    const lint = gates.find((gate) => gate.name === 'lint')!;
    expect(lint.exit_code).toBe(1);
    expect(lint.judged_by).toBe('eslint-json');
    expect(lint.preexisting_errors).toBe(1);
    expect(lint.reason).toMatch(/no new errors against base [0-9a-f]{12} \(1 pre-existing\)/);
  });

  it('fail each on its own cause, all reported (no short-circuit), and the approval guard refuses', async () => {
    repo = toolchainProject();
    const { client, close } = await connect({ roots: [repo.dir] });
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    await callTool(client, 'record_player_report', {
      ...task,
      turn: 1,
      report: { tests_passed: true, files_created: ['src/greet.js'] },
    });
    // A new lint error in a file that had none, a type error, and a build that cannot import its entry point.
    repo.write('src/greet.js', 'var unused = 1;\n' + GOOD_GREET + 'export const broken = ;\n');
    repo.write('src/count.ts', "export const count: number = 'one';\n");
    const gates = dataOf(await callTool(client, 'verify_quality_gates', task));
    expect(gates.all_gates_passed).toBe(false);
    const byName = Object.fromEntries(
      gates.toolchain_gates.map((gate: { name: string }) => [gate.name, gate]),
    );
    expect(byName.build.passed).toBe(false);
    expect(byName.build.reason).toMatch(/^exit 1/);
    expect(byName.typecheck.passed).toBe(false);
    expect(byName.typecheck.judged_by).toBe('tsc');
    expect(byName.typecheck.new_errors[0]).toMatch(
      /^src\/count\.ts:1 TS2322: Type 'string' is not assignable to type 'number'/,
    );
    expect(byName.lint.passed).toBe(false);
    expect(byName.lint.new_errors).toEqual([
      'src/greet.js:1 no-var: Unexpected var, use let or const instead.',
    ]);
    expect(byName.lint.preexisting_errors).toBe(1);
    expect(
      gates.failed_gates.filter((line: string) => /^(build|typecheck|lint):/.test(line)),
    ).toHaveLength(3);

    repo.write('src/greet.js', GOOD_GREET);
    repo.write('src/count.ts', "export const count: number = 'still wrong';\n");
    await callTool(client, 'run_independent_tests', task);
    const refused = await callTool(client, 'record_verdict', {
      ...task,
      turn: 1,
      decision: 'approve',
      rationale: 'looks fine',
      evidence,
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/quality gates failed: .*typecheck: 1 new error/);

    repo.write('src/count.ts', 'export const count: number = 2;\n');
    await callTool(client, 'run_independent_tests', task);
    const approved = dataOf(
      await callTool(client, 'record_verdict', {
        ...task,
        turn: 1,
        decision: 'approve',
        rationale: 'verified',
        evidence,
      }),
    );
    expect(approved.status).toBe('approved');
    await close();
  });

  it("a forged gate-baseline mirror cannot declare the Player's lint error pre-existing, and is reported", async () => {
    repo = toolchainProject();
    const { client, close } = await connect({ roots: [repo.dir] });
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    const lintGate = async () =>
      dataOf(await callTool(client, 'verify_quality_gates', task)).toolchain_gates.find(
        (gate: { name: string }) => gate.name === 'lint',
      );
    expect(await lintGate()).toMatchObject({ passed: true, preexisting_errors: 1 });
    // The Player adds a lint error and edits the cached base findings to say the base had it too.
    repo.write('src/greet.js', 'var unused = 1;\n' + GOOD_GREET);
    const cacheDirectory = path.join(repo.dir, '.guardkit/autobuild/.gate-baseline-cache');
    const lintCache = readdirSync(cacheDirectory)
      .map((name) => path.join(cacheDirectory, name))
      .find((file) => readFileSync(file, 'utf8').includes('no-var'))!;
    const cached = JSON.parse(readFileSync(lintCache, 'utf8'));
    const planted = { ...cached.parsed.findings[0], file: 'src/greet.js', line: 1 };
    writeFileSync(
      lintCache,
      JSON.stringify({
        ...cached,
        parsed: { ...cached.parsed, findings: [...cached.parsed.findings, planted] },
      }),
    );

    const lint = await lintGate();
    expect(lint).toMatchObject({ passed: false, preexisting_errors: 1 });
    expect(lint.new_errors).toEqual([
      'src/greet.js:1 no-var: Unexpected var, use let or const instead.',
    ]);
    const status = dataOf(await callTool(client, 'task_status', task));
    expect(status.mirror_tampering).toEqual([
      {
        file: `.guardkit/autobuild/.gate-baseline-cache/${path.basename(lintCache)}`,
        entry: `gate cache entry ${path.basename(lintCache, '.json')}`,
        difference: expect.stringMatching(/^field parsed: server \{.*mirror \{/),
      },
    ]);
    await close();
  });
});
