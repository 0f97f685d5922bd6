/** One finding of the replay outside the harness, as the guard reads it (src/observation/judge.ts). */
export interface ObservationFinding {
  kind: 'differs_outside_tests' | 'depends_on_call_history';
  function: string;
  test: string;
  arguments: string;
  in_tests: string;
  outside: string;
  again?: string;
  calls: number;
}

/** The refusal a finding makes: the test, the function, the arguments, both answers, the way out. */
export function observationReason(finding: ObservationFinding): string {
  const call = `${finding.function}${clip(finding.arguments)}`;
  const more = finding.calls > 1 ? ` (${finding.calls} recorded calls of it showed it)` : '';
  if (finding.kind === 'depends_on_call_history')
    return `depends_on_call_history: ${call}, called by ${finding.test}, answered ${clip(finding.outside)} and then ${clip(finding.again ?? '')} when called twice in a row outside the tests (the test saw ${clip(finding.in_tests)})${more}: the same call gives another answer depending on the calls before it. Fix: make the answer depend on the arguments only; if the task asks for that state (an id counter, a seeded generator), acknowledge it in record_verdict acknowledged_changes [{"test": "${finding.function}", "criterion": "AC-…", "reason": "…"}].`;
  return `differs_outside_tests: ${call}, called by ${finding.test}, returned ${clip(finding.in_tests)} in the test but ${clip(finding.outside)} when the same calls were replayed in a fresh process with no test runner${more}: the product behaves differently when a test is watching. Fix: remove whatever looks at the runner, the call stack or the environment of the tests.`;
}

function clip(text: string): string {
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** A test that passed in the trusted run and failed when run again in its process. */
export interface RepetitionFinding {
  test: string;
  /** The repetition's failure, as pytest reported it. */
  message?: string;
  /** Set when it failed in another order: from the session's start, the repeated tests reversed. */
  order?: 'reversed';
  /** A function the test called whose replay showed it depends on call history: that explains it. */
  explained_by?: string;
}

/** The refusal a repetition makes: the test, how it failed the second time, the way out. */
export function repetitionReason(finding: RepetitionFinding): string {
  const shown = finding.message ? `: ${clip(finding.message.replace(/\s+/g, ' '))}` : '';
  if (finding.order)
    return `fails_in_other_order: ${finding.test} passed in the trusted run, then failed when the tests that may show your change ran once more from the session's start in reverse order${shown}. It passes only after what the tests before it did (a call they made first, a counter they moved). Fix: make the code's answers depend on its inputs only; if the task asks for that state, acknowledge it in record_verdict acknowledged_changes [{"test": "${finding.test}", "criterion": "AC-…", "reason": "…"}].`;
  return `fails_when_repeated: ${finding.test} passed in the trusted run, then failed when run a second time in the same process${shown}. The code it exercises answers differently once it has been called (a counter, a first-call toggle): the test passes only as the first of its kind. Fix: make the code's answers depend on its inputs only; if the task asks for that state (an id counter, a seeded generator), acknowledge it in record_verdict acknowledged_changes [{"test": "${finding.test}", "criterion": "AC-…", "reason": "…"}].`;
}
