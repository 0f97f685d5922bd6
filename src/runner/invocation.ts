import path from 'node:path';
import type { TestCommand } from './detect.js';
import type { RunEnvironment } from './environment.js';
import { commandShellArgv, defaultPython, loginShellArgv, shellLabel } from './platform.js';

/**
 * The argv actually run: the detected command plus the flags that make the runner write a machine-readable
 * report outside the worktree, wrapped in `sh -c` (Windows: `cmd /c`) or the user's login shell when the command or config asks for a shell.
 */
export function buildInvocation(command: TestCommand, environment: RunEnvironment, reportDirectory: string, loginShell: boolean): { argv: string[]; shell: RunEnvironment['shell'] } {
  const junit = path.join(reportDirectory, 'junit.xml');
  let argv: string[] | undefined;
  if (command.argv) {
    const [program, ...rest] = command.argv;
    switch (command.runner) {
      case 'pytest':
        // `python -m pytest` with the project's interpreter: a PATH lookup of `pytest` can find another install.
        argv = [environment.interpreter ?? defaultPython(), '-m', 'pytest', ...rest, `--junitxml=${junit}`, '-o', 'junit_family=xunit2', '-p', 'no:cacheprovider'];
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
  if (loginShell) return shellInvocation(loginShellArgv(command.shellCommand ?? argv!.map(shellQuote).join(' ')));
  if (command.shellCommand !== undefined) return shellInvocation(commandShellArgv(command.shellCommand));
  return { argv: argv!, shell: 'none' };
}

function shellInvocation(argv: string[]): { argv: string[]; shell: RunEnvironment['shell'] } {
  return { argv, shell: shellLabel(argv) };
}

/** Single-quotes one word for a POSIX shell. */
function shellQuote(word: string): string {
  return /^[\w./=:@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
