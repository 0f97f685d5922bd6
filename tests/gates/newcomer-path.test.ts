import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { callTool, dataOf, textOf } from '../helpers/mcp.js';
import { BAD_GREET, GOOD_GREET, GREET_EVIDENCE, GREET_TESTS } from '../helpers/node-project.js';

const TASK = 'TASK-001';
const FILES = ['src/greet.js', 'test/greet.test.js'];

let repo: TempRepo | undefined;
const scratch: string[] = [];
afterEach(() => {
  repo?.remove();
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

/** What `npm install -g .` leaves: a `coachgate` link to the bin first on PATH. */
function installed(): NodeJS.ProcessEnv {
  const bin = tempDir('coachgate-bin-');
  symlinkSync(CLI, path.join(bin, 'coachgate'));
  return { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` };
}

/** A step as typed in a terminal; it must succeed and print no stack trace. */
function step(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): string {
  const done = spawnSync('coachgate', args, { cwd, env, encoding: 'utf8' });
  const printed = `${done.stdout}${done.stderr}`;
  expect(done.status, `coachgate ${args.join(' ')}:\n${printed}`).toBe(0);
  expect(printed).not.toMatch(/^\s+at \S+ \(|Error:|undefined|\bnull\b/m);
  return done.stdout;
}

/** A server as Claude Code starts it from the .mcp.json `init` wrote, in the repository. */
async function serverFromMcpJson(root: string, name: string, env: NodeJS.ProcessEnv) {
  const entry = JSON.parse(readFileSync(path.join(root, '.mcp.json'), 'utf8')).mcpServers[name];
  const client = new Client({ name: `claude-code-${name}`, version: '0.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      cwd: root,
      env: { ...(env as Record<string, string>), ...entry.env },
      stderr: 'ignore',
    }),
  );
  return client;
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  callTool(client, name, args);

describe("the newcomer's path, as the README walks it", () => {
  it('install, init, a refused turn, feedback, a fixed turn, gate, finish, gate on a fresh clone', async () => {
    const env = installed();
    repo = makeRepo({
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
      'README.md': '# greeting\n',
    });
    const root = repo.dir;
    expect(step(root, env, 'init')).toContain('registered server coachgate-coach in .mcp.json');
    // As init says: commit what it wrote (the server reads the config from the base commit).
    repo.git('add', '.mcp.json', '.claude/agents', '.guardkit/config.yaml');
    repo.git('commit', '-q', '-m', 'coachgate init');
    step(
      root,
      env,
      ...['task', 'new', '--title', 'Greeting'],
      ...['--criterion', 'greet(name) returns "Hello, <name>!"'],
      ...['--criterion', 'greet rejects an empty name with a TypeError'],
    );
    step(root, env, 'worktree', 'start', '--task', TASK);
    const worktree = path.join(root, '.guardkit/worktrees', TASK);
    const task = { worktree, task_id: TASK };

    const player = await serverFromMcpJson(root, 'coachgate-player', env);
    const coach = await serverFromMcpJson(root, 'coachgate-coach', env);
    try {
      // Turn 1: the Player's bug. The server's own run fails; the approval is refused, feedback sent.
      repo.write(`.guardkit/worktrees/${TASK}/src/greet.js`, BAD_GREET);
      repo.write(`.guardkit/worktrees/${TASK}/test/greet.test.js`, GREET_TESTS);
      const report = (turn: number) =>
        call(player, 'record_player_report', {
          ...task,
          turn,
          report: { tests_passed: true, files_created: FILES },
        });
      dataOf(await report(1));
      expect(dataOf(await call(coach, 'run_independent_tests', task)).status).toBe('failed');
      const approve = (turn: number) =>
        call(coach, 'record_verdict', {
          ...task,
          turn,
          decision: 'approve',
          rationale: 'verified',
          evidence: GREET_EVIDENCE,
        });
      const refused = await approve(1);
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/has status "failed"/);
      const feedback = await call(coach, 'record_verdict', {
        ...task,
        turn: 1,
        decision: 'feedback',
        rationale: "The server's run fails: greet says Hi.",
        issues: [
          {
            severity: 'must_fix',
            category: 'correctness',
            description: 'AC-001: greet must return "Hello, <name>!"',
          },
        ],
      });
      expect(dataOf(feedback)).toMatchObject({ status: 'in_progress', strikes: 1 });
      // Gated now, the task fails and says why, in the box, its rows and its status alike.
      const early = spawnSync('coachgate', ['gate', '--task', TASK, '--format', 'json'], {
        cwd: worktree,
        env,
        encoding: 'utf8',
      });
      expect(early.status).toBe(1);
      expect(JSON.parse(early.stdout)).toMatchObject({ passed: false, status: 'in_progress' });
      // The Player's next turn starts from the feedback.
      const prompt = await player.getPrompt({ name: 'player', arguments: { task_id: TASK } });
      expect(JSON.stringify(prompt.messages)).toContain('greet must return');

      // Turn 2: the fix, approved.
      repo.write(`.guardkit/worktrees/${TASK}/src/greet.js`, GOOD_GREET);
      dataOf(await report(2));
      expect(dataOf(await call(coach, 'run_independent_tests', task)).status).toBe('passed');
      expect(dataOf(await approve(2)).status).toBe('approved');
    } finally {
      await player.close();
      await coach.close();
    }

    expect(step(worktree, env, 'gate', '--task', TASK)).toMatch(/COACH GATE: PASSED/);
    const finished = step(root, env, 'worktree', 'finish', '--task', TASK, '--auto-merge');
    expect(finished).toMatch(/merged/);
    // The records and the Coach's key, committed as finish and the README say.
    const key = step(root, env, 'key', 'show').trim();
    const config = readFileSync(path.join(root, '.guardkit/config.yaml'), 'utf8');
    repo.write(
      '.guardkit/config.yaml',
      config.replace('coachgate:\n', `coachgate:\n  trusted_keys:\n    - "${key}"\n`),
    );
    repo.git('add', '.guardkit/autobuild', '.guardkit/config.yaml');
    repo.git('commit', '-q', '-m', `${TASK}: coachgate records and the trusted key`);
    expect(step(root, env, 'gate', '--task', TASK)).toMatch(/COACH GATE: PASSED/);

    // CI: a fresh clone, no state directory of its own, only the pinned key.
    const clone = path.join(tempDir('coachgate-ci-'), 'clone');
    spawnSync('git', ['clone', '-q', `file://${root}`, clone]);
    const ci = { ...env, COACHGATE_STATE_DIR: `${clone}-state` };
    const gate = JSON.parse(step(clone, ci, 'gate', '--task', TASK, '--format', 'json'));
    expect(gate).toMatchObject({ passed: true, status: 'merged_approved' });
    expect(gate.rows.filter((row: { state: string }) => row.state === 'fail')).toEqual([]);
    expect(step(clone, ci, 'gate', '--task', TASK)).toMatch(/COACH GATE: PASSED/);
  }, 300_000);
});
