import { execFileSync } from 'node:child_process';

/**
 * Whether a toolchain runs here (`cargo --version`, `go version`): the tests that need it skip
 * without it, and say so in their titles.
 */
export function runs(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
