import { isTestSideFile } from '../scope/test-paths.js';
import { chainCommands } from './chain.js';
import { processEndedCase, type ProcessEnd } from './harness-case.js';
import type { TestCommand } from './detect.js';
import type { ProcessOutcome } from './execute.js';
import { saysNoTests } from './outcome.js';
import { visibleLines } from './report/text.js';
import type { TestCaseResult } from './report/types.js';
import { stepFailureClass } from './step-failure.js';

/** How a run's one exit-status test was obtained (the run's `tests_source`). */
export const EXIT_STATUS_SOURCE =
  "the command's exit status: it printed no per-test result, so it is one test named by its command";

/** The shell's own statuses for a command that could not start: not found, not executable. */
const DID_NOT_START = new Set([126, 127]);

/**
 * A test command that prints no per-test result (a plain script, `make test`, a shell file) speaks by
 * its exit status: it is one test, named by its command as written, passed when it exits 0. The
 * trusted runs then apply PASS_TO_PASS and FAIL_TO_PASS to it like any other test, and a criterion can
 * cite it. Only for commands coachgate does not know as a runner, and only when the output has neither
 * a runner's counting lines nor its words that nothing ran: those are read as such. A failure the
 * output shows to be a lint, type-check or build step's (`run-s lint unit`, a Makefile's steps) is not
 * the tests': it stays a step failure, named as one. Status 0 after the code under test ended the
 * script early (`ended`, src/runner/script-end-watch.ts) is a failure naming where: the checks after
 * it never ran.
 */
export function exitStatusTest(
  command: TestCommand,
  outcome: Pick<ProcessOutcome, 'exit_code' | 'signal' | 'timed_out' | 'cancelled'>,
  output: string,
  ended: ProcessEnd[] = [],
): TestCaseResult | undefined {
  const id = commandName(command);
  const { exit_code: code } = outcome;
  if (!id || code === null || outcome.signal !== null || outcome.timed_out || outcome.cancelled)
    return undefined;
  if (saysNoTests(output)) return undefined;
  const early = ended.find((end) => end.file === null || !isTestSideFile(end.file));
  if (code === 0 && early)
    return { id, status: 'failed', message: processEndedCase({ ...early, nodeid: id }).message };
  if (code === 0) return { id, status: 'passed' };
  if (stepFailureClass(visibleLines(output), id)) return undefined;
  return DID_NOT_START.has(code)
    ? { id, status: 'error', message: `the command did not start (exit status ${code})` }
    : { id, status: 'failed', message: `exited with status ${code}` };
}

/**
 * The script a plain `node <file>` exit-status command runs, as written (relative to the run's
 * directory), so the node watch knows the process whose status is the verdict
 * (src/runner/node-watch.ts); undefined for any other command.
 */
export function exitStatusNodeScript(command: TestCommand): string | undefined {
  const words = commandName(command)?.split(/\s+/) ?? [];
  if (!/^(?:.*\/)?node(?:js)?$/.test(words[0] ?? '') || words.includes('--test')) return undefined;
  return words.slice(1).find((word) => !word.startsWith('-'));
}

/**
 * The command as the user wrote it, when it names no runner coachgate reads per test and is one
 * command: a chain's exit status does not say which step ended it (a failing lint step is named as
 * such by the failure classifier instead).
 */
function commandName(command: TestCommand): string | undefined {
  if (command.scriptRunner || command.chainStep) return undefined;
  const written =
    command.runner === 'npm'
      ? command.script
      : command.runner === 'custom'
        ? (command.shellCommand ?? command.argv?.join(' '))
        : undefined;
  const steps = written === undefined ? undefined : chainCommands(written);
  return steps?.length === 1 ? steps[0]!.text : undefined;
}
