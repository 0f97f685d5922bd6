import { spawnSync } from 'node:child_process';
import { CLI } from './cli.js';

/** `coachgate gate` as hooks and CI run it: the built CLI in a child process (state dir inherited). */
export function runGate(worktree: string, task: string, format: 'box' | 'text' | 'json' = 'text') {
  return spawnSync(
    process.execPath,
    [CLI, 'gate', '--task', task, '--worktree', worktree, '--format', format],
    { encoding: 'utf8' },
  );
}
