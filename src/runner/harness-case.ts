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

/** A passing comparison whose verdict a changed type decided (src/runner/equality-watch.ts). */
export interface PassedByType {
  /** The test that made it. */
  nodeid: string;
  /** `==` or `!=` (Python), or the assertion that compared (`deepStrictEqual`, node). */
  op: string;
  /** The class that decided it, `module.QualName`, and its file. */
  type: string;
  type_file: string;
  /** Where the comparison was made. */
  file: string;
  line: number;
  /** The operands as plain values. */
  left: string;
  right: string;
}

/**
 * What the case says when a comparison held only by the equality of a type the Player changed: the
 * operands, compared as the plain values they stand for, say otherwise. Any field may be a
 * placeholder: the unittest recorder fills the same words in Python.
 */
export function equalityByTypeMessage(passed: {
  [K in keyof PassedByType]: PassedByType[K] | string;
}): string {
  return (
    `${passed.nodeid} passed \`${passed.op}\` at ${passed.file}:${passed.line} only by the ` +
    `equality of ${passed.type} (${passed.type_file}), a type from a changed file: as plain ` +
    `values (builtin base, fields, data) the operands say otherwise: ${passed.left} vs ` +
    `${passed.right}. A type must compare the values it holds.`
  );
}

/** The same words as a Python %-template over the recorder's record. */
export const EQUALITY_MESSAGE_TEMPLATE = equalityByTypeMessage({
  nodeid: '%(nodeid)s',
  op: '%(op)s',
  type: '%(type)s',
  type_file: '%(type_file)s',
  file: '%(file)s',
  line: '%(line)s',
  left: '%(left)s',
  right: '%(right)s',
});
