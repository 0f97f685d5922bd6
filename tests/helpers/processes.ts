import { execFileSync } from 'node:child_process';

/** Processes on this machine whose arguments contain `marker` (pids inside a sandbox are its own). */
export function processesWith(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}
