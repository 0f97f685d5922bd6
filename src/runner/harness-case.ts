/**
 * The case a changed test harness becomes, in every runner's guard: an error no test id can hide.
 */
export const HARNESS_CHANGED = 'coachgate: test harness changed';

/** What the case says when a Python run's harness was replaced: the names, and the test it ran. */
export function harnessReplacedMessage(testId: string, changed: readonly string[]): string {
  return (
    `replaced while ${testId} ran (by the code under test or the tests): ${changed.join(', ')}. ` +
    'The assertions and builtins that judge the tests must stay as they are.'
  );
}

/** A call that ended the test process, as coachgate's reporter saw it (src/runner/process-end-watch.ts). */
export interface ProcessEnd {
  call: string;
  /** The nearest frame of the project that made the call, relative to the run's directory. */
  file: string | null;
  line: number | null;
  /** The test that was running, if one was. */
  nodeid: string | null;
}

/**
 * The error case an ended process becomes: named by where it was ended, so a refusal listing the
 * run's failures names the file and line. Whatever status the process exited with, the tests after
 * it never reached a verdict.
 */
export function processEndedCase(end: ProcessEnd): { id: string; message: string } {
  const where = end.file ? `${end.file}:${end.line ?? '?'}` : OUTSIDE_PROJECT;
  return endedCase(end.call, where, end.nodeid ?? 'no test');
}

/** Where a call made from no file of the project ended the process. */
export const OUTSIDE_PROJECT = 'code outside the project';

/** The case's words, for the reporters that write it themselves (unittest's JUnit report). */
export function endedCase(
  call: string,
  where: string,
  test: string,
): { id: string; message: string } {
  return {
    id: `coachgate: process ended at ${where}`,
    message:
      `${call} at ${where} ended the test process while ${test} ran: the tests after it never ` +
      'reached a verdict, whatever the exit status said. The code under test must return or ' +
      'raise to its caller, not end the process.',
  };
}
