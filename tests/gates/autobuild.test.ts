import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { GOOD_GREET, GREET_TASK } from '../helpers/node-project.js';
import { scriptedAgents } from '../helpers/scripted-agents.js';
import { CLI as cli } from '../helpers/cli.js';

const agents = scriptedAgents();
let repo: TempRepo;
afterEach(() => repo?.remove());

function project(config = ''): TempRepo {
  return makeRepo({
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
    '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK,
    ...(config ? { '.guardkit/config.yaml': config } : {}),
  });
}
const autobuild = (...args: string[]) =>
  spawnSync(
    process.execPath,
    [cli, 'autobuild', '--task', 'TASK-042', '--worktree', repo.dir, ...args],
    { encoding: 'utf8', timeout: 120_000 },
  );

describe('coachgate autobuild drives the loop with any agent command', () => {
  it('reaches approval on turn 2 and merges with --auto-merge', () => {
    repo = project();
    const result = autobuild(
      '--player-cmd',
      agents.player(2),
      '--coach-cmd',
      agents.coach(),
      '--auto-merge',
    );
    expect(result.stdout).toMatch(
      /── Turn 1\/5 ──\n {2}Player: 2 file\(s\), tests passing \(its own claim\)\n {2}Coach: {2}feedback \(1 must_fix\) → in_progress, strikes 1\/3\n {10}- src\/greet\.js:3: greet\(name\) must return "Hello, <name>!"\n── Turn 2\/5 ──[\s\S]*Coach: {2}approve → approved/,
    );
    expect(result.stdout).toMatch(
      /AutoBuild APPROVED after 2 turn\(s\): approved and merged into main/,
    );
    expect(result.status).toBe(0);
    expect(readFileSync(path.join(repo.dir, 'src/greet.js'), 'utf8')).toBe(GOOD_GREET);
    expect(existsSync(path.join(repo.dir, '.guardkit/worktrees/TASK-042'))).toBe(false);
  }, 120_000);

  it('stops blocked by strikes, blocked by a stall, and at max turns, preserving the worktree each time', () => {
    repo = project('coachgate:\n  max_strikes: 2\n');
    const strikes = autobuild(
      '--player-cmd',
      agents.player(99, true),
      '--coach-cmd',
      agents.coach(),
    );
    expect(strikes.stdout).toMatch(
      /AutoBuild BLOCKED after 2 turn\(s\): 2 feedback verdicts reached max_strikes \(2\); worktree preserved/,
    );
    expect(strikes.status).toBe(1);
    expect(repo.git('log', '-1', '--format=%s', 'autobuild/TASK-042')).toMatch(
      /TASK-042: preserved by coachgate/,
    );
    repo.remove();

    repo = project('coachgate:\n  max_strikes: 10\n  stall_threshold: 2\n');
    const stall = autobuild('--player-cmd', agents.player(99), '--coach-cmd', agents.coach());
    expect(stall.stdout).toMatch(/AutoBuild BLOCKED after 2 turn\(s\): loop stalled: /);
    expect(stall.status).toBe(1);
    repo.remove();

    repo = project('coachgate:\n  max_strikes: 10\n  stall_threshold: 50\n');
    const capped = autobuild(
      '--player-cmd',
      agents.player(99, true),
      '--coach-cmd',
      agents.coach(),
      '--max-turns',
      '2',
    );
    expect(capped.stdout).toMatch(
      /AutoBuild MAX_TURNS after 2 turn\(s\): 2 turns without approval/,
    );
    expect(capped.status).toBe(3);
    const status = spawnSync(
      process.execPath,
      [cli, 'autobuild', 'status', '--task', 'TASK-042', '--worktree', repo.dir],
      { encoding: 'utf8' },
    );
    expect(status.stdout).toMatch(
      /^TASK-042 Greeting: in_progress, strikes 2\/10\n {2}Turn 1: Player 2 file\(s\)[^\n]*\| Coach feedback \(1 must_fix\)\n {2}Turn 2:/,
    );
  }, 240_000);

  it('reports a refused approval, feeds its reasons to the next Player and counts it as a strike', () => {
    repo = project('coachgate:\n  max_strikes: 2\n');
    const rubberStamp = agents.coach({ rubberStamp: true });
    const blocked = autobuild('--player-cmd', agents.player(99, true), '--coach-cmd', rubberStamp);
    expect(blocked.stdout).toMatch(
      /── Turn 1\/5 ──\n {2}Player: [^\n]*\n {2}Coach: {2}approved → approval refused by the server:\n {10}- latest test run [^\n]*has status "failed"[^\n]*\n(?: {10}- [^\n]*\n)* {10}the refusal is recorded as feedback for the next Player turn\n {2}Coach: {2}feedback \(\d+ must_fix\) → in_progress, strikes 1\/2\n── Turn 2\/5 ──/,
    );
    expect(blocked.stdout).toMatch(
      /AutoBuild BLOCKED after 2 turn\(s\): 2 feedback verdicts reached max_strikes \(2\)/,
    );
    expect(blocked.status).toBe(1);
    const worktree = path.join(repo.dir, '.guardkit/worktrees/TASK-042');
    const prompt = readFileSync(
      path.join(worktree, '.guardkit/autobuild/TASK-042/driver/player_turn_2.prompt.md'),
      'utf8',
    );
    expect(prompt).toMatch(/## Latest Coach feedback[\s\S]*has status "failed"/);
    const status = spawnSync(
      process.execPath,
      [cli, 'autobuild', 'status', '--task', 'TASK-042', '--worktree', repo.dir],
      { encoding: 'utf8' },
    );
    expect(status.stdout).toMatch(
      /^TASK-042 Greeting: blocked \([^\n]*\), strikes 2\/2\n {2}Turn 1: Player [^\n]*\| Coach approval refused, then feedback \(\d+ must_fix\)\n {4}refused: latest test run [^\n]*"failed"/,
    );
    repo.remove();

    // The Player fixes the code on turn 2: the same rubber stamp is accepted now, and the loop ends well.
    repo = project();
    const approved = autobuild(
      '--player-cmd',
      agents.player(2),
      '--coach-cmd',
      rubberStamp,
      '--auto-merge',
    );
    expect(approved.stdout).toMatch(
      /Turn 1\/5[\s\S]*approval refused[\s\S]*strikes 1\/3\n── Turn 2/,
    );
    expect(approved.stdout).toMatch(/AutoBuild APPROVED after 2 turn\(s\): approved and merged/);
    expect(approved.status).toBe(0);
  }, 240_000);

  it("runs the plan's validators before the Coach and retries the Player with their findings", () => {
    repo = project();
    repo.write(
      'plan.yaml',
      'meta:\n  validation:\n    enabled: true\n    run_after: task\n    validators: [validator, issue-verifier]\n    max_validation_attempts: 2\n',
    );
    const plan = path.join(repo.dir, 'plan.yaml');
    const validated = autobuild(
      '--player-cmd',
      agents.player(1),
      '--coach-cmd',
      agents.coach(),
      '--plan',
      plan,
      '--validator-cmd',
      agents.validator('fail-once'),
    );
    expect(validated.stdout).toMatch(
      /── Turn 1\/5 ──\n {2}Player: [^\n]*\n {2}Validate: FAIL: validator FAIL \(1 finding\(s\)\), issue-verifier FAIL \(1 finding\(s\)\)\n {10}attempt 1\/2 failed: the findings go to the next Player turn\n── Turn 2\/5 ──\n {2}Player: [^\n]*\n {2}Validate: PASS: validator PASS \(0 finding\(s\)\), issue-verifier PASS \(0 finding\(s\)\)\n {2}Coach: {2}approve → approved/,
    );
    expect(validated.stdout).toMatch(/AutoBuild APPROVED after 2 turn\(s\): approved; merge with/);
    expect(validated.status).toBe(0);
    // Each validator got its own instructions; the Player's next prompt carried their findings.
    const driver = path.join(
      repo.dir,
      '.guardkit/worktrees/TASK-042/.guardkit/autobuild/TASK-042/driver',
    );
    const logs = ['validator', 'issue-verifier'].map((role) =>
      readFileSync(path.join(driver, `${role}_turn_1.log`), 'utf8'),
    );
    expect(logs.join('')).not.toMatch(/WITHOUT instructions/);
    expect(readFileSync(path.join(driver, 'player_turn_2.prompt.md'), 'utf8')).toMatch(
      /## PREVIOUS VALIDATION FAILED[\s\S]*src\/greet\.js:1 — validator: greet\(\) has no doc comment[\s\S]*issue-verifier: greet\(\) has no doc comment/,
    );
    repo.remove();

    repo = project();
    repo.write(
      'plan.yaml',
      'meta:\n  validation:\n    enabled: true\n    max_validation_attempts: 2\n',
    );
    const failing = autobuild(
      '--player-cmd',
      agents.player(1),
      '--coach-cmd',
      agents.coach(),
      '--plan',
      path.join(repo.dir, 'plan.yaml'),
      '--validator-cmd',
      agents.validator('fail-always'),
    );
    expect(failing.stdout).toMatch(
      /AutoBuild VALIDATION_FAILED after 2 turn\(s\): validation failed 2 time\(s\), max_validation_attempts 2/,
    );
    expect(failing.stdout).not.toMatch(/Coach:/);
    expect(failing.status).toBe(6);
    const status = spawnSync(
      process.execPath,
      [cli, 'autobuild', 'status', '--task', 'TASK-042', '--worktree', repo.dir],
      { encoding: 'utf8' },
    );
    expect(status.stdout).toMatch(
      /Turn 1: Player [^\n]*\| Coach not run \(validation failed\)\n {4}validation: FAIL: validator FAIL \(1 finding\(s\)\)/,
    );
    const missing = autobuild(
      '--player-cmd',
      agents.player(1),
      '--coach-cmd',
      agents.coach(),
      '--plan',
      path.join(repo.dir, 'plan.yaml'),
    );
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/enables validation \(validator\), but no --validator-cmd/);
  }, 240_000);

  it('resumes after kill -9 in the middle of a Coach turn, from the records', async () => {
    repo = project();
    const hangFile = path.join(repo.dir, '..', `${path.basename(repo.dir)}-hang`);
    writeFileSync(hangFile, '');
    const driver = spawn(
      process.execPath,
      [
        cli,
        'autobuild',
        '--task',
        'TASK-042',
        '--worktree',
        repo.dir,
        '--player-cmd',
        agents.player(1),
        '--coach-cmd',
        agents.coach({ hangFile }),
        '--auto-merge',
      ],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 60_000;
    while (!existsSync(`${hangFile}.pid`) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    driver.kill('SIGKILL');
    // The hung Coach outlives its killed driver (its own process group): kill it as a crash would.
    process.kill(Number(readFileSync(`${hangFile}.pid`, 'utf8')), 'SIGKILL');
    const resumed = autobuild('resume');
    expect(resumed.stdout).toMatch(
      /^Resuming TASK-042[\s\S]*── Turn 1\/5 ──\n {2}Player: 2 file\(s\)[\s\S]*Coach: {2}approve → approved/,
    );
    expect(resumed.stdout).not.toMatch(/player turn/);
    expect(resumed.status).toBe(0);
    expect(readFileSync(path.join(repo.dir, 'src/greet.js'), 'utf8')).toBe(GOOD_GREET);
  }, 120_000);

  it('runs a feature wave by wave, each task merged before the next starts', () => {
    repo = project();
    repo.write('.guardkit/tasks/backlog/TASK-043.md', GREET_TASK.replace('TASK-042', 'TASK-043'));
    repo.write(
      '.guardkit/features/FEAT-7.yaml',
      'id: FEAT-7\ntasks:\n  - id: TASK-043\n    dependencies: [TASK-042]\n  - id: TASK-042\n    dependencies: []\n',
    );
    repo.commit('feature');
    const args = ['--player-cmd', agents.player(1), '--coach-cmd', agents.coach()];
    const refused = spawnSync(
      process.execPath,
      [cli, 'autobuild', 'feature', 'FEAT-7', '--worktree', repo.dir, ...args],
      { encoding: 'utf8' },
    );
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/FEAT-7 has 2 waves[\s\S]*--auto-merge/);
    const result = spawnSync(
      process.execPath,
      [cli, 'autobuild', 'feature', 'FEAT-7', '--worktree', repo.dir, ...args, '--auto-merge'],
      { encoding: 'utf8', timeout: 120_000 },
    );
    // Wave 2 starts only after TASK-042 is merged. TASK-043 asks for the same greeting, which the base now
    // has: its Player changes nothing, so no test fails on the base code and every approval is refused
    // (fail-to-pass); the refusals count as strikes, TASK-043 ends blocked and the feature stops there.
    expect(result.stdout).toMatch(
      /══ FEAT-7 wave 1\/2: TASK-042 ══[\s\S]*TASK-042: APPROVED[\s\S]*══ FEAT-7 wave 2\/2: TASK-043 ══/,
    );
    expect(result.stdout).toMatch(
      /AutoBuild feature FEAT-7: 1 task\(s\) approved, stopped at TASK-043 \(blocked\)/,
    );
    expect(result.status).not.toBe(0);
    expect(repo.git('log', '--format=%s', '--merges')).toBe(
      'Merge autobuild/TASK-042: TASK-042 approved by coachgate',
    );
  }, 120_000);
});
