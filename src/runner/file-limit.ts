import type { TestCommand } from './detect.js';

/**
 * The arguments that limit a run of `command` to the given test files (relative to the project), or
 * undefined when the runner cannot be limited safely and the whole suite runs: pytest, vitest, jest
 * and node's test runner. A package script qualifies when it is a single invocation of its runner:
 * arguments appended through the package manager reach that runner (as coachgate's reporter
 * arguments do) and nothing else in the script runs tests of its own. Node's test ids do not name
 * the file; the caller decides where that matters (src/evaluation/trusted-runs.ts).
 */
export function fileLimitArguments(
  command: TestCommand,
): ((files: string[]) => string[]) | undefined {
  if (command.argv && (command.runner === 'pytest' || command.runner === 'node-test'))
    // `./` keeps a file name from being read as an option (node reads it as a path or a glob).
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
