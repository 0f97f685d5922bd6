import path from 'node:path';
import type { TestCommand } from './detect.js';
import type { RunEnvironment } from './environment.js';

/**
 * The argv actually run: the detected command plus the flags that make the runner write a machine-readable
 * report outside the worktree, wrapped in `sh -c` or `bash -lc` when the command or config asks for a shell.
 */
export function buildInvocation(command: TestCommand, environment: RunEnvironment, reportDirectory: string, loginShell: boolean): { argv: string[]; shell: RunEnvironment['shell'] } {
  const junit = path.join(reportDirectory, 'junit.xml');
  let argv: string[] | undefined;
  if (command.argv) {
    const [program, ...rest] = command.argv;
    switch (command.runner) {
      case 'pytest':
        // `python -m pytest` with the project's interpreter: a PATH lookup of `pytest` can find another install.
        argv = [environment.interpreter ?? 'python3', '-m', 'pytest', ...rest, `--junitxml=${junit}`, '-o', 'junit_family=xunit2', '-p', 'no:cacheprovider'];
        break;
      case 'node-test':
        argv = [program!, '--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=junit', `--test-reporter-destination=${junit}`, ...rest];
        break;
      case 'vitest':
        argv = [program!, ...rest, '--reporter=default', '--reporter=junit', `--outputFile.junit=${junit}`];
        break;
      default:
        argv = command.argv;
    }
  }
  if (loginShell) return { argv: ['bash', '-lc', command.shellCommand ?? argv!.map(shellQuote).join(' ')], shell: 'bash -lc' };
  if (command.shellCommand !== undefined) return { argv: ['sh', '-c', command.shellCommand], shell: 'sh -c' };
  return { argv: argv!, shell: 'none' };
}

/** Single-quotes one word for a POSIX shell. */
function shellQuote(word: string): string {
  return /^[\w./=:@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
