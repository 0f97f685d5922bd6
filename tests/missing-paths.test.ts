import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from './helpers/cli.js';

let scratch: string;
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/** Every command that takes a repository, given one that does not exist. */
const COMMANDS: string[][] = [
  ['task', 'new', '--title', 'T', '--criterion', 'c'],
  ['task', 'pin-base', '--task', 'TASK-1', '--base', 'HEAD'],
  ['worktree', 'start', '--task', 'TASK-1'],
  ['worktree', 'finish', '--task', 'TASK-1', '--auto-merge'],
  ['worktree', 'preserve', '--task', 'TASK-1'],
  ['init'],
  ['gate', '--task', 'TASK-1'],
  ['autobuild', '--task', 'TASK-1', '--player-cmd', 'true', '--coach-cmd', 'true'],
  ['autobuild', 'status', '--task', 'TASK-1'],
  ['autobuild', 'resume', '--task', 'TASK-1'],
];

describe('a repository path that does not exist', () => {
  it('is refused by every command as missing, before anything is written', () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-missing-'));
    const missing = path.join(scratch, 'no', 'such');
    const state = path.join(scratch, 'state');
    for (const command of COMMANDS) {
      const done = spawnSync(process.execPath, [CLI, ...command, '--worktree', missing], {
        encoding: 'utf8',
        env: { ...process.env, COACHGATE_STATE_DIR: state },
      });
      const shown = command.join(' ');
      expect(done.status, `${shown}: ${done.stdout}${done.stderr}`).toBe(2);
      expect(done.stderr, shown).toBe(
        `coachgate ${command[0]}: ${missing} does not exist. Pass the root of an existing git repository or git worktree.\n`,
      );
      expect(existsSync(path.join(scratch, 'no')), shown).toBe(false);
    }
    expect(readdirSync(scratch)).toEqual([]);
  });
});
