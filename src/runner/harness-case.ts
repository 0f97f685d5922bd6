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
