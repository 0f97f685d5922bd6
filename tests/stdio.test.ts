import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, SAMPLE_TASK, type TempRepo } from './helpers/git-repo.js';
import { GREET_TASK, greetingProject } from './helpers/node-project.js';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
let repo: TempRepo;

beforeAll(() => {
  repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
});
afterAll(() => repo.remove());

describe('the built binary (dist/cli.js)', () => {
  it('serves every tool over stdio and keeps stdout for MCP frames only', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, '--root', repo.dir, '--state-dir', process.env.COACHGATE_STATE_DIR!],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining([
        'load_task',
        'read_task_work_results',
        'verify_quality_gates',
        'record_player_report',
      ]),
    );
    for (const tool of tools) {
      expect(tool.outputSchema, tool.name).toBeDefined();
      expect(Object.keys(tool.annotations ?? {}), tool.name).toEqual(
        expect.arrayContaining([
          'readOnlyHint',
          'destructiveHint',
          'idempotentHint',
          'openWorldHint',
        ]),
      );
    }
    const result = await client.callTool({
      name: 'load_task',
      arguments: { worktree: repo.dir, task_id: 'TASK-001' },
    });
    expect(result.structuredContent).toMatchObject({ title: 'Greeting helper' });
    // A non-JSON line on stdout would have broken the client's parser before this point.
    await client.close();
  });

  it('answers every tool over stdio with structured content', async () => {
    const project = greetingProject();
    // The worktree tools need a repository on its base branch, not one already on autobuild/TASK-042.
    const mainline = makeRepo({ '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        cli,
        '--root',
        project.dir,
        '--root',
        mainline.dir,
        '--state-dir',
        process.env.COACHGATE_STATE_DIR!,
      ],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '0' });
    await client.connect(transport);
    const task = { worktree: project.dir, task_id: 'TASK-042' };
    const fresh = { worktree: mainline.dir, task_id: 'TASK-042' };
    const calls: [string, Record<string, unknown>, (data: Record<string, any>) => void][] = [
      ['load_task', task, (data) => expect(data.acceptance_criteria).toHaveLength(2)],
      [
        'record_player_report',
        { ...task, turn: 1, report: { tests_passed: true, files_created: ['src/greet.js'] } },
        (data) => expect(data.recorded).toBe(true),
      ],
      ['read_task_work_results', task, (data) => expect(data.honesty.verified).toBe(true)],
      ['verify_quality_gates', task, (data) => expect(data.tests_passed).toBe(true)],
      ['run_independent_tests', task, (data) => expect(data.status).toBe('passed')],
      ['check_test_integrity', task, (data) => expect(data.must_fix).toBe(0)],
      [
        'validate_requirements',
        {
          ...task,
          evidence: [
            { criterion: 'AC-001', test: 'greets by name' },
            { criterion: 'AC-002', test: 'rejects empty names' },
          ],
        },
        (data) => expect(data.all_criteria_met).toBe(true),
      ],
      [
        'record_verdict',
        {
          ...task,
          turn: 1,
          decision: 'approve',
          rationale: 'verified',
          evidence: [
            { criterion: 'AC-001', test: 'greets by name' },
            { criterion: 'AC-002', test: 'rejects empty names' },
          ],
        },
        (data) => expect(data.status).toBe('approved'),
      ],
      ['detect_stall', task, (data) => expect(data.stalled).toBe(false)],
      [
        'task_status',
        task,
        (data) =>
          expect(data).toMatchObject({ status: 'approved', verdict_chain: { intact: true } }),
      ],
      [
        'parse_validator_verdict',
        { text: '**Verdict: FAIL**\n**Findings:**\n- [ERROR] src/a.ts:3 — broken' },
        (data) => expect(data.retry).toBe(true),
      ],
      [
        'check_graph_cycles',
        {
          edges: [
            { from: 'a', to: 'b' },
            { from: 'b', to: 'a' },
          ],
        },
        (data) => expect(data.acyclic).toBe(false),
      ],
      ['worktree_start', fresh, (data) => expect(data.created).toBe(true)],
      [
        'worktree_preserve',
        { ...fresh, reason: 'paused' },
        (data) => expect(data.commit).toBeNull(),
      ],
      [
        'worktree_finish',
        { ...fresh, merge: false },
        (data) => expect(data.outcome).toBe('gate_failed'),
      ],
    ];
    const { tools } = await client.listTools();
    expect(calls.map(([name]) => name).sort()).toEqual(tools.map((tool) => tool.name).sort());
    for (const [name, args, check] of calls) {
      const result = await client.callTool({ name, arguments: args }, undefined, {
        timeout: 120_000,
      });
      expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
      check(result.structuredContent as Record<string, any>);
    }
    await client.close();
    project.remove();
    mainline.remove();
  });

  it("prints a sub-command's own help: its entries and the options they name", () => {
    const help = (...args: string[]) =>
      execFileSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
    const gate = help('gate', '--help');
    expect(gate).toMatch(/^Usage:\n {2}coachgate gate --task ID/);
    expect(gate).toMatch(/\n {2}--task ID +the task to check or run\./);
    expect(gate).not.toMatch(/coachgate (worktree|init|serve|demo)/);
    const worktree = help('worktree', 'finish', '-h');
    expect(worktree.match(/^ {2}coachgate worktree (start|finish|preserve)/gm)).toHaveLength(3);
    expect(help('task', 'new', '--help')).toMatch(
      /coachgate task new[\s\S]*coachgate task pin-base/,
    );
    expect(help('--help')).toMatch(/coachgate demo/);
  });

  it('prints help and version, and exits 2 on an unknown flag', () => {
    expect(execFileSync(process.execPath, [cli, '--help'], { encoding: 'utf8' })).toMatch(
      /Usage:\n {2}coachgate \[serve\] \[--root DIR \.\.\.\]/,
    );
    expect(execFileSync(process.execPath, [cli, '--version'], { encoding: 'utf8' }).trim()).toMatch(
      /^\d+\.\d+\.\d+$/,
    );
    const bad = spawnSync(process.execPath, [cli, '--frobnicate'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/Unknown option '--frobnicate'/);
    const missingRoot = spawnSync(process.execPath, [cli, '--root', '/no/such/dir'], {
      encoding: 'utf8',
    });
    expect(missingRoot.status).toBe(2);
    expect(missingRoot.stderr).toMatch(/--root \/no\/such\/dir does not exist/);
  });
});
