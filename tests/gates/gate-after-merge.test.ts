import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MergeRecord } from '../../src/records/merge-record.js';
import { connect } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { runGate } from '../helpers/gate-cli.js';
import { approveGreeting, BAD_GREET, GOOD_GREET, GREET_TESTS } from '../helpers/node-project.js';
import { CLI as cli } from '../helpers/cli.js';

let repo: TempRepo;
const scratch: string[] = [];
afterEach(() => {
  repo?.remove();
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The built CLI in the main checkout, as a user types it (no terminal: stdin is a pipe). */
const coachgate = (...args: string[]) =>
  spawnSync(process.execPath, [cli, ...args, '--worktree', repo.dir], { encoding: 'utf8' });

/** The Player's work and the Coach's approval in the task worktree, through the server's tools. */
async function approveInWorktree(worktree: string): Promise<string> {
  repo.write('.guardkit/worktrees/TASK-001/src/greet.js', GOOD_GREET);
  repo.write('.guardkit/worktrees/TASK-001/test/greet.test.js', GREET_TESTS);
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    return await approveGreeting(client, worktree, 'TASK-001', [
      'src/greet.js',
      'test/greet.test.js',
    ]);
  } finally {
    await close();
  }
}

/** A CI job's checkout: a shallow clone of main. */
function shallowClone(): string {
  const ci = mkdtempSync(path.join(os.tmpdir(), 'coachgate-ci-'));
  scratch.push(ci);
  const clone = path.join(ci, 'clone');
  spawnSync('git', ['clone', '-q', '--depth', '1', `file://${repo.dir}`, clone]);
  return clone;
}

/** The gate as CI runs it: no state directory (so no local key), only the key pinned in the config. */
function gateInCi(clone: string, format = 'text'): SpawnSyncReturns<string> {
  return spawnSync(
    process.execPath,
    [cli, 'gate', '--task', 'TASK-001', '--worktree', clone, '--format', format],
    { encoding: 'utf8', env: { ...process.env, COACHGATE_STATE_DIR: `${clone}-state` } },
  );
}

describe('coachgate gate after worktree finish', () => {
  it('checks the approval against the merged approved tree: later commits pass, an approved file edited fails', async () => {
    repo = makeRepo({
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
      'README.md': '# greeting\n',
    });
    const created = coachgate(
      'task',
      'new',
      '--title',
      'Greeting',
      '--criterion',
      'greet(name) returns "Hello, <name>!"',
      '--criterion',
      'greet rejects an empty name with a TypeError',
    );
    expect(created.status, created.stderr).toBe(0);
    expect(coachgate('worktree', 'start', '--task', 'TASK-001').status).toBe(0);
    const worktree = path.join(repo.dir, '.guardkit/worktrees/TASK-001');
    expect(await approveInWorktree(worktree)).toBe('approved');
    expect(runGate(worktree, 'TASK-001').status).toBe(0);

    // main moves on while the task runs. Gated on main before the merge, the task fails: that base
    // moved for another reason than the task's merge, and main does not hold the approved code.
    repo.write('docs/notes.md', 'Notes written on main meanwhile.\n');
    repo.commit('notes on main');
    const beforeMerge = runGate(repo.dir, 'TASK-001');
    expect(beforeMerge.status).toBe(1);
    expect(beforeMerge.stdout).toMatch(/the base moved since the task was pinned/);
    expect(beforeMerge.stdout).toMatch(/the worktree changed after run/);

    // No terminal: finish refuses the merge, says why and how.
    const unconfirmed = coachgate('worktree', 'finish', '--task', 'TASK-001');
    expect(unconfirmed.status).toBe(1);
    expect(unconfirmed.stdout).toContain(
      'the merge was not confirmed (pass --auto-merge, or merge: true): there is no terminal to ask on.',
    );
    expect(unconfirmed.stdout).toContain(
      `without asking: coachgate worktree finish --task TASK-001 --worktree ${repo.dir} --auto-merge`,
    );

    const merged = coachgate('worktree', 'finish', '--task', 'TASK-001', '--auto-merge');
    expect(merged.status, merged.stdout + merged.stderr).toBe(0);
    // The records, committed as finish asks.
    repo.git('add', '.guardkit/autobuild/TASK-001');
    repo.git('commit', '-q', '-m', 'TASK-001: coachgate records');
    const mergeCommit = repo.git('rev-parse', 'HEAD^');

    const afterMerge = runGate(repo.dir, 'TASK-001');
    expect(afterMerge.stdout).toMatch(/^coachgate gate: TASK-001 PASS/);
    expect(afterMerge.stdout).toMatch(
      new RegExp(`tests: pass — .*approved tree, merged in ${mergeCommit.slice(0, 12)}`),
    );
    expect(afterMerge.stdout).toMatch(
      /after merge \w{12} into main: the 2 file\(s\) the task changed checked against the approved commit/,
    );
    expect(afterMerge.status).toBe(0);

    // A fresh clone without trusted_keys: the box says the key is not trusted and how to pin it.
    const untrusted = gateInCi(shallowClone(), 'box');
    expect(untrusted.status).toBe(1);
    expect(untrusted.stdout).toMatch(/COACH GATE: FAILED/);
    const flat = untrusted.stdout.replace(/(\s*║\s*)+/g, ' ');
    expect(flat).toMatch(/✗ Verdict +APPROVED .*not trusted here \(coachgate\.trusted_keys\)/);
    expect(flat).toContain(
      "which this checkout does not trust: pin the Coach's public key (`coachgate key show` where it signed) under coachgate.trusted_keys",
    );
    // The merge record is what cannot vouch, not a tree that was never meant to match the run's.
    expect(flat).toMatch(
      /merged\.json is signed by key \w+, which is not a trusted key, so it cannot vouch/,
    );
    expect(flat).not.toMatch(/the worktree changed after run/);

    // A later, unrelated commit: the README, and the coach's key pinned for CI.
    const key = spawnSync(process.execPath, [cli, 'key', 'show'], {
      encoding: 'utf8',
    }).stdout.trim();
    repo.write('.guardkit/config.yaml', `coachgate:\n  trusted_keys:\n    - "${key}"\n`);
    repo.write('README.md', '# greeting\n\nSays hello.\n');
    repo.commit('docs and the pinned key');
    const later = runGate(repo.dir, 'TASK-001');
    expect(later.stdout).toMatch(/^coachgate gate: TASK-001 PASS/);
    expect(later.status).toBe(0);

    const ci = gateInCi(shallowClone());
    expect(ci.stdout).toMatch(/^coachgate gate: TASK-001 PASS/);
    expect(ci.stdout).toMatch(/the worktree mirror alone/);
    expect(ci.status, ci.stderr).toBe(0);
    // Its rows and status agree with the verdict: what passed is what the gate checked.
    const json = JSON.parse(gateInCi(shallowClone(), 'json').stdout);
    expect(json).toMatchObject({ passed: true, status: 'merged_approved' });
    const rows = Object.fromEntries(
      json.rows.map((row: { label: string; state: string; detail: string }) => [row.label, row]),
    );
    expect(json.rows.filter((row: { state: string }) => row.state === 'fail')).toEqual([]);
    expect(rows.Verdict.detail).toMatch(/^APPROVED \(1 turn\(s\)/);
    expect(rows.Tests.detail).toMatch(
      /^passed: .*approved tree, merged in \w{12}; the 2 approved file\(s\) unchanged \(signed merged\.json\)/,
    );

    // An approved file changed on main: the approval does not describe it.
    repo.write('src/greet.js', BAD_GREET);
    repo.commit('reword the greeting');
    const edited = runGate(repo.dir, 'TASK-001');
    expect(edited.status).toBe(1);
    expect(edited.stdout).toMatch(
      /- src\/greet\.js: changed since TASK-001 was approved and merged \(approved commit \w{12}, merge \w{12}\): the approval does not describe this code/,
    );
    expect(edited.stdout).not.toMatch(/base moved/);
    const clone = shallowClone();
    expect(gateInCi(clone).stdout).toMatch(/- src\/greet\.js: changed since TASK-001/);
    // Nor can the record be made to agree: its signature no longer verifies.
    const recordFile = path.join(clone, '.guardkit/autobuild/TASK-001/merged.json');
    const record = JSON.parse(readFileSync(recordFile, 'utf8')) as MergeRecord;
    const greet = record.approved_files.find((file) => file.path === 'src/greet.js')!;
    greet.blob = repo.git('rev-parse', 'HEAD:src/greet.js');
    writeFileSync(recordFile, JSON.stringify(record, null, 2));
    const forged = gateInCi(clone);
    expect(forged.stdout).toMatch(
      /merged\.json has an invalid signature \(key \w+\): it was changed after signing or forged/,
    );
    expect(forged.status).toBe(1);
  });
});
