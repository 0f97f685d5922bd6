import type { TestCommand } from './detect.js';

/**
 * The arguments that limit a run of `command` to the given test files (relative to the project), or
 * undefined when the runner cannot be limited safely and the whole suite runs. Only runners whose
 * test ids start with the test file are limited, so a limited run's results can be told apart from
 * the rest of the suite's: pytest, vitest and jest. A package script qualifies when it is a single
 * invocation of its runner: arguments appended through the package manager reach that runner (as
 * coachgate's reporter arguments do) and nothing else in the script runs tests of its own.
 */
export function fileLimitArguments(
  command: TestCommand,
): ((files: string[]) => string[]) | undefined {
  if (command.argv && command.runner === 'pytest')
    // `./` keeps a file name from being read as an option.
    return (files) => files.map((file) => `./${file}`);
  const runner =
    command.runner === 'npm' && command.script !== undefined && isSingleCommand(command.script)
      ? command.scriptRunner
      : command.argv && command.runner === 'vitest'
        ? 'vitest'
        : undefined;
  // vitest reads each as a file-name filter; a filter can also match a longer path elsewhere,
  // which only adds tests the base's run has too.
  if (runner === 'vitest') return (files) => files.map((file) => `./${file}`);
  // jest reads positional arguments as regular expressions unless told they are paths.
  if (runner === 'jest') return (files) => ['--runTestsByPath', ...files];
  return undefined;
}

/** A script of one command (no `&&`, `||`, `;`, `&` or pipe): appended arguments reach its only program. */
function isSingleCommand(script: string): boolean {
  return !/[|;&]/.test(script);
}
