import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { selectTools, tools } from '../../src/tools/index.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { greetingProject } from '../helpers/node-project.js';
import { CLI as cli } from '../helpers/cli.js';

const PLAYER_TOOLS = [
  'load_task',
  'record_player_report',
  'read_task_work_results',
  'run_independent_tests',
  'task_status',
  'parse_validator_verdict',
  'check_graph_cycles',
];
const COACH_TOOLS = [
  'load_task',
  'read_task_work_results',
  'verify_quality_gates',
  'run_independent_tests',
  'check_test_integrity',
  'validate_requirements',
  'record_verdict',
  'detect_stall',
  'task_status',
  'parse_validator_verdict',
  'check_graph_cycles',
  'worktree_start',
  'worktree_preserve',
  'worktree_finish',
];
const EVIDENCE = [
  { criterion: 'AC-001', file: 'src/greet.js', line: 3, snippet: 'return `Hello, ${name}!`;' },
  { criterion: 'AC-002', test: 'rejects empty names' },
];

let repo: TempRepo;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  repo?.remove();
});

async function serverFor(options: Parameters<typeof connect>[0]) {
  const connection = await connect({ roots: [repo.dir], ...options });
  closers.push(connection.close);
  return connection.client;
}

describe('roles, toolsets and --read-only', () => {
  it('a player-role client can neither list nor call record_verdict, and its runs are never evidence', async () => {
    repo = greetingProject();
    const player = await serverFor({ role: 'player' });
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    expect((await player.listTools()).tools.map((tool) => tool.name)).toEqual(PLAYER_TOOLS);
    const forbidden = await callTool(player, 'record_verdict', {
      ...task,
      turn: 1,
      decision: 'approve',
      rationale: 'mine',
      evidence: EVIDENCE,
    });
    expect([forbidden.isError, textOf(forbidden)]).toEqual([
      true,
      expect.stringMatching(/Tool record_verdict not found/),
    ]);
    expect(textOf(await callTool(player, 'check_test_integrity', task))).toMatch(
      /Tool check_test_integrity not found/,
    );

    dataOf(
      await callTool(player, 'record_player_report', {
        ...task,
        turn: 1,
        report: { tests_passed: true },
      }),
    );
    const run = dataOf(await callTool(player, 'run_independent_tests', task));
    expect(run.status).toBe('passed');
    expect(run.env.notes).toContain(
      'not stored: runs requested through the player role are never evidence',
    );
    expect(existsSync(path.join(repo.dir, '.guardkit/autobuild/TASK-042/runs'))).toBe(false);

    // The coach cannot approve on the Player's run: there is no stored run until the coach runs the tests.
    const coach = await serverFor({ role: 'coach' });
    const refused = await callTool(coach, 'record_verdict', {
      ...task,
      turn: 1,
      decision: 'approve',
      rationale: 'ok',
      evidence: EVIDENCE,
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/run_independent_tests/);
    dataOf(await callTool(coach, 'run_independent_tests', task));
    const approved = dataOf(
      await callTool(coach, 'record_verdict', {
        ...task,
        turn: 1,
        decision: 'approve',
        rationale: 'ok',
        evidence: EVIDENCE,
      }),
    );
    expect(approved.status).toBe('approved');
    expect(dataOf(await callTool(player, 'task_status', task)).status).toBe('approved');
  });

  it('the coach role lists the verifying tools and record_verdict, never the Player report', async () => {
    repo = greetingProject();
    const coach = await serverFor({ role: 'coach' });
    expect((await coach.listTools()).tools.map((tool) => tool.name)).toEqual(COACH_TOOLS);
    const report = await callTool(coach, 'record_player_report', {
      worktree: repo.dir,
      task_id: 'TASK-042',
      turn: 1,
      report: {},
    });
    expect([report.isError, textOf(report)]).toEqual([
      true,
      expect.stringMatching(/Tool record_player_report not found/),
    ]);
    expect((await coach.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
      'coach',
      'validator',
      'issue-verifier',
      'autobuild',
    ]);
    const player = await serverFor({ role: 'player' });
    expect((await player.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['player']);
    const all = await serverFor({});
    expect((await all.listTools()).tools.map((tool) => tool.name)).toEqual(
      tools.map((tool) => tool.name),
    );
  });

  it('--toolsets and --read-only narrow the tools, combined with the role', async () => {
    repo = greetingProject();
    const readOnly = await serverFor({ readOnly: true });
    const listed = (await readOnly.listTools()).tools;
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true);
    expect(listed.map((tool) => tool.name)).not.toContain('run_independent_tests');
    const verify = await serverFor({ toolsets: ['verify', 'verdict'] });
    expect((await verify.listTools()).tools.map((tool) => tool.name)).toEqual([
      'verify_quality_gates',
      'run_independent_tests',
      'check_test_integrity',
      'validate_requirements',
      'record_verdict',
      'detect_stall',
    ]);
    const names = (options: Parameters<typeof selectTools>[0]) =>
      selectTools(options).map((tool) => tool.name);
    expect(names({ role: 'player', toolsets: ['verify', 'verdict'] })).toEqual([
      'run_independent_tests',
    ]);
    expect(names({ role: 'coach', readOnly: true })).not.toContain('record_verdict');
  });

  it('coachgate serve --role player over stdio; bad role or toolset is a usage error', async () => {
    repo = greetingProject();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, 'serve', '--role', 'player', '--root', repo.dir],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'roles-test', version: '0' });
    await client.connect(transport);
    closers.push(() => client.close());
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(PLAYER_TOOLS);
    const badRole = spawnSync(process.execPath, [cli, 'serve', '--role', 'judge'], {
      encoding: 'utf8',
    });
    expect(badRole.status).toBe(2);
    expect(badRole.stderr).toMatch(/--role must be one of player, coach, all/);
    const badToolset = spawnSync(
      process.execPath,
      [cli, 'serve', '--toolsets', 'verify,everything'],
      { encoding: 'utf8' },
    );
    expect(badToolset.status).toBe(2);
    expect(badToolset.stderr).toMatch(/unknown toolset "everything"/);
    const misplaced = spawnSync(
      process.execPath,
      [cli, 'gate', '--task', 'TASK-042', '--role', 'coach'],
      { encoding: 'utf8' },
    );
    expect([misplaced.status, misplaced.stderr]).toEqual([
      2,
      expect.stringMatching(/Unknown option '--role'/),
    ]);
  });
});
